"""Ground truth of a printed synthetic table, in bench/table_truth.py's model.

The truth is logical, as in `table_corpus.py`: a heading is one cell over the columns it
spans (every heading row above a value is on its path, the units row last); the stub has
one column per indent level, a group label one cell spanning the rows under it (so a value
row's path is group label, then its own label); a group row without values is no row of
its own. Not-available marks are no targets; footnote marks are not part of a cell's text.
Every cell keeps the box it is printed in (PDF points, origin bottom left, on the page as
displayed), the table its box, for region recall.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from synth.table_truth import Box, Cell, TruthTable

from .spec import Table

Boxes = dict[str, tuple[float, float, float, float]]  # key -> x0, top, x1, bottom (points)


@dataclass
class SynthCell(Cell):
    """A truth cell with the box its text is printed in (None: not printed on this page)."""

    box: Box | None = None


@dataclass
class SynthTable(TruthTable):
    """A truth table with the features it was drawn with (style, depth, producer, ...)."""

    features: dict[str, str] = field(default_factory=dict)


def flip(box: tuple[float, float, float, float], height: float) -> Box:
    """A top-based box (x0, top, x1, bottom) as PDF points with the origin bottom left."""
    x0, top, x1, bottom = box
    return (round(x0, 2), round(height - bottom, 2), round(x1, 2), round(height - top, 2))


def truth(table: Table, page: int, boxes: Boxes, height: float) -> SynthTable:
    """The logical cells of `table` as printed on `page`, boxes from the producer."""

    def at(key: str) -> Box | None:
        return flip(boxes[key], height) if key in boxes else None

    levels = max(r.level for r in table.rows) + 1
    head_rows = table.header_rows
    cells: list[Cell] = []
    if table.stub_head:
        cells.append(SynthCell(0, 0, head_rows - 1, levels - 1, table.stub_head, at("stub")))
    for i, h in enumerate(table.heads):
        c0, c1 = levels + h.first, levels + h.last
        cells.append(SynthCell(h.level, c0, h.level + h.rows - 1, c1, h.text, at(f"h{i}")))
    for j, unit in enumerate(table.units):
        cells.append(
            SynthCell(head_rows - 1, levels + j, head_rows - 1, levels + j, unit, at(f"u{j}"))
        )
    logical = {}
    for i, row in enumerate(table.rows):
        if row.values is not None:
            logical[i] = head_rows + len(logical)
    for i, row in enumerate(table.rows):
        under = []  # logical rows of this row and the rows indented under it
        if i in logical:
            under.append(logical[i])
        k = i + 1
        while k < len(table.rows) and table.rows[k].level > row.level:
            if k in logical:
                under.append(logical[k])
            k += 1
        if not under:
            continue
        last_col = row.level if k > i + 1 else levels - 1
        cells.append(SynthCell(min(under), row.level, max(under), last_col, row.label, at(f"s{i}")))
        if i not in logical:
            continue
        r = logical[i]
        for j, value in enumerate(row.values or []):
            if j not in row.na:
                cells.append(SynthCell(r, levels + j, r, levels + j, value, at(f"v{i}-{j}")))
    printed = (head_rows + len(table.rows), table.n_cols + 1)
    return SynthTable(
        page=page,
        box=at("table"),
        cells=cells,
        header_rows=head_rows,
        stub_cols=levels,
        name=table.name,
        printed=printed,
        features=dict(table.features),
    )


def dump(t: SynthTable) -> dict[str, Any]:
    """A truth table as JSON-ready data (the cache beside each PDF)."""
    return {
        "page": t.page,
        "box": t.box,
        "name": t.name,
        "header_rows": t.header_rows,
        "stub_cols": t.stub_cols,
        "printed": t.printed,
        "features": t.features,
        "cells": [
            [c.row, c.col, c.end_row, c.end_col, c.text, getattr(c, "box", None)] for c in t.cells
        ],
    }


def load(d: dict[str, Any]) -> SynthTable:
    """A truth table from `dump`'s data."""
    cells: list[Cell] = [
        SynthCell(r, c, er, ec, text, tuple(box) if box else None)  # type: ignore[arg-type]
        for r, c, er, ec, text, box in d["cells"]
    ]
    return SynthTable(
        page=d["page"],
        box=tuple(d["box"]) if d["box"] else None,  # type: ignore[arg-type]
        cells=cells,
        header_rows=d["header_rows"],
        stub_cols=d["stub_cols"],
        name=d["name"],
        printed=tuple(d["printed"]) if d["printed"] else None,  # type: ignore[arg-type]
        features=d["features"],
    )
