"""Where a page's tables meet its text lines: lines read table by table where tables stand
side by side, the lines that belong to a table, and pieces continued across pages."""

from __future__ import annotations

from typing import Any

from rag_assets.core.extract.columns import split_line
from rag_assets.core.extract.model import Line, Page, PageTable
from rag_assets.core.page import Box
from rag_assets.core.tables import TableLayout, TableSettings, continued_note, continues


def side_by_side(
    raw_lines: list[dict[str, Any]], boxes: list[Box], settings: TableSettings
) -> list[dict[str, Any]]:
    """Text lines read table by table where tables stand side by side.

    A printed line runs across every table beside it (`Spain 268 Spain 153 Germany 91`);
    cut at the gaps between the tables (and at their outer edges), its pieces are read
    down each table in turn, then what is printed beside them (a chart's labels), so that
    each table's rows are its own lines, one after the other.
    """
    for box in boxes:
        band = [
            b
            for b in boxes
            if min(b[3], box[3]) - max(b[1], box[1])
            > settings.side_by_side_overlap * min(b[3] - b[1], box[3] - box[1])
        ]
        band.sort(key=lambda b: b[0])
        if len(band) < 2 or box is not band[0]:
            continue
        if any(a[2] > b[0] for a, b in zip(band, band[1:], strict=False)):
            continue  # overlapping boxes: not side by side
        gutters = [band[0][0] - settings.side_by_side_edge]
        gutters += [(a[2] + b[0]) / 2 for a, b in zip(band, band[1:], strict=False)]
        gutters.append(band[-1][2] + settings.side_by_side_edge)
        top, bottom = min(b[1] for b in band), max(b[3] for b in band)
        inside = [
            i
            for i, raw in enumerate(raw_lines)
            if top - settings.slack <= (raw["top"] + raw["bottom"]) / 2 <= bottom + settings.slack
        ]
        if not inside:
            continue
        pieces = [p for i in inside for p in split_line(raw_lines[i], gutters, settings)]
        pieces.sort(key=lambda p: (max(p[0], 0), p[1]["top"]))
        raw_lines = raw_lines[: inside[0]] + [p for _, p in pieces] + raw_lines[inside[-1] + 1 :]
    return raw_lines


def across(raw: dict[str, Any], bbox: Box, settings: TableSettings) -> bool:
    """Whether a text line sits at a table's height and reaches into it (`slack` in)."""
    slack = settings.slack
    middle = (raw["top"] + raw["bottom"]) / 2
    inside = bbox[1] - slack <= middle <= bbox[3] + slack
    return inside and raw["x1"] > bbox[0] + slack and raw["x0"] < bbox[2] - slack


def inside_raw(raw: dict[str, Any], bbox: Box, settings: TableSettings) -> bool:
    """Whether a text line (or a `Line`'s middle and start) sits inside a table's box:
    it starts within it, `slack` out."""
    slack = settings.slack
    middle = (raw["top"] + raw["bottom"]) / 2
    return bbox[1] - slack <= middle <= bbox[3] + slack and bbox[0] - slack <= raw["x0"] <= bbox[2]


def mark_continuations(pages: list[Page], settings: TableSettings) -> int:
    """Mark each page's first table that continues the previous page's last table."""
    slack = settings.slack

    def is_note(line: Line) -> bool:
        return continued_note(line.text, settings)

    def layout(page: Page, table: PageTable) -> TableLayout:
        body = [ln for ln in page.lines if ln.table < 0 and not is_note(ln)]
        return TableLayout(
            page=page.page,
            columns=table.columns,
            page_width=page.width,
            first_on_page=not any(ln.bottom <= table.bbox[1] + slack for ln in body),
            last_on_page=not any(ln.top >= table.bbox[3] - slack for ln in body),
        )

    def header_row(table: PageTable) -> list[str]:
        return table.rows[table.header_rows - 1] if table.header else []

    joined = 0
    previous: tuple[Page, PageTable] | None = None
    headers: dict[int, list[str]] = {}  # id(table) -> the header row of its logical table
    for page in pages:
        for table in page.tables:
            headers[id(table)] = header_row(table)
        if not page.tables:
            previous = None
            continue
        first = min(page.tables, key=lambda t: t.bbox[1])
        if previous is not None:
            prev_page, prev_table = previous
            header = headers[id(prev_table)]
            if continues(layout(prev_page, prev_table), layout(page, first), header, first.rows[0]):
                first.continues = True
                headers[id(first)] = header
                joined += 1
        previous = (page, max(page.tables, key=lambda t: t.bbox[3]))
    return joined
