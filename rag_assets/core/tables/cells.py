"""The one cell classifier: what a table cell's text is.

A cell holds a **figure** (a number, footnote marks and all: `1,234`, `12.5 %`, `54,876*`),
a **not-available mark** (`..`, `n.a.`, `x`: a value not given), a **unit** naming a
column (`%`, `(%)`), a **period** (`2009/10`, `Q1 2008`: a label over a column, a value
in a stub), a **footnote mark** alone (`*`, `†`, `(a)`), or a **label** (anything else,
text). `classify` is the one entry: every predicate below (the questions the readers ask
of a cell) answers from it and these patterns, here and nowhere else.

A figure has two readings, both through `classify`: the values' (`NUMERIC`: currency
signs, slashes and colons allowed, any footnote mark after) and the ruled repairs'
stricter one (`classify(cell, strict=True)`, `PLAIN_NUMBER`: a sign, digits, separators,
one trailing letter, star or superscript), with which those repairs were tuned. They
differ on `$5`, `1/2`, `1:2`, `1 (a)`, `54,876†`, `1,234⁴`, `R$ 1.200`, dates, and a
minus printed as an en dash (`–14.7`: a label to the values' reading); the tests pin
each answer (`tests/test_table_cells.py`). One reading for both changes how the ruled
repairs read 1,500 printed strings of the bench sources (dollar amounts, dates, ranges),
and an en-dash minus as a figure reads tabula's `rotated_page.pdf` further (21 more rows
in its table): changes to measure on every source, not refactors. One label predicate
(`header_label`, `is_label` the same question): a cell that can name a column is no
figure, or a period or a unit.
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
# the ruled repairs' stricter number (tuned so): a sign, digits and separators, one mark
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


def classify(cell: str | None, strict: bool = False) -> CellKind:
    """What a cell holds: empty, a unit, a period, a figure, a not-available mark, a
    footnote mark or a label, tested in that order (`%` is a unit, `2008` a period, `-`
    a figure's pattern before a mark). `strict`: the ruled repairs' reading, where a
    figure is a `PLAIN_NUMBER` as printed (a year too) and nothing else is one."""
    text = (cell or "").strip()
    if not text:
        return CellKind.EMPTY
    if strict and PLAIN_NUMBER.match(cell or ""):
        return CellKind.FIGURE
    if UNIT.match(text):
        return CellKind.UNIT
    if YEAR.match(text):
        return CellKind.PERIOD
    if not strict and NUMERIC.match(text):
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
    """A text a header may hold: `header_label` (a period or a unit naming a column is a
    label)."""
    return header_label(text)


def header_cell(cell: str | None, settings: TableSettings) -> bool:
    """A cell a header row may hold: empty, merged, or a short label, period or unit."""
    if blank(cell):
        return True
    text = " ".join((cell or "").split())
    return header_label(text) and len(text) <= settings.header_cell_max_chars


def names_column(cell: str | None) -> bool:
    """A cell that can name a ruled column: filled, and no plain number (a value)."""
    return not blank(cell) and not plain_number((cell or "").strip())


def plain_number(text: str | None) -> bool:
    """A number as the ruled repairs read it: a figure in `classify`'s strict reading."""
    return classify(text, strict=True) is CellKind.FIGURE


def values_cell(cell: str | None) -> bool:
    """A cell of values: numbers or not-available marks, one or several side by side (sub-
    columns ruled as one column: `11,062.6 1,540.0 9,522.6`), at least one a number."""
    tokens = (cell or "").split()
    numbers = [t for t in tokens if plain_number(t)]
    return bool(numbers) and all(plain_number(t) or t.lower() in MISSING for t in tokens)


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
