"""The page's geometry, the floor under the page readers (`tables`, `layout`,
`extract`): boxes in PDF points and the one set of measures every box test uses
(`boxes`), glyphs as pdfplumber gives them and which way they run (`glyphs`)."""

from __future__ import annotations

from rag_assets.core.page.boxes import (
    Box,
    area,
    box_iou,
    centred_in,
    covered,
    intersection,
    overlaps,
)
from rag_assets.core.page.glyphs import (
    SUPERSCRIPTS,
    UPRIGHT_TILT,
    Word,
    is_upright,
    runs_upward,
)

__all__ = [
    "SUPERSCRIPTS",
    "UPRIGHT_TILT",
    "Box",
    "Word",
    "area",
    "box_iou",
    "centred_in",
    "covered",
    "intersection",
    "is_upright",
    "overlaps",
    "runs_upward",
]
