"""The stub tree: each row label's path through the group labels above it.

A row label merged over several rows labels each of them, a label's rest cut into a ruled
row of its own goes back to it (`carry_row_labels`, `join_label_rests`); group labels
printed left of a ruled table lead the rows they stand for (`outer_labels`); and rows
indented under a group row get its label (`indent_paths`):

Statistical tables set their row hierarchy by indentation alone: `Total occupied housing
units`, then indented `Inadequate` and `Moderately inadequate`; a group row (with values
or without) heads the rows indented under it, down to the next row printed as far left
as it. A value of `Inadequate` means nothing without its group, so each indented row's
label becomes its path, `Total occupied housing units > Inadequate`, as a column's
heading path does.

Only a stub set flush left with a few clear indent steps is read so: labels right-aligned
or centred (their left edges vary because their lengths do), numbers (years), or indents
too small or too many to be steps leave the labels as printed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from rag_assets.core.tables.cells import blank, header_label, is_value
from rag_assets.core.tables.grid_paths import PATH_SEP
from rag_assets.core.tables.model import Box, Word
from rag_assets.core.tables.settings import TableSettings


def _stub_ink(
    words: list[Word], box: Box, stub: tuple[float, float], settings: TableSettings
) -> tuple[float, float, float] | None:
    """Where the stub label of one row is printed: (left, right, word height)."""
    inside = [
        w
        for w in words
        if box[1] - settings.slack <= (w["top"] + w["bottom"]) / 2 <= box[3] + settings.slack
        and stub[0] - settings.slack <= w["x0"] < stub[1]
        and w["text"].strip()
    ]
    if not inside:
        return None
    return (
        min(w["x0"] for w in inside),
        max(w["x1"] for w in inside),
        statistics.median(w["bottom"] - w["top"] for w in inside),
    )


def _levels(lefts: list[float], tolerance: float) -> list[float]:
    """The distinct left edges, those within `tolerance` of the last kept one merged."""
    out: list[float] = []
    for x in sorted(lefts):
        if not out or x - out[-1] > tolerance:
            out.append(x)
    return out


def indent_paths(
    rows: list[list[str | None]],
    header_rows: int,
    row_boxes: Sequence[Box],
    columns: Sequence[float],
    words: list[Word],
    settings: TableSettings,
) -> int:
    """Give each indented stub label the labels of the rows it is indented under
    (`Group > Row`), in place; returns how many labels got a path. `row_boxes` are the
    rows' boxes, `columns` the column edges (the stub is the first column), `words` the
    page's words."""
    if len(columns) < 2 or len(row_boxes) != len(rows):
        return 0
    stub = (columns[0], columns[1])
    ink: dict[int, tuple[float, float, float]] = {}
    for i in range(header_rows, len(rows)):
        label = (rows[i][0] or "").strip() if rows[i] else ""
        if not label or is_value(label) or not header_label(label):
            continue
        found = _stub_ink(words, row_boxes[i], stub, settings)
        if found is not None:
            ink[i] = found
    if len(ink) < settings.min_stub_rows:
        return 0
    em = statistics.median(h for _, _, h in ink.values())
    tolerance = max(settings.min_indent_tolerance, settings.indent_tolerance_em * em)
    lefts = [x0 for x0, _, _ in ink.values()]
    rights = [x1 for _, x1, _ in ink.values()]
    levels = _levels(lefts, tolerance)
    if not 2 <= len(levels) <= settings.max_indent_levels:
        return 0
    steps = [b - a for a, b in zip(levels, levels[1:], strict=False)]
    low, high = settings.indent_step_em
    if not all(low * em <= s <= high * em for s in steps):
        return 0
    middles = [(a + b) / 2 for a, b in zip(lefts, rights, strict=True)]
    if max(rights) - min(rights) <= tolerance or max(middles) - min(middles) <= tolerance:
        return 0  # right-aligned or centred labels: their left edges say nothing
    stack: list[tuple[int, str]] = []  # (level, label) of the rows above, outermost first
    given = 0
    for i in sorted(ink):
        level = next(k for k, x in enumerate(levels) if ink[i][0] - x <= tolerance)
        label = " ".join((rows[i][0] or "").split())
        while stack and stack[-1][0] >= level:
            stack.pop()
        if stack:
            rows[i][0] = PATH_SEP.join([*(s for _, s in stack), label])
            given += 1
        stack.append((level, label))
    return given


def outer_labels(
    words: list[Word],
    bbox: Box,
    rows: list[list[str | None]],
    header_rows: int,
    row_boxes: Sequence[Box],
    settings: TableSettings,
) -> Box:
    """Group labels printed left of a ruled table, beside some of its rows only (`1991`
    beside the middle one of `Men`, `Women`, `Total`), led onto the labels of the rows
    they stand for (`1991 > Men`), in place; returns the table's box, widened over them.

    A label printed beside a block's first row heads the rows down to the next label; one
    printed lower (at the block's middle) stands for the rows nearer to it than to any
    other label. Only a column of short labels just left of the box, beside at least two
    rows and fewer than half of them (a column beside most rows is the table's own), is
    read so."""
    data = list(range(header_rows, min(len(rows), len(row_boxes))))
    if len(data) < settings.min_stub_rows:
        return bbox
    labels: dict[int, list[Word]] = {}
    for w in words:
        middle = (w["top"] + w["bottom"]) / 2
        if w["x1"] > bbox[0] + settings.slack or not w["text"].strip():
            continue
        row = next((i for i in data if row_boxes[i][1] <= middle <= row_boxes[i][3]), None)
        if row is not None:
            labels.setdefault(row, []).append(w)
    if not 2 <= len(labels) < settings.outer_label_rows * len(data):
        return bbox
    em = statistics.median(w["bottom"] - w["top"] for ws in labels.values() for w in ws)
    texts = {
        i: " ".join(w["text"] for w in sorted(ws, key=lambda w: w["x0"]))
        for i, ws in labels.items()
    }
    lefts = [min(w["x0"] for w in ws) for ws in labels.values()]
    rights = [max(w["x1"] for w in ws) for ws in labels.values()]
    if max(lefts) > min(rights) or bbox[0] - max(rights) > settings.outer_label_gap_em * em:
        return bbox  # not one column just beside the box
    if any(len(t) > settings.outer_label_max_chars for t in texts.values()) or not all(
        rows[i][0] for i in data
    ):
        return bbox
    marked = sorted(texts)
    at_top = marked[0] == data[0]
    for i in data:
        if at_top:
            owner = max(m for m in marked if m <= i)
        else:
            owner = min(marked, key=lambda m: (abs(m - i), -m if m <= i else m))
        rows[i][0] = f"{texts[owner]}{PATH_SEP}{' '.join((rows[i][0] or '').split())}"
    return (min(lefts), bbox[1], bbox[2], bbox[3])


def carry_row_labels(rows: list[list[str | None]]) -> None:
    """A row label merged over several rows (its position empty below it, `None`) is the
    label of each of those rows. Under a stub of two columns (`Asthma | Count`, then
    ` | Percentage`) an empty label is the one above, and a label wrapped onto the next
    row (`Chronic fatigue` / `syndrome`) is one label for both rows."""
    for previous, row in zip(rows, rows[1:], strict=False):
        if not row or not previous or blank(previous[0]):
            continue
        if row[0] is None and any(not blank(c) for c in row[1:]):
            row[0] = previous[0]
            continue
        if len(row) < 3 or not (header_label(row[1]) and header_label(previous[1])):
            continue
        if blank(row[0]):
            row[0] = previous[0]
        elif (row[0] or "")[:1].islower():
            previous[0] = row[0] = f"{previous[0]} {row[0]}"


def join_label_rests(rows: list[list[str | None]], boxes: list[Box], header_rows: int) -> None:
    """A ruled row holding only the rest of the label above it (`(as HCl)`, `compounds
    (NMVOC)`: nothing else filled, starting in lower case or with a bracket), under a row
    with values, is joined to that row's label, in place (`rows` and their `boxes`)."""
    for i in range(len(rows) - 1, header_rows, -1):
        row, above = rows[i], rows[i - 1]
        label = " ".join((row[0] or "").split()) if row else ""
        if not label or any(not blank(c) for c in row[1:]) or blank(above[0]):
            continue
        if not (label[0].islower() or label[0] in "(["):
            continue
        if all(blank(c) for c in above[1:]) or i - 1 < header_rows:
            continue
        above[0] = f"{' '.join((above[0] or '').split())} {label}"
        if i < len(boxes):
            top = boxes[i - 1]
            boxes[i - 1] = (top[0], top[1], max(top[2], boxes[i][2]), boxes[i][3])
            del boxes[i]
        del rows[i]


def join_own_line_labels(rows: list[list[str | None]], boxes: list[Box], header_rows: int) -> None:
    """A row label printed on a line of its own (nothing else filled) over a row of values
    with no label of its own labels those values: the two rows are one, in place (`rows`
    and their `boxes`). A label over a labelled row stays a group row."""
    for i in range(len(rows) - 2, header_rows - 1, -1):
        row, below = rows[i], rows[i + 1]
        if not row or not below or len(row) < 2 or blank(row[0]) or not blank(below[0]):
            continue
        if below[0] is None or any(not blank(c) for c in row[1:]):
            continue
        if not any(not blank(c) for c in below[1:]):
            continue
        below[0] = row[0]
        if i + 1 < len(boxes):
            a, b = boxes[i], boxes[i + 1]
            boxes[i + 1] = (min(a[0], b[0]), a[1], max(a[2], b[2]), b[3])
            del boxes[i]
        del rows[i]


def _joined(upper: str, lower: str) -> str:
    """Two printed lines of one label as one (`Non-` / `farm` as `Non-farm`)."""
    upper, lower = " ".join(upper.split()), " ".join(lower.split())
    if len(upper) > 1 and upper.endswith("-") and upper[-2].isalpha():
        return upper + lower
    return f"{upper} {lower}"


def _usual_gap(
    rows: list[list[str | None]], body: list[int], gaps: list[float], settings: TableSettings
) -> float:
    """The body's usual gap between rows: the median between two rows of values, or,
    where too few rows of values follow one another (every label wrapped), the median
    of the wider half of the gaps."""
    valued = [any(not blank(c) for c in rows[k][1:]) for k in body]
    between = [g for g, a, b in zip(gaps, valued, valued[1:], strict=False) if a and b and g > 0]
    if len(between) >= settings.min_data_lines:
        return statistics.median(between)
    wide = sorted(g for g in gaps if g > 0)
    return statistics.median(wide[len(wide) // 2 :])


def join_wrapped_labels(
    rows: list[list[str | None]], boxes: list[Box], header_rows: int, settings: TableSettings
) -> None:
    """A row label wrapped over printed lines read as rows of their own (`New` / `England
    9,725`, `Asia and` / `Pacific`) is one label: two labelled rows, one of them holding
    no value, set closer than `wrapped_label_gap` of the body's usual gap between rows,
    are one row, in place (`rows` and their `boxes`). A group row set as far from the row
    under it as rows are from each other stays a group row."""
    body = list(range(header_rows, min(len(rows), len(boxes))))
    gaps = [boxes[i + 1][1] - boxes[i][3] for i in body[:-1]]
    if sum(1 for g in gaps if g > 0) < settings.min_data_lines:
        return
    tight = settings.wrapped_label_gap * _usual_gap(rows, body, gaps, settings)
    for i in range(len(body) - 2, -1, -1):
        k = body[i]
        upper, lower = rows[k], rows[k + 1]
        if len(upper) < 2 or len(lower) < 2 or blank(upper[0]) or blank(lower[0]):
            continue
        if any(not blank(c) for c in upper[1:]) and any(not blank(c) for c in lower[1:]):
            continue  # two rows of values
        if not 0 <= boxes[k + 1][1] - boxes[k][3] < tight:
            continue
        lower[0] = _joined(upper[0] or "", lower[0] or "")
        for j in range(1, min(len(upper), len(lower))):
            if blank(lower[j]):
                lower[j] = upper[j]
        a, b = boxes[k], boxes[k + 1]
        boxes[k + 1] = (min(a[0], b[0]), a[1], max(a[2], b[2]), b[3])
        del boxes[k], rows[k]
