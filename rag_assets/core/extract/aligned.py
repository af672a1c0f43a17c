"""Tables printed without column rules: text aligned in columns, found from the words.

pdfplumber's table finder needs ruled cells; a table set only by alignment (no ruling at
all, or horizontal rules alone: above the header, under it, at the bottom) has none. Such a
table shows up as a run of lines that each hold two or more *segments* (words far apart)
with a value among them, whose segments line up from one line to the next. This module
finds those runs, cuts them into columns where no line (bar a long row label running
over) prints anything, reads the short lines of labels just above as the header (a
heading centred over several columns leads their header path) and returns each table as
the grid `identify_header` reads: `None` marks a position covered by a heading over
several columns, as for a ruled table's merged cells.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any

from rag_assets.core.structure.tables import NUMERIC, YEAR

Box = tuple[float, float, float, float]
Word = dict[str, Any]

GAP_EM = 0.8  # words at least this many character heights apart are in different columns
MIN_ROWS = 3  # data lines a table has at least
MAX_HEADER_LINES = 3
LINE_PITCH = 2.2  # lines of one table are at most this many line heights apart
OVERRUN = 0.1  # share of lines whose ink may cross a column gap (long row labels)
MISSING = {":", "-", "–", "—", "..", "...", "n.a.", "n/a", "x", "*"}  # a value not given
LEADER = re.compile(r"\s*(?:\.\s?){3,}$")  # leader dots running to the next column
CAPTION = re.compile(r"(?i)^(?:table|tabela|tableau|figure|figura|chart|gr[aá]fico|quadro)\b")


@dataclass
class AlignedTable:
    """A table read from aligned text: its box, its grid and each row's box."""

    bbox: Box
    grid: list[list[str | None]]
    row_boxes: list[Box]
    columns: list[float]  # x of every column edge, left to right


def _value(text: str) -> bool:
    """A data value: a number (footnote marks and all), a year, or a not-available mark."""
    text = text.strip()
    return text.lower() in MISSING or bool(NUMERIC.match(text)) or bool(YEAR.match(text))


def _label(text: str) -> bool:
    """A text a header may hold: not a number (a year naming a column is a label)."""
    text = text.strip()
    return bool(text) and (not NUMERIC.match(text) or bool(YEAR.match(text)))


def printed_lines(words: list[Word]) -> list[list[Word]]:
    """Words (or characters) grouped into printed lines by the middle of their height, top
    to bottom, each left to right: the one line grouper of table reading."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: ((w["top"] + w["bottom"]) / 2, w["x0"])):
        middle = (word["top"] + word["bottom"]) / 2
        if lines:
            last = lines[-1]
            mid = statistics.median((w["top"] + w["bottom"]) / 2 for w in last)
            if abs(middle - mid) <= 0.4 * (word["bottom"] - word["top"]):
                last.append(word)
                continue
        lines.append([word])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def _height(line: list[Word]) -> float:
    return statistics.median(w["bottom"] - w["top"] for w in line)


def _segments(line: list[Word]) -> list[list[Word]]:
    """A line's words in runs separated by wide gaps (a column gap, not a space)."""
    gap = max(4.0, GAP_EM * _height(line))
    out: list[list[Word]] = []
    for word in line:
        if out and word["x0"] - out[-1][-1]["x1"] < gap:
            out[-1].append(word)
        else:
            out.append([word])
    return out


def _text(words: list[Word]) -> str:
    return " ".join(w["text"] for w in words)


def _is_data(line: list[Word]) -> bool:
    """A line of a table body: two or more segments, and a value after the first."""
    segments = _segments(line)
    if len(segments) < 2:
        return False
    values = [s for s in segments[1:] if all(_value(w["text"]) for w in s)]
    if all(YEAR.match(_text(s)) for s in values):
        return False  # years over columns: a header line
    return len(values) >= max(1, (len(segments) - 1) // 2)


def _top(line: list[Word]) -> float:
    return min(w["top"] for w in line)


def _bottom(line: list[Word]) -> float:
    return max(w["bottom"] for w in line)


def _columns(lines: list[list[Word]]) -> list[tuple[float, float]]:
    """The x span of each column of a run of data lines: where their segments print ink,
    split where no more than a few lines (a long label running over) print any."""
    x0 = int(min(w["x0"] for line in lines for w in line))
    x1 = int(max(w["x1"] for line in lines for w in line)) + 1
    ink = [0] * (x1 - x0 + 1)
    for line in lines:
        for segment in _segments(line):
            for x in range(int(segment[0]["x0"]) - x0, int(segment[-1]["x1"]) - x0 + 1):
                ink[x] += 1
    allowed = int(OVERRUN * len(lines))
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


def _column_of(x: float, edges: list[float]) -> int:
    return max(0, min(len(edges) - 2, sum(1 for e in edges[1:-1] if x >= e)))


def _cells(line: list[Word], edges: list[float]) -> list[str]:
    """A data line's text by column: each word goes where its middle is."""
    cells: list[list[str]] = [[] for _ in range(len(edges) - 1)]
    for word in line:
        cells[_column_of((word["x0"] + word["x1"]) / 2, edges)].append(word["text"])
    return [LEADER.sub("", " ".join(c)) for c in cells]


def _header_cells(line: list[Word], edges: list[float]) -> list[str | None]:
    """A header line by column. A heading spans the columns it is printed over; a heading
    over fewer columns than the line below names (centred over a group) spans every
    column whose middle is nearer to it than to the next heading; the positions it covers
    after the first are `None`, as a merged cell's."""
    width = len(edges) - 1
    middles = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    segments = _segments(line)
    out: list[str | None] = [""] * width
    spans: list[tuple[int, int]] = []
    for i, segment in enumerate(segments):
        left = segment[0]["x0"]
        right = segment[-1]["x1"]
        lo = (segments[i - 1][-1]["x1"] + left) / 2 if i else edges[1] if left >= edges[1] else -1e9
        hi = (right + segments[i + 1][0]["x0"]) / 2 if i + 1 < len(segments) else 1e9
        inside = [j for j in range(width) if left <= middles[j] <= right]
        # a heading centred over a group spans it only beside another group's heading
        near = [j for j in range(width) if lo <= middles[j] <= hi] if len(segments) > 1 else []
        cols = inside or near or [_column_of((left + right) / 2, edges)]
        spans.append((min(cols), max(cols)))
    taken: set[int] = set()
    for segment, (first, last) in zip(segments, spans, strict=True):
        if first in taken:
            out[first] = f"{out[first]} {_text(segment)}"
            continue
        out[first] = _text(segment)
        for j in range(first + 1, last + 1):
            if j not in taken:
                out[j] = None
        taken.update(range(first, last + 1))
    return out


def _is_header(line: list[Word], edges: list[float]) -> bool:
    """A line that can head the columns: labels only, not a caption or a sentence."""
    text = _text(line)
    labels = sum(1 for w in line if _label(w["text"]))
    if CAPTION.match(text) or _is_data(line) or 2 * labels < len(line):
        return False
    segments = _segments(line)
    widest = max(s[-1]["x1"] - s[0]["x0"] for s in segments)
    return widest <= 0.6 * (edges[-1] - edges[0])


def _rule_between(rules: list[Box], upper: float, lower: float, x0: float, x1: float) -> bool:
    return any(
        upper <= r[1] <= lower and r[0] <= x0 + 0.3 * (x1 - x0) and r[2] >= x1 - 0.3 * (x1 - x0)
        for r in rules
    )


def aligned_tables(words: list[Word], rules: list[Box], taken: list[Box]) -> list[AlignedTable]:
    """The tables set by alignment alone among a page's `words` (those inside `taken`
    boxes, the ruled tables, left out), given the page's horizontal `rules`.

    A table is a run of at least three data lines, lines apart no more than a normal line
    pitch (a label line with no values between them is a row of its own, or the rest of
    the label above when it starts in lower case), with at least two columns and a header
    of up to three lines of labels above it, within its rules. A run with no header is
    not a table: its lines stay text.
    """

    def free(word: Word) -> bool:  # not at the height of a ruled table
        middle = (word["top"] + word["bottom"]) / 2
        return not any(b[1] - 1 <= middle <= b[3] + 1 for b in taken)

    lines = printed_lines(
        [w for w in words if w.get("upright", True) and free(w) and w["text"].strip()]
    )
    data = [_is_data(line) for line in lines]
    out: list[AlignedTable] = []
    i = 0
    while i < len(lines):
        if not data[i]:
            i += 1
            continue
        end = i + 1
        while end < len(lines):
            pitch = LINE_PITCH * _height(lines[end - 1])
            if _top(lines[end]) - _bottom(lines[end - 1]) > pitch:
                break
            if data[end]:
                end += 1
            elif end + 1 < len(lines) and data[end + 1] and len(_segments(lines[end])) == 1:
                end += 1  # a label line inside the table
            else:
                break
        body = lines[i:end]
        table = _read(lines[:i], body, rules)
        if table is not None:
            out.append(table)
        i = end
    return out


def _read(above: list[list[Word]], body: list[list[Word]], rules: list[Box]) -> AlignedTable | None:
    """One run of data lines (and the lines above it) read into a table, or None."""
    values = [line for line in body if _is_data(line)]
    if len(values) < MIN_ROWS:
        return None
    spans = _columns(values)
    if len(spans) < 2:
        return None
    edges = _edges(spans)
    x0, x1 = edges[0], edges[-1]
    header: list[list[Word]] = []
    rules_crossed = 0
    lower = _top(body[0])
    for line in reversed(above[-MAX_HEADER_LINES:]):
        if lower - _bottom(line) > LINE_PITCH * _height(line) * (2 if rules_crossed else 1):
            break
        if _rule_between(rules, _bottom(line), lower, x0, x1):
            rules_crossed += 1
            if rules_crossed > 1 or (header and rules_crossed):
                break  # the table's top rule
        if line[-1]["x1"] < x0 or line[0]["x0"] > x1 or not _is_header(line, edges):
            break
        header.insert(0, line)
        lower = _top(line)
    if not header:
        return None
    grid: list[list[str | None]] = [_header_cells(line, edges) for line in header]
    boxes: list[Box] = [(x0, _top(line), x1, _bottom(line)) for line in header]
    for line in body:
        cells: list[str | None] = list(_cells(line, edges))
        if not _is_data(line) and grid[len(header) :] and (cells[0] or "")[:1].islower():
            last = grid[-1]
            last[0] = f"{last[0] or ''} {cells[0]}".strip()
            boxes[-1] = (x0, boxes[-1][1], x1, _bottom(line))
            continue
        grid.append(cells)
        boxes.append((x0, _top(line), x1, _bottom(line)))
    top = min(b[1] for b in boxes)
    bottom = max(b[3] for b in boxes)
    left = min(x0, *(w["x0"] for line in header for w in line))
    right = max(x1, *(w["x1"] for line in header for w in line))
    return AlignedTable((left, top, right, bottom), grid, boxes, edges)
