"""Pages set in text columns: the gutter between two columns of prose, and the page's
words cut at it, so that a table inside one column is read without the other column's
lines printed beside its rows (those lines share a printed line with each row and turn
every row into a row with a sentence in its last column)."""

from __future__ import annotations

import math
from collections import defaultdict

from rag_assets.core.tables.cells import is_value
from rag_assets.core.tables.model import Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import height, printed_lines, segments


def _open_and_inked(lines: list[list[list[Word]]], width: int) -> tuple[list[int], list[int]]:
    """Per point across the page: on how many lines it lies in a column gap (between two
    segments), and on how many a word covers it."""
    open_at, ink_at = [0] * width, [0] * width
    for parts in lines:
        for left, right in zip(parts, parts[1:], strict=False):
            for x in range(max(0, math.ceil(left[-1]["x1"])), min(width, int(right[0]["x0"]) + 1)):
                open_at[x] += 1
        for word in (w for part in parts for w in part):
            for x in range(max(0, int(word["x0"])), min(width, math.ceil(word["x1"]))):
                ink_at[x] += 1
    return open_at, ink_at


def _is_prose(part: list[Word], side: float, settings: TableSettings) -> bool:
    """A segment of a sentence set across a text column `side` points wide: several
    words, few of them figures, filling most of the column."""
    worded = [w for w in part if any(c.isalpha() for c in w["text"])]  # no leader dots
    if len(worded) < settings.text_column_words:
        return False
    if sum(is_value(w["text"]) for w in part) > len(part) / 3:
        return False
    return part[-1]["x1"] - part[0]["x0"] >= settings.text_column_fill * side


def gutters(words: list[Word], settings: TableSettings) -> list[tuple[float, float, float]]:
    """The gutters between columns of prose on a page: (x, top, bottom) of each, where a
    gap stays open down many lines, few lines print across it, and at least
    `text_column_lines` lines on one side, `text_column_other_lines` on the other, are
    sentences filling their column. Empty on a page set in
    one column, and for the gaps between a table's columns (its cells are no sentences;
    a long row label, even with leader dots, has none beside it)."""
    if not words:
        return []
    lines = [segments(line, settings) for line in printed_lines(words, settings)]
    left_edge = min(w["x0"] for w in words)
    right_edge = max(w["x1"] for w in words)
    open_at, ink_at = _open_and_inked(lines, math.ceil(right_edge) + 2)
    runs: list[list[int]] = []
    for x in range(len(open_at)):
        good = open_at[x] >= settings.text_column_lines
        if good and ink_at[x] <= settings.column_overrun * (open_at[x] + ink_at[x]):
            if runs and runs[-1][-1] == x - 1:
                runs[-1].append(x)
            else:
                runs.append([x])
    out: list[tuple[float, float, float]] = []
    for run in runs:
        x0, x1 = run[0], run[-1]
        sides = (x0 - left_edge, right_edge - x1)
        if min(sides) <= 0 or max(sides) > settings.text_column_ratio * min(sides):
            continue
        left = [
            p
            for ps in lines
            for p in ps
            if p[-1]["x1"] <= x0 + 1 and _is_prose(p, sides[0], settings)
        ]
        right = [
            p
            for ps in lines
            for p in ps
            if p[0]["x0"] >= x1 - 1 and _is_prose(p, sides[1], settings)
        ]
        fewer, more = sorted((len(left), len(right)))
        if more >= settings.text_column_lines and fewer >= settings.text_column_other_lines:
            prose = left + right
            top = min(w["top"] for part in prose for w in part)
            bottom = max(w["bottom"] for part in prose for w in part)
            out.append(((x0 + x1) / 2, top, bottom))
    return out


def by_text_column(words: list[Word], settings: TableSettings) -> list[list[Word]]:
    """The page's words in groups a table may be found in: one group a text column, cut
    at each gutter over the height its prose runs (lines that print across a gutter, and
    words above or below its prose, go with the column left of it). One group on a page
    set in one column."""
    found = gutters(words, settings)
    if not found:
        return [words]
    groups: dict[int, list[Word]] = defaultdict(list)
    for line in printed_lines(words, settings):
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
