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

from rag_assets.core.tables.boxes import Box, area, intersection
from rag_assets.core.tables.model import Region
from rag_assets.core.tables.settings import DEFAULT, TableSettings


def ruled_regions(page: Any) -> list[Region]:
    """The page's ruled regions: pdfplumber's tables of more than one row."""
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
    ruled = ruled_regions(page)
    return ruled + proposed_regions(ruled, proposals, settings)
