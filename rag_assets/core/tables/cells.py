"""The one cell classifier: what a table cell's text is.

A cell holds a **figure** (a number, footnote marks and all: `1,234`, `12.5 %`, `54,876*`),
a **date or code** (`26-02-2014`, `10:30:15`, a phone number: a value, no figure), a
**not-available mark** (`..`, `n.a.`, `x`: a value not given), a **unit** naming a
column (`%`, `(%)`), a **period** (`2009/10`, `Q1 2008`: a label over a column, a value
in a stub), a **footnote mark** alone (`*`, `†`, `(a)`), or a **label** (anything else,
text). `classify` is the one entry: every predicate below (the questions the readers ask
of a cell) answers from it and these patterns, here and nowhere else.

A figure is one pattern (`FIGURE`), for every reader and repair: a digit at least, with
separators, a sign (a hyphen, a minus sign or an en dash printed as one, `–14.7`), a
currency (`$5`, `R$ 1.200`), a fraction or ratio (`1/2`, `1:2`), and a footnote mark after
it (`54,876†`, `1,234⁴`, `1 (a)`, `84.8r`); a year or a year span (`2009/10`) is a period
first. One label predicate (`header_label`): a cell that can name a column is no figure
and no bare mark (`-`, `..`, `*`, `†`): a label, a period, a unit, or a not-available or
footnote mark written with a letter (`n.a.`, `x`, `(a)`). The tests pin each case and
why (`tests/test_table_cells.py`).
"""

from __future__ import annotations

import re
from enum import Enum

from rag_assets.core.hyphens import one_line
from rag_assets.core.page import SUPERSCRIPTS
from rag_assets.core.tables.settings import TableSettings

SYMBOL_MARK = rf"\*+|[†‡]+|[{SUPERSCRIPTS}]+"  # stars, a dagger, superscript digits
# a footnote mark after a value: a symbol, `1)` or `(a)`
MARK = rf"(?:{SYMBOL_MARK}|\(?[0-9a-z]\))"
# a figure: `12.5 %`, `$1,378`, `−14.7*`, `–14.7` (an en dash printed as the minus),
# `84.8r` (a letter against a figure marks it: revised, preliminary, estimated, a note);
# a digit at least (`-`, `..`, `:` alone are not-available marks); − a minus sign
_FIGURE_CHARS = r"[\d\s.,%/:+()$€\u2212-]"
FIGURE = re.compile(
    rf"^(?:R\$)?\(?–?{_FIGURE_CHARS}*\d{_FIGURE_CHARS}*(?:\s*{MARK}|(?<=\d)[a-z])?$"
)
# a column named by a year or period (`1990`, `2009/10`, `2008*`): a header, not a value
YEAR = re.compile(rf"^(?:Q[1-4]\s*)?(?:19|20)\d\d(?:\s*[/-]\s*\d{{2,4}})?(?:\s*{MARK})?$")
# digit groups joined by two separators or more: a date, a time, a phone number or a code
# (`26-02-2014`, `10:30:15`, `0920/66/9419`), no figure
JOINED = re.compile(r"\d\s*[-/:]\s*\d+\s*[-/:]\s*\d")
UNIT = re.compile(r"^\(?[%$€]\)?$")  # a unit naming a column: `%`, `(%)`, `($)`
# a value not given (the statistical agencies' marks: not available, withheld, suppressed)
MISSING = {
    ":",
    "-",
    "–",
    "—",
    "..",
    "...",
    "n.a.",
    "n/a",
    "x",
    "(x)",
    "*",
    "(na)",
    "(d)",
    "(s)",
    "(z)",
}
MARK_ONLY = re.compile(rf"^(?:{SYMBOL_MARK}|\(?[a-z]\))$")
LEADER = re.compile(r"\s*(?:\.\s?){3,}$")  # leader dots running to the next column
COLUMN_NUMBER = re.compile(r"^\(?(\d{1,2})\)?=?$")  # `1`, `(2)`, `2=`: a column's number
SMALL_NUMBER = re.compile(r"^\d{1,3}$")  # a grade, an age or a rank naming a column
# a value with its mark printed against it; a digit before `)` is a mark only where it
# breaks the number's thousands groups (`54,8761)`)
MARKED = re.compile(
    rf"^([-–\u2212+]?\d[\d.,\s]*?(?:\d{{1,3}}(?:[.,\s]\d{{3}})+|\d))"
    rf"((?:{SYMBOL_MARK}|\(?[a-z]\)|\(\d\))|(?<=\d{{3}})\d\))$"
)


class CellKind(Enum):
    """What a cell's text is (see the module docstring)."""

    EMPTY = "empty"
    UNIT = "unit"
    PERIOD = "period"
    FIGURE = "figure"
    DATE = "date or code"
    MISSING = "not available"
    MARK = "footnote mark"
    LABEL = "label"


def classify(cell: str | None) -> CellKind:
    """What a cell holds: empty, a unit, a period, a figure, a not-available mark, a
    footnote mark or a label, tested in that order (`%` is a unit, `2008` a period)."""
    text = (cell or "").strip()
    if not text:
        return CellKind.EMPTY
    if UNIT.match(text):
        return CellKind.UNIT
    if YEAR.match(text):
        return CellKind.PERIOD
    if FIGURE.match(text):
        return CellKind.DATE if JOINED.search(text) else CellKind.FIGURE
    if text.lower() in MISSING:
        return CellKind.MISSING
    if MARK_ONLY.match(text):
        return CellKind.MARK
    return CellKind.LABEL


def blank(cell: str | None) -> bool:
    """An empty cell: nothing printed in it (`None`, a merged-over position, or spaces)."""
    return classify(cell) is CellKind.EMPTY


def figure(cell: str | None) -> bool:
    """A figure (not a period, a unit or a not-available mark)."""
    return classify(cell) is CellKind.FIGURE


def number(cell: str | None) -> bool:
    """What prints as a number in a table's body: a figure or a period (`2008`)."""
    return classify(cell) in (CellKind.FIGURE, CellKind.PERIOD)


def is_value(text: str) -> bool:
    """A data value of a table's body: a figure, a period, a date or code, a
    not-available mark or a unit alone (`%`)."""
    return classify(text) in (
        CellKind.FIGURE,
        CellKind.PERIOD,
        CellKind.DATE,
        CellKind.MISSING,
        CellKind.UNIT,
    )


def is_period(text: str) -> bool:
    """A year or period (`1990`, `2009/10`, `Q1 2008`): a label over a column."""
    return classify(text) is CellKind.PERIOD


def not_available(text: str) -> bool:
    """A not-available mark (`..`, `-`, `n.a.`, `x`), whatever else its pattern matches."""
    return text.strip().lower() in MISSING


def small_number(text: str | None) -> bool:
    """A short integer (`1`, `12`, `250`): a grade, an age or a rank may name a column."""
    return bool(SMALL_NUMBER.match((text or "").strip()))


def column_number(text: str | None) -> int | None:
    """The number a cell gives its column (`1`, `(2)`, `2=`), or None."""
    match = COLUMN_NUMBER.match((text or "").strip())
    return int(match.group(1)) if match else None


def without_leader(text: str) -> str:
    """A cell's text without the leader dots running from it to the next column."""
    return LEADER.sub("", text)


def header_label(cell: str | None) -> bool:
    """A filled cell that can name a column: a label, a period or a unit, or a
    not-available mark or footnote mark written with a letter (`n.a.`, `(a)`); no figure,
    and no bare mark (`-`, `..`, `*`, `†`)."""
    kind = classify(cell)
    if kind in (CellKind.LABEL, CellKind.PERIOD, CellKind.UNIT):
        return True
    return kind in (CellKind.MISSING, CellKind.MARK) and any(c.isalpha() for c in cell or "")


def header_cell(cell: str | None, settings: TableSettings) -> bool:
    """A cell a header row may hold: empty, merged, or a short label, period or unit."""
    if blank(cell):
        return True
    text = " ".join((cell or "").split())
    return header_label(text) and len(text) <= settings.header_cell_max_chars


def values_cell(cell: str | None) -> bool:
    """A cell of values: numbers or not-available marks, one or several side by side (sub-
    columns ruled as one column: `11,062.6 1,540.0 9,522.6`), at least one a number."""
    if figure(cell):
        return True
    tokens = (cell or "").split()
    numbers = [t for t in tokens if number(t)]
    return bool(numbers) and all(number(t) or t.lower() in MISSING for t in tokens)


def separate_mark(cell: str) -> str:
    """A value with its footnote mark set apart by a space (`54,876*` -> `54,876 *`,
    `1,234¹` -> `1,234 ¹`, `54,8761)` -> `54,876 1)`), so that the number reads, and is
    searched, as printed without its mark."""
    text = cell.strip()
    match = MARKED.match(text)
    return f"{match.group(1)} {match.group(2)}" if match else cell


def clean_cell(cell: str | None) -> str:
    """A cell as stored: on one line, hyphenated words joined, a footnote mark set apart."""
    return separate_mark(one_line(cell or ""))
