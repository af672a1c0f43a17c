"""A page's tables, stage by stage: regions (`regions`), each read by the ruled reader
(`ruled`) or by alignment (`aligned`) into a grid, every grid finished the same way
(`finish`: header block, heading paths, stub tree, clean cells)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag_assets.core.page import Box, area, intersection, overlaps
from rag_assets.core.tables.aligned import aligned_tables
from rag_assets.core.tables.cells import CellKind, classify, header_label
from rag_assets.core.tables.finish import finish
from rag_assets.core.tables.grid_paths import boxed_paths
from rag_assets.core.tables.model import Grid, PageTable, Region, Word
from rag_assets.core.tables.regions import drawn, proposed_regions, ruled_regions
from rag_assets.core.tables.ruled import read_ruled
from rag_assets.core.tables.settings import DEFAULT, TableSettings
from rag_assets.core.tables.text_columns import by_text_column, gutters
from rag_assets.core.tables.upward import holds
from rag_assets.core.tables.words import line_gap, page_words


def _dates_over_columns(grid: Grid) -> int:
    """The dates of a ruled grid that each span two or more of its columns (a period
    heading over its value and percent pair): headings, never a column's values."""
    return sum(
        1
        for row in grid.rows
        for cell, after in zip(row, row[1:], strict=False)
        if cell is not None and after is None and classify(cell.strip()) is CellKind.DATE
    )


def _labels_only(rows: list[list[str]], grid: Grid, settings: TableSettings) -> bool:
    """Whether a ruled table holds (nearly) no value, only a few rows of labels: a header
    ruled as a box over a body set by alignment below it. A row repeating one unit over
    its columns (`(1,000)`, which may read as a negative number) is a row of labels, and
    so is a date spanning columns in the `grid` read (`_dates_over_columns`)."""
    cells = [c.strip() for row in rows for c in row if c.strip()]
    labels = sum(1 for c in cells if header_label(c))  # `(1,000)` may read as a number
    labels += _dates_over_columns(grid)
    for row in rows:  # ... but one unit over every column (`(1,000)`) is a units row
        filled = [c.strip() for c in row[1:] if c.strip()]
        if len(filled) >= 2 and len(set(filled)) == 1 and not header_label(filled[0]):
            labels += len(filled)
    return len(rows) <= settings.header_box_max_rows and labels >= settings.header_box_labels * len(
        cells
    )


def _heads(box: Box, table: Box, settings: TableSettings) -> bool:
    """Whether a ruled box of labels sits as the header of a table: at its top, across
    (nearly) the same width."""
    across = min(box[2], table[2]) - max(box[0], table[0])
    width = max(box[2] - box[0], table[2] - table[0])
    top = box[1] <= table[1] + settings.header_box_top
    return across >= settings.header_box_width * width and top and box[3] < table[3]


def _rules(page: Any, settings: TableSettings) -> list[Box]:
    """The page's horizontal rules as printed: lines, rectangles thin enough to be
    a rule, and the sides of stroked rectangles. A filled band's edges are no rule: zebra
    stripes and shaded rows change colour there, they draw no line between rows."""
    rules: list[Box] = [
        (e["x0"], e["top"], e["x1"], e["bottom"])
        for e in page.edges
        if e["orientation"] == "h" and e.get("object_type") != "rect_edge"
    ]
    for r in page.rects:
        if r["height"] <= settings.rule_thickness:
            middle = (r["top"] + r["bottom"]) / 2
            rules.append((r["x0"], middle, r["x1"], middle))
        elif r.get("stroke"):
            rules += [(r["x0"], y, r["x1"], y) for y in (r["top"], r["bottom"])]
    return rules


def _body_under(
    head: PageTable,
    box: Grid,
    outside: list[Word],
    rules: list[Box],
    tables: list[PageTable],
    words: list[Word],
    settings: TableSettings,
) -> PageTable | None:
    """The body set by alignment right under a ruled box of headings that no body took
    (its lines of headings misread as rows: `$25,000 / to / $49,999` wrapped in a cell
    looks like a line of values): read from the words below the box alone, each column
    under the path of the box column over it."""
    x0, top, x1, bottom = head.bbox
    below = [
        w
        for w in outside
        if w["top"] >= bottom - settings.slack
        and x0 - settings.slack <= (w["x0"] + w["x1"]) / 2 <= x1 + settings.slack
    ]
    taken = [t.bbox for t in tables]
    for grid in aligned_tables(below, rules, taken, settings, headed=True):
        size = statistics.median(b[3] - b[1] for b in grid.row_boxes)
        if grid.bbox[1] - bottom > line_gap(size, settings) * settings.group_space:
            break  # not right under the box
        if boxed_paths(box.rows, box.columns, grid.columns) is None:
            return None  # the box does not tell this body's columns apart
        table = finish(grid, words, settings, box)
        table.bbox = (min(x0, table.bbox[0]), top, max(x1, table.bbox[2]), table.bbox[3])
        return table
    return None


def _inside_top(table: Box, box: Box, settings: TableSettings) -> bool:
    """Whether a ruled table sits inside the top of a proposed box reaching well below it."""
    return (
        intersection(box, table) >= settings.proposed_head_inside * area(table)
        and table[1] - box[1] <= settings.proposed_head_top * (box[3] - box[1])
        and area(table) < settings.proposed_head_share * area(box)
    )


def _on_top(table: Box, box: Box, settings: TableSettings) -> bool:
    """Whether a ruled table sits right on top of a proposed box, across its width (the
    model boxed the body under a ruled header alone)."""
    return (
        abs(box[1] - table[3]) <= settings.proposed_head_gap
        and min(box[2], table[2]) - max(box[0], table[0])
        >= settings.header_box_width * max(box[2] - box[0], table[2] - table[0])
        and table[1] < box[1]
    )


def _topped(
    ruled: list[PageTable], heads: set[int], proposed: list[Box], settings: TableSettings
) -> tuple[list[Box], set[int]]:
    """The proposed boxes not topped by a ruled table, and the ruled tables topping one: a
    short ruled table inside the top of a box that reaches well below it is the header
    of a body the rules missed (a ruled header over zebra rows; the model saw the whole
    table), read under it as under a ruled box of labels (`_body_under`), the box not
    read on its own."""
    kept: list[Box] = []
    topped: set[int] = set()
    for box in proposed:
        tops = [
            t
            for t in ruled
            if id(t) not in heads
            and len(t.rows) <= settings.header_box_max_rows
            and (_inside_top(t.bbox, box, settings) or _on_top(t.bbox, box, settings))
        ]
        if len(tops) == 1:
            topped.add(id(tops[0]))
        else:
            kept.append(box)
    return kept, topped


@dataclass
class RuledPass:
    """What a page's tables read by rules leave to the aligned pass, whatever boxes are
    proposed later: the page's words and rules, its ruled regions, the ruled tables (each
    with its grid, `read`) and which of them are only a box of headings (`heads`)."""

    words: list[Word]
    rules: list[Box]
    regions: list[Region]
    ruled: list[PageTable]
    read: dict[int, Grid]
    heads: set[int]


def ruled_pass(
    page: Any, settings: TableSettings = DEFAULT, words: list[Word] | None = None
) -> RuledPass:
    """The page's ruled tables, read once however many times the aligned pass runs.
    `words`: the page's words (`extract_words` at the settings' `word_x_tolerance`), when
    the caller has them already."""
    shown = drawn(page, settings)  # rules as printed: no rectangle that draws nothing
    regions = ruled_regions(shown)
    if words is None:  # once: ruled tables' margins, then aligned
        words = page_words(page, settings)
    turned = [c for c in page.chars if not c.get("upright", True) and c["text"].strip()]
    ruled: list[PageTable] = []
    read: dict[int, Grid] = {}  # each ruled table's grid, merged cells and all
    columns = gutters(words, settings) if regions else []
    for region in regions:
        others = [r.bbox for r in regions if r is not region]
        grid = read_ruled(page, region, others, words, turned, settings, columns)
        if grid is not None:
            ruled.append(finish(grid, words, settings))
            read[id(ruled[-1])] = grid
    heads = {id(t) for t in ruled if _labels_only(t.rows, read[id(t)], settings)}
    return RuledPass(words, _rules(shown, settings), regions, ruled, read, heads)


def aligned_pass(
    done: RuledPass, settings: TableSettings = DEFAULT, proposals: Sequence[Box] = ()
) -> list[PageTable]:
    """The page's tables: the ruled ones of `done`, then those set by alignment, then
    those read by alignment inside `proposals` (boxes from outside) that the ruled regions
    do not cover; a ruled box of labels only that heads an aligned body is that body's
    header, not a table of its own."""
    words, rules, ruled, read = done.words, done.rules, done.ruled, done.read
    heads = set(done.heads)
    proposed = [r.bbox for r in proposed_regions(done.regions, proposals, settings)]
    proposed, topped = _topped(ruled, heads, proposed, settings)
    heads |= topped
    tables = [t for t in ruled if id(t) not in heads]
    outside = [w for w in words if not any(holds(b, w, settings) for b in proposed)]
    grids: list[Grid] = []
    for column in by_text_column(outside, settings):  # a table inside one text column
        grids += aligned_tables(column, rules, [t.bbox for t in tables], settings)
    for box in proposed:
        inside = [w for w in words if holds(box, w, settings)]
        grids += aligned_tables(inside, rules, [t.bbox for t in tables], settings, proposed=True)
    for grid in grids:
        boxes = [t for t in ruled if id(t) in heads and overlaps(t.bbox, grid.bbox)]
        if any(not _heads(t.bbox, grid.bbox, settings) for t in boxes):
            continue  # labels in a box beside or inside it (a chart's legend): no header
        # its header ruled as a box: the box's cells say the extents
        table = finish(grid, words, settings, read[id(boxes[0])] if len(boxes) == 1 else None)
        if not table.headed():
            continue  # a run of number lines without a header stays text
        tables.append(table)
        heads -= {id(t) for t in boxes}
    for head in [t for t in ruled if id(t) in heads]:  # a box no aligned body took
        table = _body_under(head, read[id(head)], outside, rules, tables, words, settings)
        if table is not None:
            tables.append(table)
            heads.discard(id(head))
    kept = {id(t) for t in tables} | heads  # the header boxes no aligned body took
    tables = [t for t in ruled if id(t) in kept] + [t for t in tables if t not in ruled]
    for i, table in enumerate(tables):
        table.index = i
    return tables


def find_tables(
    page: Any,
    settings: TableSettings = DEFAULT,
    proposals: Sequence[Box] = (),
    words: list[Word] | None = None,
) -> list[PageTable]:
    """The page's tables: ruled ones, then those set by alignment, then those read by
    alignment inside `proposals` (boxes from outside, see `regions.find_regions`): the
    ruled pass, then the aligned pass. `words`: the page's words (`extract_words` at the
    settings' `word_x_tolerance`), when the caller has them already."""
    return aligned_pass(ruled_pass(page, settings, words), settings, proposals)
