"""Words of a page grouped as tables print them: into printed lines, and each line into
segments (runs of words separated by a column gap, not a space). Shared by the readers
of aligned tables (`aligned`), of their headings (`heading_tree`) and of ruled rows
(`ruled_repair`)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from rag_assets.core.tables.cells import is_value
from rag_assets.core.tables.model import Word
from rag_assets.core.tables.settings import TableSettings


def y_tolerance(page: Any, settings: TableSettings) -> float:
    """How far apart (pt) two characters' tops may be on one printed line of a pdfplumber
    page: `word_y_tolerance_em` of the page's median type size, at most pdfplumber's 3 pt.
    In 5 pt type a vertically centred heading's lines sit 3 pt from its neighbours', and
    pdfplumber's 3 pt interleaves their letters (`Pcehracnegnet`)."""
    sizes = [c["size"] for c in page.chars if c["text"].strip()]
    size = statistics.median(sizes) if sizes else 10.0
    return min(3.0, settings.word_y_tolerance_em * size)


def page_words(page: Any, settings: TableSettings) -> list[Word]:
    """A pdfplumber page's words, characters joined into lines by `y_tolerance`."""
    return page.extract_words(
        x_tolerance=settings.word_x_tolerance,
        y_tolerance=y_tolerance(page, settings),
        return_chars=True,  # headings set so tight they touch are cut by their characters
    )


def printed_lines(words: list[Word], settings: TableSettings) -> list[list[Word]]:
    """Words (or characters) grouped into printed lines by the middle of their height, top
    to bottom, each left to right: the one line grouper of table reading."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: ((w["top"] + w["bottom"]) / 2, w["x0"])):
        middle = (word["top"] + word["bottom"]) / 2
        if lines:
            last = lines[-1]
            mid = statistics.median((w["top"] + w["bottom"]) / 2 for w in last)
            if abs(middle - mid) <= settings.same_line_em * (word["bottom"] - word["top"]):
                last.append(word)
                continue
        lines.append([word])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def height(line: list[Word]) -> float:
    """The median height of a line's words (its type size, near enough)."""
    return statistics.median(w["bottom"] - w["top"] for w in line)


def segments(line: list[Word], settings: TableSettings) -> list[list[Word]]:
    """A line's words in runs separated by wide gaps (a column gap, not a space); a word
    cut from touching headings at a column edge (`cut`) starts a run of its own."""
    gap = max(settings.min_column_gap, settings.column_gap_em * height(line))
    out: list[list[Word]] = []
    for word in line:
        if out and word["x0"] - out[-1][-1]["x1"] < gap and not word.get("cut"):
            out[-1].append(word)
        else:
            out.append([word])
    return out


def split_tight(
    parts: list[list[Word]], apart: Callable[[Word, Word], bool], settings: TableSettings
) -> list[list[Word]]:
    """Segments cut further between two words closer than a column gap yet wider apart
    than a space (`tight_gap_em`), where `apart(left, right)` says they are in two
    columns: numbers in tightly set columns (`14,111 16,635`), headings over them. Whether
    the type is monospaced is judged on the whole line: two words of a segment may agree
    in width per character by chance (`Private Public`, set a thin space apart)."""
    out: list[list[Word]] = []
    mono = _mono_width([w for part in parts for w in part], settings)
    for part in parts:
        gap = settings.tight_gap_em * height(part)
        words_gap = max(gap, settings.mono_space * mono)  # a space in mono type
        current = [part[0]]
        for left, right in zip(part, part[1:], strict=False):
            space = right["x0"] - left["x1"]
            wide = space >= words_gap or (  # two numbers split at the narrower gap alone
                space >= gap and is_value(left["text"]) and is_value(right["text"])
            )
            if wide and apart(left, right):
                out.append(current)
                current = []
            current.append(right)
        out.append(current)
    return out


def _mono_width(words: list[Word], settings: TableSettings) -> float:
    """The width of one character when the words are set in a monospaced type (every
    word as wide per character, within `mono_widths`), else 0: there a space is as wide as a
    letter, wider than `tight_gap_em`, and a heading's words are no columns. Words of
    figures alone tell nothing: proportional types set digits (and the en dash) at one
    width too, so `2016–17 2017–18` over tightly set columns would read as one heading."""
    widths = [
        (w["x1"] - w["x0"]) / len(w["text"])
        for w in words
        if len(w["text"]) >= 2 and any(c.isalpha() for c in w["text"])
    ]
    if len(widths) < 2 or max(widths) > settings.mono_widths * min(widths):
        return 0.0
    return statistics.median(widths)


def text(words: list[Word]) -> str:
    """The words' text, one space between them."""
    return " ".join(w["text"] for w in words)


def top(line: list[Word]) -> float:
    """Where the highest word of a line starts."""
    return min(w["top"] for w in line)


def bottom(line: list[Word]) -> float:
    """Where the lowest word of a line ends."""
    return max(w["bottom"] for w in line)


def apart(
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
