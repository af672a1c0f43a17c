"""Pages set in text columns: the gutter between two columns of prose, and the page's
words cut at it, so that a table inside one column is read without the other column's
lines printed beside its rows (those lines share a printed line with each row and turn
every row into a row with a sentence in its last column)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from itertools import accumulate

from rag_assets.core.tables.cells import is_value
from rag_assets.core.tables.model import Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import height, printed_lines, segments


def open_runs(
    gaps: Iterable[tuple[int, int]],
    inks: Iterable[tuple[int, int]],
    width: int,
    min_open: int,
    max_share: float,
) -> list[tuple[int, int]]:
    """The runs of points across a page (first, last) where at least `min_open` lines
    have a gap and ink covers no more than `max_share` of the lines that print either
    there: the gutters between columns, for text (`extract/columns.py`) and for tables
    alike. `gaps` and `inks` are point ranges [start, end), one per gap or piece of ink
    of a line."""
    open_at, ink_at = _per_point(gaps, width), _per_point(inks, width)
    runs: list[tuple[int, int]] = []
    for x, (gap, ink) in enumerate(zip(open_at, ink_at, strict=True)):
        if gap < min_open or ink > max_share * (gap + ink):
            continue
        if runs and runs[-1][1] == x - 1:
            runs[-1] = (runs[-1][0], x)
        else:
            runs.append((x, x))
    return runs


def _per_point(ranges: Iterable[tuple[int, int]], width: int) -> list[int]:
    """How many of the point ranges [start, end) cover each point across the page."""
    steps = [0] * (width + 1)
    for a, b in ranges:
        a, b = max(0, a), min(width, b)
        if a < b:
            steps[a] += 1
            steps[b] -= 1
    return list(accumulate(steps[:width]))


def _cleanest(run: tuple[int, int], ink_at: list[int]) -> tuple[int, int]:
    """The part of an open run where the fewest lines print (the first such part): a
    run that takes in the white beside a narrow table runs on past the true gutter."""
    least = min(ink_at[run[0] : run[1] + 1])
    start = next(x for x in range(run[0], run[1] + 1) if ink_at[x] == least)
    end = start
    while end + 1 <= run[1] and ink_at[end + 1] == least:
        end += 1
    return start, end


def _sentence(part: list[Word], settings: TableSettings) -> bool:
    """A segment that may be a line of prose, its width aside: several words, few of
    them figures (leader dots are no words)."""
    if len(part) < settings.text_column_words:
        return False
    worded = [w for w in part if any(c.isalpha() for c in w["text"])]
    if len(worded) < settings.text_column_words:
        return False
    return sum(is_value(w["text"]) for w in part) <= len(part) / settings.text_column_figures


def gutters(words: list[Word], settings: TableSettings) -> list[tuple[float, float, float]]:
    """The gutters between columns of prose on a page: (x, top, bottom) of each, where a
    gap stays open down many lines (a line printed on one side only leaves it open),
    few lines print across it, and at least
    `text_column_lines` lines on one side, `text_column_other_lines` on the other, are
    sentences filling their column. Empty on a page set in one column, and for the gaps
    between a table's columns (its cells are no sentences; a long row label, even with
    leader dots, has none beside it)."""
    return _gutters(printed_lines(words, settings), settings)


def _gutters(
    printed: list[list[Word]], settings: TableSettings
) -> list[tuple[float, float, float]]:
    """`gutters` of a page's printed lines (grouped once, by the caller)."""
    if not printed:
        return []
    lines = [segments(line, settings) for line in printed]
    sentences = [p for parts in lines for p in parts if _sentence(p, settings)]
    if len(sentences) < settings.text_column_lines + settings.text_column_other_lines:
        return []  # too few sentences on the page for columns of prose
    left_edge = min(w["x0"] for line in printed for w in line)
    right_edge = max(w["x1"] for line in printed for w in line)
    gaps = [
        (math.ceil(left[-1]["x1"]), int(right[0]["x0"]) + 1)
        for parts in lines
        for left, right in zip(parts, parts[1:], strict=False)
    ]
    # a line printed in one column only leaves the gutter open too: a short column of
    # prose beside a table shares few lines with the column holding the table
    gaps += [(math.ceil(line[-1]["x1"]), math.ceil(right_edge) + 1) for line in printed]
    gaps += [(int(left_edge), int(line[0]["x0"])) for line in printed]
    inks = [(int(w["x0"]), math.ceil(w["x1"])) for line in printed for w in line]
    width = math.ceil(right_edge) + 2
    runs = open_runs(gaps, inks, width, settings.text_column_lines, settings.column_overrun)
    ink_at = _per_point(inks, width)
    out: list[tuple[float, float, float]] = []
    for x0, x1 in (_cleanest(run, ink_at) for run in runs):
        sides = (x0 - left_edge, right_edge - x1)
        if min(sides) <= 0 or max(sides) > settings.text_column_ratio * min(sides):
            continue
        fill = [settings.text_column_fill * side for side in sides]
        left = [p for p in sentences if p[-1]["x1"] <= x0 + 1 and _span(p) >= fill[0]]
        right = [p for p in sentences if p[0]["x0"] >= x1 - 1 and _span(p) >= fill[1]]
        fewer, more = sorted((len(left), len(right)))
        if more >= settings.text_column_lines and fewer >= settings.text_column_other_lines:
            prose = left + right
            top = min(w["top"] for part in prose for w in part)
            bottom = max(w["bottom"] for part in prose for w in part)
            out.append(((x0 + x1) / 2, top, bottom))
    return out


def _span(part: list[Word]) -> float:
    """How wide a segment prints."""
    return part[-1]["x1"] - part[0]["x0"]


def by_text_column(words: list[Word], settings: TableSettings) -> list[list[Word]]:
    """The page's words in groups a table may be found in: one group a text column, cut
    at each gutter over the height its prose runs (lines that print across a gutter, and
    words above or below its prose, go with the column left of it). One group on a page
    set in one column."""
    printed = printed_lines(words, settings)
    found = _gutters(printed, settings)
    if not found:
        return [words]
    groups: dict[int, list[Word]] = defaultdict(list)
    for line in printed:
        middle = (line[0]["top"] + line[0]["bottom"]) / 2
        pitch = height(line)
        cuts = [
            x
            for x, top, bottom in found
            if top - pitch <= middle <= bottom + pitch
            and not any(w["x0"] < x < w["x1"] for w in line)
        ]
        for word in line:
            centre = (word["x0"] + word["x1"]) / 2
            groups[sum(1 for x in cuts if centre > x)].append(word)
    return [groups[k] for k in sorted(groups)]
