"""Right-to-left text (Hebrew, Arabic) back in reading order.

Why: a PDF places glyphs; the reader strings them left to right by position, so a Hebrew
label printed `סך הכל` comes out as `לכה ךס`, which no query, tokenizer or ground truth
matches. This turns a line or a cell from that visual order back into the logical order a
person types: each right-to-left run reversed, and on a line mostly right-to-left the
runs themselves in reverse, numbers and Latin words kept as printed inside it (the
inverse of the display a bidirectional renderer does, for the plain case of one level).
Text with no right-to-left letter is returned as it is.
"""

from __future__ import annotations

import re
import unicodedata

_RTL_LETTER = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_MIRRORED = str.maketrans("()[]{}<>«»", ")(][}{><»«")


def right_to_left(text: str) -> bool:
    """Whether `text` holds a Hebrew or Arabic letter."""
    return _RTL_LETTER.search(text) is not None


def _strength(char: str) -> str:
    """`R` for a right-to-left letter, `L` for a left-to-right one or a digit (numbers read
    left to right inside any line), `N` for what takes its neighbours' direction."""
    kind = unicodedata.bidirectional(char)
    if kind in ("R", "AL"):
        return "R"
    if kind in ("L", "EN", "AN"):
        return "L"
    return "N"


def logical_order(text: str) -> str:
    """A line or a cell as a reader gets it from the page (visual order, left to right)
    in the order it is read: right-to-left runs reversed, mirrored brackets swapped, and
    on a line of mostly right-to-left letters the runs in reverse order."""
    if not right_to_left(text):
        return text
    kinds = [_strength(c) for c in text]
    base = "R" if kinds.count("R") > kinds.count("L") else "L"
    resolved = list(kinds)
    i = 0
    while i < len(kinds):  # a neutral run takes its neighbours' direction when they agree
        if kinds[i] != "N":
            i += 1
            continue
        end = i
        while end < len(kinds) and kinds[end] == "N":
            end += 1
        before = kinds[i - 1] if i > 0 else base
        after = kinds[end] if end < len(kinds) else base
        side = before if before == after else base
        resolved[i:end] = [side] * (end - i)
        i = end
    runs: list[tuple[str, str]] = []
    for char, kind in zip(text, resolved, strict=True):
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + char)
        else:
            runs.append((kind, char))
    parts = [run[::-1].translate(_MIRRORED) if kind == "R" else run for kind, run in runs]
    if base == "R":
        parts.reverse()
    return "".join(parts)
