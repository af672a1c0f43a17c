"""Tables printed without column rules: text aligned in columns, found from the words.

pdfplumber's table finder needs ruled cells; a table set only by alignment (no ruling at
all, or horizontal rules alone: above the header, under it, at the bottom) has none. Such a
table shows up as a run of lines that each hold two or more *segments* (words far apart)
with a value among them, whose segments line up from one line to the next. This module
finds those runs, cuts them into columns where no line (bar a long row label running
over) prints anything, reads the short lines of labels just above as the header (a
heading centred over several columns leads their header path) and returns each table as
a grid (`model.Grid`): `None` marks a position covered by a heading over
several columns, as for a ruled table's merged cells.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from rag_assets.core.tables.cells import is_label, is_value, without_leader
from rag_assets.core.tables.header_lines import column_of, header_segments, split_at_edges
from rag_assets.core.tables.heading_tree import header_grid
from rag_assets.core.tables.line_kinds import (
    data_segments,
    filled,
    is_data,
    is_header,
    is_row,
    numbering,
    references,
)
from rag_assets.core.tables.model import Box, Grid, Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import (
    bottom,
    height,
    printed_lines,
    segments,
    top,
)


def _columns(lines: list[list[Word]], settings: TableSettings) -> list[tuple[float, float]]:
    """The x span of each column of a run of data lines: where their segments print ink,
    split where no more than a few lines (a long label running over) print any."""
    x0 = int(min(w["x0"] for line in lines for w in line))
    x1 = int(max(w["x1"] for line in lines for w in line)) + 1
    ink = [0] * (x1 - x0 + 1)
    for line in lines:
        for segment in data_segments(line, settings):
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


def _cells(line: list[Word], edges: list[float]) -> list[str]:
    """A data line's text by column: each word goes where its middle is."""
    cells: list[list[str]] = [[] for _ in range(len(edges) - 1)]
    for word in line:
        cells[column_of((word["x0"] + word["x1"]) / 2, edges)].append(word["text"])
    return [without_leader(" ".join(c)) for c in cells]


def joined_rules(rules: list[Box], settings: TableSettings) -> list[Box]:
    """Horizontal rules with the pieces of one printed rule joined: segments at the same
    height that touch (a rule drawn as each cell's border) are one rule."""
    out: list[list[float]] = []
    for r in sorted(rules, key=lambda r: (round(r[1]), r[0])):
        last = out[-1] if out else None
        join = settings.rule_join
        if last is not None and abs(last[1] - r[1]) <= join and r[0] <= last[2] + join:
            last[2] = max(last[2], r[2])
        else:
            out.append(list(r))
    return [(r[0], r[1], r[2], r[3]) for r in out]


def _rule_between(
    rules: list[Box], upper: float, lower: float, x0: float, x1: float, settings: TableSettings
) -> bool:
    """Whether a rule across the table (not a spanner's underline, shorter) lies between
    two heights (`rules` joined)."""
    slack = (1 - settings.full_rule) / 2 * (x1 - x0)
    return any(upper <= r[1] <= lower and r[0] <= x0 + slack and r[2] >= x1 - slack for r in rules)


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
    i = 0
    while i < len(lines):
        if not data[i]:
            i += 1
            continue
        end = i + 1
        while end < len(lines):
            space = 1.0 if data[end] else settings.group_space  # more above a group row
            if _apart(lines[end - 1], lines[end], settings, space):
                break
            if data[end]:
                end += 1
                continue
            labels = _label_lines(lines, data, end, settings)
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
        table = _read(lines[:i], body, rules, settings, row_test, headed)
        if table is not None:
            out.append(table)
        i = end
    return out


def _apart(
    upper: list[Word], lower: list[Word], settings: TableSettings, times: float = 1.0
) -> bool:
    """Whether two printed lines stand further apart than `times` the table's line pitch
    (`line_gap` of the upper line): not one table's lines."""
    return top(lower) - bottom(upper) > times * line_gap(height(upper), settings)


def line_gap(size: float, settings: TableSettings) -> float:
    """The most space under a line of type `size` points high before the next line of
    its table: `line_pitch` heights of its type, and never less than `min_line_gap`
    points (type shrunk to fit a wide table keeps its cells' padding)."""
    return max(settings.line_pitch * size, settings.min_line_gap)


def _label_lines(
    lines: list[list[Word]], data: list[bool], start: int, settings: TableSettings
) -> int:
    """How many lines from `start` are label lines inside a table: one segment each (a
    group row without values, nested groups one under another, a label wrapped onto
    two lines), no more than `max_group_lines`, each a line pitch from the one above
    (`group_space` pitches: space set above a group row), followed by a row a line pitch
    below (`data`: which lines are rows); 0 when they are not."""
    end = start
    while end < len(lines) and end - start < settings.max_group_lines:
        if len(segments(lines[end], settings)) != 1:
            break
        if end > start and _apart(lines[end - 1], lines[end], settings, settings.group_space):
            return 0
        end += 1
    following = end < len(lines) and data[end]
    if end == start or not following:
        return 0
    if _apart(lines[end - 1], lines[end], settings):
        return 0
    return end - start


def _names_columns(
    line: list[Word], rest: list[list[Word]], edges: list[float], settings: TableSettings
) -> bool:
    """Whether a first line of a run names columns rather than holding values: a label
    (`K`, `grades`) in a column where the lines below print values, as a header line of
    small numbers (`Year K 1 2 3`) has."""
    cells = _cells(line, edges)
    below = [_cells(other, edges) for other in rest if is_data(other, settings)]
    for j in range(1, len(cells)):
        cell = cells[j].strip()
        if not cell or is_value(cell) or not is_label(cell):
            continue
        filled = [r[j] for r in below if r[j].strip()]
        if len(filled) >= 2 and sum(
            1 for v in filled if is_value(v)
        ) >= settings.column_values * len(filled):
            return True
    return False


def _group_rows(
    above: list[list[Word]],
    first: list[Word],
    edges: list[float],
    rules: list[Box],
    settings: TableSettings,
) -> int:
    """How many of the lines just above a body's first line are its group rows without
    values (`Durable goods` over the industries indented under it): each one segment
    whose middle is in the stub column, a line pitch apart, no rule across the table between them
    and the body (under a header, a rule sets the body off)."""
    count, lower = 0, top(first)
    for line in reversed(above):
        if len(segments(line, settings)) != 1 or (line[0]["x0"] + line[-1]["x1"]) / 2 > edges[1]:
            break
        space = settings.group_space if count else 1.0  # above a group row: more
        if lower - bottom(line) > space * line_gap(height(line), settings):
            break
        if _rule_between(rules, bottom(line), lower, edges[0], edges[-1], settings):
            break
        count, lower = count + 1, top(line)
    return count


def _numbered_below(header: list[list[Word]], settings: TableSettings) -> list[list[Word]]:
    """The last lines of a header from its line of column numbers down (the numbers and
    the formulas under them), when label lines stand above: read apart from the labels,
    each cell under its column."""
    for i, line in enumerate(header):
        if numbering(line, settings) and i > 0:
            return header[i:]
    return []


def _one_column_pieces(
    line: list[Word], edges: list[float], settings: TableSettings
) -> dict[int, list[Word]] | None:
    """A header line's headings by the body column each sits over, or None when one sits
    over several columns (a spanner) or two over one column."""
    middles = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    out: dict[int, list[Word]] = {}
    for piece in header_segments(line, edges, lowest=True, settings=settings):
        x0, x1 = piece[0]["x0"], piece[-1]["x1"]
        over = [j for j, m in enumerate(middles) if x0 <= m <= x1]
        if len(over) > 1:
            return None
        j = over[0] if over else column_of((x0 + x1) / 2, edges)
        if j in out:
            return None
        out[j] = piece
    return out


def wrapped_headings(
    header: list[list[Word]], edges: list[float], settings: TableSettings
) -> list[list[Word]]:
    """The header's lowest lines read by cells: where each heading of the lowest lines
    sits over one body column, the lines' words over one column are one heading (a
    heading wrapped onto several lines, centred vertically so that its lines fall
    between its neighbours'), merged into one line; lines above stay as they are. A line
    joins the lowest ones when each of its headings sits over one column and is centred
    on (or flush left with) the heading below it in that column, a line pitch above."""
    if len(header) < 2 or len(edges) < 3:
        return header
    lowest = _one_column_pieces(header[-1], edges, settings)
    if lowest is None:
        return header
    band = [lowest]
    pitches = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    upper = top(header[-1])
    start = len(header) - 1
    for i in range(len(header) - 2, -1, -1):
        cells = _one_column_pieces(header[i], edges, settings)
        if cells is None or upper - bottom(header[i]) > line_gap(height(header[i]), settings):
            break
        fits = True
        for j, piece in cells.items():
            below = next((b[j] for b in band if j in b), None)
            if below is None:
                continue
            mid, other = (
                (piece[0]["x0"] + piece[-1]["x1"]) / 2,
                (below[0]["x0"] + below[-1]["x1"]) / 2,
            )
            tight = max(settings.min_tight, settings.tight * pitches[j])
            if abs(mid - other) > tight and abs(piece[0]["x0"] - below[0]["x0"]) > settings.flush:
                fits = False
                break
        if not fits:
            break
        band.insert(0, cells)
        upper, start = top(header[i]), i
    if len(band) < 2:
        return header
    merged: list[Word] = []
    for j in sorted({j for cells in band for j in cells}):
        words = [w for cells in band if j in cells for w in cells[j]]
        merged.append(
            {
                **words[0],
                "text": " ".join(w["text"] for w in words),
                "x0": min(w["x0"] for w in words),
                "x1": max(w["x1"] for w in words),
                "top": min(w["top"] for w in words),
                "bottom": max(w["bottom"] for w in words),
                "cut": True,  # one column's heading: a run of its own (`words.segments`)
            }
        )
    return [*header[:start], merged]


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


def _read(
    above: list[list[Word]],
    body: list[list[Word]],
    rules: list[Box],
    settings: TableSettings,
    row_test: Callable[[list[Word], TableSettings], bool] = is_data,
    headed: bool = False,
) -> Grid | None:
    """One run of data lines (and the lines above it) read into a table, or None; in a
    proposed box (`row_test` is `is_row`, not `is_data`) a run with no header above is
    headed by its first line."""
    values = [line for line in body if row_test(line, settings)]
    if len(values) < settings.min_data_lines:
        return None
    spans = _stub_of_label_lines(body, _columns(values, settings), row_test, settings)
    if len(spans) < 2:
        return None
    if row_test is not is_data and filled(values, spans, settings):
        return None  # prose set in columns
    edges = _outer(_edges(spans), body)
    x0, x1 = edges[0], edges[-1]
    named: list[list[Word]] = []  # first lines of the run that name columns
    groups = 0  # group rows without values taken from above the run
    while len(named) < settings.max_header_lines and len(body) > settings.min_data_lines:
        if not _names_columns(body[0], body[1:], edges, settings):
            break
        named.append(body[0])
        body = body[1:]
    across = joined_rules(rules, settings)
    if named:  # the columns' ink with the naming lines' (kept only where they agree)
        wider = _columns([line for line in body if row_test(line, settings)] + named, settings)
        spans = wider if len(wider) == len(spans) else spans
    else:
        groups = _group_rows(above, body[0], edges, across, settings)
        above, body = above[: len(above) - groups], above[len(above) - groups :] + body
        if groups:  # group rows may be printed left of the rows under them
            edges[0] = x0 = min(x0, *(line[0]["x0"] for line in body[:groups]))
    window = len(above) - (settings.max_header_lines + 2)
    above = [line if k < window else split_at_edges(line, edges) for k, line in enumerate(above)]
    header: list[list[Word]] = list(named)
    rules_crossed = 0
    lower = top(header[0] if header else body[0])
    for line in reversed(above[-(settings.max_header_lines + 2) :]):
        labels = sum(
            1 for h in header if not numbering(h, settings) and not references(h, settings)
        )
        if labels >= settings.max_header_lines:
            break
        crossing = _rule_between(across, bottom(line), lower, x0, x1, settings)
        above_group = groups and not header  # space set above the first group row
        if lower - bottom(line) > line_gap(height(line), settings) * (
            settings.rule_crossed_space
            if rules_crossed or crossing
            else (settings.group_space if above_group else 1)
        ):
            break
        if crossing:
            rules_crossed += 1
            # the table's top rule, unless the header goes on above it: a line of
            # headings over the columns (two or more) above a rule inside the header (a
            # midrule over the units row or the columns' numbers); a caption is one
            inner = len(segments(line, settings)) >= 2
            if not inner and (rules_crossed > 1 or (header and rules_crossed)):
                break
        if line[-1]["x1"] < x0 or line[0]["x0"] > x1 or not is_header(line, edges, settings):
            break
        header.insert(0, line)
        lower = top(line)
    if not header and row_test is not is_data and len(body) > settings.min_data_lines:
        header, body = [body[0]], body[1:]
    notes = _numbered_below(header, settings)
    header = header[: len(header) - len(notes)]
    if not header and not headed:
        return None
    header = wrapped_headings(header, edges, settings)
    grid = header_grid(header, edges, spans, across, settings) if header else []
    for line in notes:  # the columns' numbers and formulas, each under its column
        grid.append(["", *_cells(line, edges)[1:]])
    header += notes
    boxes: list[Box] = [(x0, top(line), x1, bottom(line)) for line in header]
    for line in body:
        cells: list[str | None] = list(_cells(line, edges))
        rest = grid[len(header) :] and (cells[0] or "")[:1].islower()  # a label goes on
        if rest and not row_test(line, settings):
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
