"""Tables printed without column rules: text aligned in columns, found from the words.

pdfplumber's table finder needs ruled cells; a table set only by alignment (no ruling at
all, or horizontal rules alone: above the header, under it, at the bottom) has none. Such a
table shows up as a run of lines that each hold two or more *segments* (words far apart)
with a value among them, whose segments line up from one line to the next. This module
finds those runs, cuts them into columns where no line (bar a long row label running
over) prints anything, reads the short lines of labels just above as the header
(`aligned_header`: a heading centred over several columns leads their header path) and
returns each table as a grid (`model.Grid`): `None` marks a position covered by a heading over
several columns, as for a ruled table's merged cells.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

from rag_assets.core.tables.aligned_header import (
    group_rows,
    header_above,
    header_cells,
    joined_rules,
    naming_lines,
    numbered_below,
)
from rag_assets.core.tables.cells import figure, is_value, without_leader
from rag_assets.core.tables.continuation import continued_note
from rag_assets.core.tables.header_lines import column_of, line_cells, split_at_edges
from rag_assets.core.tables.line_kinds import data_segments, filled, is_data, is_header, is_row
from rag_assets.core.tables.model import Box, Grid, Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import apart, bottom, printed_lines, segments, text, top


def _columns(lines: list[list[Word]], settings: TableSettings) -> list[tuple[float, float]]:
    """The x span of each column of a run of data lines: where their segments print ink,
    split where no more than a few lines (a long label running over) print any. The
    run's first lines without a figure (header lines read as data: periods centred each
    over a `$000's | %` pair, a line of units `% $ thousands`) print no columns' ink: a
    heading wider than its column bridges the gap beside it."""
    x0 = int(min(w["x0"] for line in lines for w in line))
    x1 = int(max(w["x1"] for line in lines for w in line)) + 1
    ink = [0] * (x1 - x0 + 1)
    parts = [data_segments(line, settings) for line in lines]
    lead = next((k for k, p in enumerate(parts) if any(figure(text(s)) for s in p)), 0)
    for segments_of_line in parts[lead:]:
        for segment in segments_of_line:
            for x in range(int(segment[0]["x0"]) - x0, int(segment[-1]["x1"]) - x0 + 1):
                ink[x] += 1
    allowed = int(settings.column_overrun * len(lines))
    spans: list[tuple[float, float]] = []
    start = -1
    for x, n in enumerate([*ink, 0]):
        if n > allowed and start < 0:
            start = x
        elif n <= allowed and start >= 0:
            spans.append((x0 + start, x0 + x - 1))
            start = -1
    return spans


def _edges(spans: list[tuple[float, float]]) -> list[float]:
    """Column edges: before the first column, between each two, after the last."""
    inner = [(a[1] + b[0]) / 2 for a, b in zip(spans, spans[1:], strict=False)]
    return [spans[0][0], *inner, spans[-1][1]]


def _outer(edges: list[float], body: list[list[Word]]) -> list[float]:
    """The outer column edges moved out to the body's ink: the stub's least indented
    labels (a few group and total rows) and the last column's widest values print where
    too few lines print to make a column of their own."""
    firsts = [line[0]["x0"] for line in body if (line[0]["x0"] + line[0]["x1"]) / 2 < edges[1]]
    lasts = [line[-1]["x1"] for line in body if (line[-1]["x0"] + line[-1]["x1"]) / 2 > edges[-2]]
    return [min([edges[0], *firsts]), *edges[1:-1], max([edges[-1], *lasts])]


def aligned_tables(
    words: list[Word],
    rules: list[Box],
    taken: list[Box],
    settings: TableSettings,
    proposed: bool = False,
    headed: bool = False,
) -> list[Grid]:
    """The tables set by alignment alone among a page's `words` (those inside `taken`
    boxes, the ruled tables, left out), given the page's horizontal `rules`.

    A table is a run of at least `min_data_lines` data lines, lines apart no more than a
    line pitch (`line_gap`; up to `max_group_lines` label lines with no values between them
    are rows of their own, or the rest of the label above when they start in lower
    case), with at least two columns and a header of up to `max_header_lines` lines of
    labels above it, within its rules. A run with no header is not a table: its lines
    stay text. In a box the layout model `proposed`, a row is any
    line of short cells (`is_row`), a title over the columns is left above the run, a
    run with no header above is headed by its first line, and prose set in columns is
    no table (`filled`).
    """

    def free(word: Word) -> bool:  # not at the height of a ruled table
        middle = (word["top"] + word["bottom"]) / 2
        return not any(b[1] - settings.slack <= middle <= b[3] + settings.slack for b in taken)

    lines = printed_lines(
        [w for w in words if w.get("upright", True) and free(w) and w["text"].strip()], settings
    )
    row_test = is_row if proposed else is_data
    data = [row_test(line, settings) for line in lines]
    out: list[Grid] = []
    i = read = 0  # `read`: the lines before it are a table's, none heads another
    while i < len(lines):
        if not data[i]:
            i += 1
            continue
        end = i + 1
        while end < len(lines):
            space = 1.0 if data[end] else settings.group_space  # more above a group row
            if apart(lines[end - 1], lines[end], settings, space):
                break
            if data[end]:
                end += 1
                continue
            labels = _label_lines(lines, data, end, settings, proposed)
            if not labels:
                break
            end += labels  # group rows (and wrapped labels) inside the table
        body = lines[i:end]
        if proposed:  # a title over the columns is no row: fewer segments than the rows
            usual = statistics.median(len(data_segments(line, settings)) for line in body)
            while (
                len(body) > settings.min_data_lines
                and len(data_segments(body[0], settings)) < usual * settings.title_segments
            ):
                i, body = i + 1, body[1:]
        after = lines[end] if end < len(lines) else None
        table = _read(lines[read:i], body, after, rules, settings, row_test, headed)
        if table is not None:
            out.append(table)
            read = end
        i = end
    return out


def _label_lines(
    lines: list[list[Word]],
    data: list[bool],
    start: int,
    settings: TableSettings,
    proposed: bool = False,
) -> int:
    """How many lines from `start` are label lines inside a table: one segment each (a
    group row without values, nested groups one under another, a label wrapped onto
    two lines), no more than `max_group_lines` (`max_stub_lines` where each ends before
    the values of the row above: a group label and a row label wrapped in a narrow stub,
    `Private` / `industries` / `Agriculture,` / `forestry,` / `fishing and`), each a
    line pitch from the one above
    (`group_space` pitches: space set above a group row), followed by a row a line pitch
    below (`data`: which lines are rows); 0 when they are not. In a box the layout model
    `proposed` (one table), a line of several short label segments (`wrapped_cell_words`),
    fewer than the line above holds, set a line pitch from the rows on both sides is
    one too: cells of some columns wrapped at once (a name and an address each on two
    lines); prose set in columns runs longer."""
    above = segments(lines[start - 1], settings) if start > 0 else []
    values_from = above[1][0]["x0"] if len(above) > 1 else -math.inf  # the row above's
    in_stub = True
    end = start
    while end < len(lines):
        in_stub = in_stub and lines[end][-1]["x1"] < values_from
        if end - start >= (settings.max_stub_lines if in_stub else settings.max_group_lines):
            break
        cells = segments(lines[end], settings)
        if len(cells) != 1 and not (
            proposed
            and not data[end]
            and len(cells) < len(segments(lines[end - 1], settings))  # some of the row's
            and max(len(cell) for cell in cells) <= settings.wrapped_cell_words
            and not apart(lines[end - 1], lines[end], settings)
        ):
            break
        if end > start and apart(lines[end - 1], lines[end], settings, settings.group_space):
            return 0
        end += 1
    following = end < len(lines) and data[end]
    if end == start or not following:
        return 0
    if apart(lines[end - 1], lines[end], settings):
        return 0
    return end - start


def _stub_of_label_lines(
    body: list[list[Word]],
    spans: list[tuple[float, float]],
    row_test: Callable[[list[Word], TableSettings], bool],
    settings: TableSettings,
) -> list[tuple[float, float]]:
    """The columns' spans with the stub put in front where the rows' labels are printed on
    lines of their own, left of every value (too few rows print a label beside their
    values to make it a column): most label lines inside the run ending before the first
    column of values."""
    labels = [line for line in body if not row_test(line, settings)]
    if not spans or len(labels) < settings.min_data_lines:
        return spans
    left = [line for line in labels if line[-1]["x1"] < spans[0][0]]
    if 2 * len(left) < len(labels):
        return spans
    stub = (min(line[0]["x0"] for line in left), max(line[-1]["x1"] for line in left))
    return [stub, *spans]


def _full_header(
    header: list[list[Word]],
    body: list[list[Word]],
    after: list[Word] | None,
    edges: list[float],
    settings: TableSettings,
    note: list[Word] | None = None,
) -> bool:
    """Whether a header makes a table of a body too short to be one by itself (a total
    row under its group rows, or the last row of a table continued from the page
    before, under a `note` line just above the header saying so): `short_header_lines`
    lines or more (one when continued), the lowest heading at least half the columns,
    and no line of headings right under the body (there the "body" is a header's line
    of figures, `$25,000 to` / `$49,999`, the header going on)."""
    if not header:
        return False
    continued = (
        note is not None
        and not apart(note, header[0], settings, settings.rule_crossed_space)
        and continued_note(" ".join(w["text"] for w in note), settings)
    )
    if len(header) < settings.short_header_lines and not continued:
        return False
    if 2 * len(segments(split_at_edges(header[-1], edges), settings)) < len(edges) - 1:
        return False
    return (
        after is None
        or apart(body[-1], after, settings, settings.group_space)
        or len(segments(after, settings)) < 2
        or not is_header(after, edges, settings)
    )


def _naming(
    body: list[list[Word]], edges: list[float], settings: TableSettings
) -> tuple[list[list[Word]], list[list[Word]]]:
    """`naming_lines` of a run, a stub heading set between two of them taken with them:
    one segment in the stub, its line reaching into the lines above and below it (a
    heading centred down a header of two lines: `Item` beside `3/31/2014` over `Amount`)."""
    named, rest = naming_lines(body, edges, settings)
    for k in range(1, min(len(body) - 1, settings.max_header_lines)):
        line = body[k]
        if (
            len(segments(line, settings)) == 1
            and line[-1]["x1"] < edges[1]
            and top(line) < bottom(body[k - 1])
            and bottom(line) > top(body[k + 1])
        ):
            without, after = naming_lines(body[:k] + body[k + 1 :], edges, settings)
            if len(without) > k > len(named):  # the lines on both sides name columns
                return [*without[:k], line, *without[k:]], after
    return named, rest


def _body_cells(
    line: list[Word], edges: list[float], is_row: bool, settings: TableSettings
) -> list[str | None]:
    """A body line's cells. A label line (`is_row` false: no row of values) set as one
    run of words from the stub is the stub's label whole, though it runs on over the
    columns' edges (a long label on a line of its own: `Real estate and rental and
    leasing` over the first columns, its values on the line below); in a row of values,
    the words of the label's run (no column gap between them) are the label's, though
    the last run on past the first value column's edge (`... technical services`)."""
    runs = segments(line, settings)
    label = runs[0]  # the words before the first column gap
    if is_row and len(runs) > 1 and column_of((label[0]["x0"] + label[0]["x1"]) / 2, edges) == 0:
        if not any(is_value(w["text"]) for w in label):  # the label, however far it runs
            cells: list[str | None] = list(line_cells(line[len(label) :], edges))
            cells[0] = " ".join(c for c in (without_leader(text(label)), cells[0]) if c)
            return cells
    if is_row or len(runs) > 1 or column_of(line[0]["x0"], edges) > 0:
        return list(line_cells(line, edges))
    return [without_leader(text(line)), *[""] * (len(edges) - 2)]


def _read(
    above: list[list[Word]],
    body: list[list[Word]],
    after: list[Word] | None,
    rules: list[Box],
    settings: TableSettings,
    row_test: Callable[[list[Word], TableSettings], bool] = is_data,
    headed: bool = False,
) -> Grid | None:
    """One run of data lines (and the lines above it) read into a table, or None; in a
    proposed box (`row_test` is `is_row`, not `is_data`) a run with no header above is
    headed by its first line."""
    values = [line for line in body if row_test(line, settings)]
    short = len(values) < settings.min_data_lines  # a table only under a full header
    if not values or (short and (headed or row_test is not is_data)):
        return None
    spans = _stub_of_label_lines(body, _columns(values, settings), row_test, settings)
    if len(spans) < (settings.short_columns if short else 2):
        return None
    if row_test is not is_data and filled(values, spans, settings):
        return None  # prose set in columns
    edges = _outer(_edges(spans), body)
    x0, x1 = edges[0], edges[-1]
    named, body = _naming(body, edges, settings)  # first lines naming columns
    groups = 0  # group rows without values taken from above the run
    across = joined_rules(rules, settings)
    if named:  # the columns' ink with the naming lines' (kept only where they agree)
        wider = _columns([line for line in body if row_test(line, settings)] + named, settings)
        spans = wider if len(wider) == len(spans) else spans
    else:
        groups = group_rows(above, body[0], edges, across, settings)
        above, body = above[: len(above) - groups], above[len(above) - groups :] + body
        if groups:  # group rows may be printed left of the rows under them
            edges[0] = x0 = min(x0, *(line[0]["x0"] for line in body[:groups]))
    header = header_above(above, named, body[0], edges, across, groups > 0, settings)
    printed = len(header) - len(named)  # header lines taken from above the run
    note = above[-printed - 1] if len(above) > printed else None  # over the header
    if short and not _full_header(header, body, after, edges, settings, note):
        return None
    if not header and row_test is not is_data and len(body) > settings.min_data_lines:
        header, body = [body[0]], body[1:]
    notes = numbered_below(header, settings)
    header = header[: len(header) - len(notes)]
    if not header and not headed:
        return None
    header, grid = header_cells(header, notes, edges, spans, across, settings)
    boxes: list[Box] = [(x0, top(line), x1, bottom(line)) for line in header]
    for line in body:
        is_row = row_test(line, settings)  # once a line
        cells = _body_cells(line, edges, is_row, settings)
        rest = grid[len(header) :] and (cells[0] or "")[:1].islower()  # a label goes on
        if rest and not is_row:
            last = grid[-1]
            last[0] = f"{last[0] or ''} {cells[0]}".strip()
            boxes[-1] = (x0, boxes[-1][1], x1, bottom(line))
            continue
        if rest and grid[-1][0] and not any(grid[-1][1:]):
            # values printed against a wrapped label's last line: the label line above
            # holds its start (`Computer and electronic` / `products  48,462.0 ...`)
            cells[0] = f"{grid[-1][0]} {cells[0]}"
            grid[-1], boxes[-1] = cells, (x0, boxes[-1][1], x1, bottom(line))
            continue
        grid.append(cells)
        boxes.append((x0, top(line), x1, bottom(line)))
    if not boxes:
        return None
    upper = min(b[1] for b in boxes)
    lowest = max(b[3] for b in boxes)
    left = min([x0, *(w["x0"] for line in header for w in line)])
    right = max([x1, *(w["x1"] for line in header for w in line)])
    return Grid((left, upper, right, lowest), grid, boxes, edges, header_rows=len(header))
