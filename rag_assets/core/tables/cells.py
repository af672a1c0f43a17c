"""The one cell classifier: what a table cell's text is.

A cell holds a **figure** (a number, footnote marks and all: `1,234`, `12.5 %`, `54,876*`),
a **not-available mark** (`..`, `n.a.`, `x`: a value not given), a **unit** naming a
column (`%`, `(%)`), a **period** (`2009/10`, `Q1 2008`: a label over a column, a value
in a stub), a **footnote mark** alone (`*`, `†`, `(a)`), or a **label** (anything else,
text). `classify` says which; the predicates below are the questions the readers ask of a
cell, each answered from these patterns here and nowhere else.

Two number patterns exist: `NUMERIC` (the reading of values: currency signs, slashes and
colons allowed, a footnote mark after) and `PLAIN_NUMBER` (the ruled grid's repairs: a
sign, digits, separators, one trailing letter or superscript). They differ on edge cases
(`$5`, `1/2`, `1:2`, `1 (a)`), and the ruled repairs were tuned with the second; both take a
letter against a figure (`84.8r`) as its mark.
"""

from __future__ import annotations

import re
from enum import Enum

from rag_assets.core.hyphens import one_line
from rag_assets.core.tables.settings import TableSettings

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SYMBOL_MARK = rf"\*+|[†‡]+|[{SUPERSCRIPTS}]+"  # stars, a dagger, superscript digits
# a footnote mark after a value: a symbol, `1)` or `(a)`
MARK = rf"(?:{SYMBOL_MARK}|\(?[0-9a-z]\))"
# a figure: `12.5 %`, `$1,378`, `−14.7*`, `84.8r` (a letter against a figure marks it:
# revised, preliminary, estimated, a note), − a minus sign
NUMERIC = re.compile(rf"^(?:R\$)?[\d\s.,%/:+()$€\u2212-]+(?:\s*{MARK}|(?<=\d)[a-z])?$")
# a column named by a year or period (`1990`, `2009/10`, `2008*`): a header, not a value
YEAR = re.compile(rf"^(?:Q[1-4]\s*)?(?:19|20)\d\d(?:\s*[/-]\s*\d{{2,4}})?(?:\s*{MARK})?$")
UNIT = re.compile(r"^\(?[%$€]\)?$")  # a unit naming a column: `%`, `(%)`, `($)`
PLAIN_NUMBER = re.compile(r"^[-–\u2212+]?[\d\s.,%()]*\d[\d\s.,%()]*[*a-z¹²³]?$")
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
    MISSING = "not available"
    MARK = "footnote mark"
    LABEL = "label"


def classify(cell: str | None) -> CellKind:
    """What a cell holds: empty, a unit, a period, a figure, a not-available mark, a
    footnote mark or a label, tested in that order (`%` is a unit, `2008` a period, `-`
    a figure's pattern before a mark)."""
    text = (cell or "").strip()
    if not text:
        return CellKind.EMPTY
    if UNIT.match(text):
        return CellKind.UNIT
    if YEAR.match(text):
        return CellKind.PERIOD
    if NUMERIC.match(text):
        return CellKind.FIGURE
    if text.lower() in MISSING:
        return CellKind.MISSING
    if MARK_ONLY.match(text):
        return CellKind.MARK
    return CellKind.LABEL


def blank(cell: str | None) -> bool:
    """An empty cell: nothing printed in it (`None`, a merged-over position, or spaces)."""
    return classify(cell) is CellKind.EMPTY


def numeric(cell: str | None) -> bool:
    """A filled cell matching the figure pattern (units and periods do too)."""
    return not blank(cell) and bool(NUMERIC.match((cell or "").strip()))


def is_value(text: str) -> bool:
    """A data value of an aligned body: a figure, a period or a not-available mark (a
    unit alone, `%`, matches the figure pattern and counts as one)."""
    return classify(text) in (CellKind.FIGURE, CellKind.PERIOD, CellKind.MISSING, CellKind.UNIT)


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
    """A filled cell that can name a column: not a figure, or a period or a unit."""
    if blank(cell):
        return False
    text = (cell or "").strip()
    return not NUMERIC.match(text) or classify(text) in (CellKind.PERIOD, CellKind.UNIT)


def is_label(text: str) -> bool:
    """A text a header may hold: not a figure (a period naming a column is a label)."""
    kind = classify(text)
    if kind is CellKind.EMPTY:
        return False
    return not NUMERIC.match(text.strip()) or kind is CellKind.PERIOD


def header_cell(cell: str | None, settings: TableSettings) -> bool:
    """A cell a header row may hold: empty, merged, or a short label, period or unit."""
    if blank(cell):
        return True
    text = " ".join((cell or "").split())
    return header_label(text) and len(text) <= settings.header_cell_max_chars


def names_column(cell: str | None) -> bool:
    """A cell that can name a ruled column: filled, and no plain number (a value)."""
    return not blank(cell) and not PLAIN_NUMBER.match((cell or "").strip())


def plain_number(text: str | None) -> bool:
    """A cell the ruled repairs read as a number (`PLAIN_NUMBER`)."""
    return bool(PLAIN_NUMBER.match(text or ""))


def values_cell(cell: str | None) -> bool:
    """A cell of values: numbers or not-available marks, one or several side by side (sub-
    columns ruled as one column: `11,062.6 1,540.0 9,522.6`), at least one a number."""
    tokens = (cell or "").split()
    numbers = [t for t in tokens if PLAIN_NUMBER.match(t)]
    return bool(numbers) and all(PLAIN_NUMBER.match(t) or t.lower() in MISSING for t in tokens)


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
