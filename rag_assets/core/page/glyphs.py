"""Glyphs as pdfplumber gives them (`Word`: a character or a word, a dict), and which
way they run: upright, or turned a quarter (read bottom to top). Shared by the page
readers (`extract`: rotation, superscripts) and the table readers (`tables.upward`)."""

from __future__ import annotations

from typing import Any

Word = dict[str, Any]  # a word (or character) as pdfplumber gives it

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
"""The superscript digits, 0 to 9 (a footnote's or an exponent's mark)."""

UPRIGHT_TILT = 0.1
"""How far a character's matrix may lean and still run left to right: a tilt under
about 6 degrees (`TableSettings.upright_tilt`'s default)."""


def is_upright(char: Word, tilt: float = UPRIGHT_TILT) -> bool:
    """Whether a character runs left to right (a lean under `tilt` allowed)."""
    matrix = char.get("matrix") or (1, 0, 0, 1)
    return matrix[0] > 0 and abs(matrix[1]) <= tilt * matrix[0]


def runs_upward(chars: list[Word], tilt: float = UPRIGHT_TILT) -> bool:
    """Whether most of these characters run bottom to top (text turned a quarter
    counter-clockwise, as a narrow column's heading is printed)."""
    up = down = 0
    for c in chars:
        if c["text"].strip() and not is_upright(c, tilt):
            b = (c.get("matrix") or (1, 0, 0, 1))[1]
            up += b > 0
            down += b < 0
    return up > down
