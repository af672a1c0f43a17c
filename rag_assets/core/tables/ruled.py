"""The ruled reader: a table pdfplumber's finder cut by its rules, read into a grid that
matches the printing (the repairs are in `ruled_repair`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pdfplumber.table import Table

from rag_assets.core.page import centred_in
from rag_assets.core.tables.cells import blank, clean_cell
from rag_assets.core.tables.model import Box, Grid, Region, Word
from rag_assets.core.tables.ruled_repair import (
    collapse_columns,
    column_edges,
    column_spans,
    split_by_lines,
    split_merged,
    widen,
)
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.upward import holds, read_upward


@dataclass
class _Row:
    """A row cut from a ruled row: only its box is needed."""

    bbox: tuple[float, ...]


def _same_line_twice(
    previous: tuple[Any, list[str | None]],
    row: tuple[Any, list[str | None]],
    settings: TableSettings,
) -> bool:
    """Whether two ruled rows hold the same printed line (a shading grid drawn over the
    rule grid repeats every value)."""
    (a, cells_a), (b, cells_b) = previous, row
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    if overlap < settings.same_line_twice * (b.bbox[3] - b.bbox[1]):
        return False
    texts_a = sorted(clean_cell(c) for c in cells_a if not blank(c))
    return bool(texts_a) and texts_a == sorted(clean_cell(c) for c in cells_b if not blank(c))


def _across(box: Box, word: Word, gutters: Sequence[tuple[float, float, float]]) -> bool:
    """Whether a gutter between text columns runs between a box and a word beside it
    (the next column's prose, on the same baselines as the table's rows)."""
    middle = (word["top"] + word["bottom"]) / 2
    return any(
        top <= middle <= bottom and (box[2] <= x <= word["x0"] or word["x1"] <= x <= box[0])
        for x, top, bottom in gutters
    )


def _nested(inner: Box, outer: Box) -> bool:
    """Whether a ruled box lies inside another (a table ruled inside a ruled form)."""
    return inner != outer and all(
        (inner[k] >= outer[k]) if k < 2 else (inner[k] <= outer[k]) for k in range(4)
    )


def _under(cells: list[str | None], head: list[str | None]) -> int:
    """How many of a row's values sit under a heading of the first row."""
    return sum(1 for c, h in zip(cells, head, strict=False) if not blank(c) and h)


def read_ruled(
    page: Any,
    region: Region,
    others: list[Box],
    words: list[Word],
    turned: list[Word],
    settings: TableSettings,
    gutters: Sequence[tuple[float, float, float]] = (),
) -> Grid | None:
    """One ruled region's grid with its rows and columns repaired (None: a box around
    text, not a table). `others` are the page's other ruled boxes (the words of those
    nested inside this one are not read into it), `words` the page's words, `turned` its
    characters not upright, `gutters` the page's gutters between text columns (x, top,
    bottom), across which no word is the table's."""
    found = region.found
    inner = [b for b in others if _nested(b, region.bbox)]
    if inner:  # a form ruled around a table: the table's words are the table's alone
        page = page.filter(
            lambda obj: (
                obj.get("object_type") != "char" or not any(centred_in(b, obj) for b in inner)
            )
        )
        found = Table(page, found.cells)
        words = [w for w in words if not any(centred_in(b, w) for b in inner)]
    raw_rows = found.extract()
    read_upward(page, found, raw_rows, turned, settings)
    spans = column_spans(found, max((len(r) for r in raw_rows), default=0), settings)
    kept: list[tuple[Any, list[str | None]]] = []
    for row, raw in zip(found.rows, raw_rows, strict=False):
        if not any(clean_cell(c) for c in raw):
            continue
        if kept and _same_line_twice(kept[-1], (row, raw), settings):
            if _under(raw, raw_rows[0]) <= _under(kept[-1][1], raw_rows[0]):
                continue  # one printed line read twice: the one under the headings
            kept.pop()
        lines = any("\n" in (c or "") for c in raw)
        split = split_by_lines(page, row, spans, settings) if lines else None
        if split is None:
            raw = split_merged(page, row, raw, spans, settings)
            kept.append((row, list(raw)))
        else:
            kept.extend((_Row(bbox), cells) for bbox, cells in split)
    edges = column_edges([c[0] for c in found.cells] + [c[2] for c in found.cells], settings)
    grid, columns = collapse_columns([list(raw) for _, raw in kept], edges, settings)
    if len(grid) < 2 or max(len(r) for r in grid) < 2:
        return None  # a box around text, not a table
    row_boxes: list[Box] = [tuple(row.bbox) for row, _ in kept]  # type: ignore[misc]
    free = [w for w in words if not any(holds(b, w, settings) for b in others)]
    near = [w for w in free if not _across(region.bbox, w, gutters)]
    grid, columns, bbox = widen(near, region.bbox, row_boxes, grid, columns, settings)
    return Grid(bbox, grid, row_boxes, columns, ruled=True, beside=free)
