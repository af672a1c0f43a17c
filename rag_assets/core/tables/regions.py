"""Where a page's tables are: the regions the readers read.

Ruled regions come from pdfplumber's table finder (rules joined into cells); boxes
proposed from outside (a layout model's, `proposals`) are added where no ruled region
already covers them, and read by alignment within their bounds. Tables set by alignment
elsewhere on the page are found by the aligned reader itself, as runs of lines of values
under a header (`aligned.aligned_tables`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rag_assets.core.page import Box, area, intersection
from rag_assets.core.tables.model import Region
from rag_assets.core.tables.settings import DEFAULT, TableSettings


def _white(color: Any, settings: TableSettings) -> bool:
    """Whether a fill colour is white (grey 1, RGB 1 1 1, CMYK 0 0 0 0, `white_level`)."""
    if isinstance(color, int | float):
        color = (color,)
    if not isinstance(color, tuple | list) or len(color) not in (1, 3, 4):
        return False
    if not all(isinstance(v, int | float) for v in color):
        return False
    if len(color) == 4:
        return all(v <= 1 - settings.white_level for v in color)
    return all(v >= settings.white_level for v in color)


def _unseen(
    rects: Sequence[dict[str, Any]], page_area: float, settings: TableSettings = DEFAULT
) -> set[int]:
    """The ids of the rectangles that draw nothing a reader could see as a rule: filled
    white, not stroked, inside a white rectangle drawn before them (a cell's background,
    `background_share` of the page at most), with no darker fill drawn in between under
    them. Office exports put one behind each cell's text, each at its own height; their
    edges are no rules. A white box on the bare page is kept: it may bound a table."""
    if len(rects) < 2:
        return set()
    boxes = np.array([(r["x0"], r["top"], r["x1"], r["bottom"]) for r in rects], dtype=float)
    filled = np.array([bool(r.get("fill")) for r in rects], dtype=bool)
    white = filled & np.array(
        [not r.get("stroke") and _white(r.get("non_stroking_color"), settings) for r in rects],
        dtype=bool,
    )
    if white.sum() < 2:
        return set()
    sizes = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    cells = white & (sizes < settings.background_share * page_area)
    dark = filled & ~white
    index = np.arange(len(rects))
    slack = settings.slack
    unseen: set[int] = set()
    for i in np.flatnonzero(white):
        x0, top, x1, bottom = boxes[i]
        holding = (
            cells
            & (index < i)
            & (boxes[:, 0] <= x0 + slack)
            & (boxes[:, 1] <= top + slack)
            & (boxes[:, 2] >= x1 - slack)
            & (boxes[:, 3] >= bottom - slack)
        )
        if not holding.any():
            continue
        since = int(np.flatnonzero(holding)[-1])  # the latest cell holding it
        between = dark & (index > since) & (index < i)
        over = (
            between
            & (boxes[:, 0] < x1)
            & (boxes[:, 2] > x0)
            & (boxes[:, 1] < bottom)
            & (boxes[:, 3] > top)
        )
        if not over.any():
            unseen.add(id(rects[i]))
    return unseen


def drawn(page: Any, settings: TableSettings = DEFAULT) -> Any:
    """The pdfplumber page without the rectangles that draw nothing (`_unseen`): what the
    ruled finder and the page's rules are read from (the page itself when it has none)."""
    unseen = _unseen(page.rects, float(page.width * page.height), settings)
    return page.filter(lambda obj: id(obj) not in unseen) if unseen else page


def ruled_regions(page: Any) -> list[Region]:
    """The ruled regions of a `drawn` page: pdfplumber's tables of more than one row."""
    return [Region(tuple(t.bbox), "ruled", t) for t in page.find_tables() if len(t.rows) > 1]


def proposed_regions(
    ruled: Sequence[Region], proposals: Sequence[Box], settings: TableSettings = DEFAULT
) -> list[Region]:
    """The proposed boxes that the `ruled` regions do not already cover."""
    regions: list[Region] = []
    for box in proposals:
        box = (float(box[0]), float(box[1]), float(box[2]), float(box[3]))
        if area(box) <= 0:
            continue
        covered = sum(intersection(box, r.bbox) for r in ruled)
        if covered < settings.proposal_covered * area(box):
            regions.append(Region(box, "proposed"))
    return regions


def find_regions(
    page: Any, settings: TableSettings = DEFAULT, proposals: Sequence[Box] = ()
) -> list[Region]:
    """The page's ruled regions, then the proposed boxes (PDF points, origin top left, as
    pdfplumber gives positions: x0, top, x1, bottom, on the page as read, turned upright)
    that ruled regions do not already cover."""
    ruled = ruled_regions(drawn(page, settings))
    return ruled + proposed_regions(ruled, proposals, settings)
