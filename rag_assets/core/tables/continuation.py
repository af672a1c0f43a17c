"""Continued tables: whether a table at the top of a page goes on from the one at the
bottom of the page before."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.tables.logical import norm_row
from rag_assets.core.tables.settings import DEFAULT, TableSettings

CONTINUED = re.compile(r"(?i)\b(?:continua[çc][ãa]o|continua|continued|cont\.)(?!\w)")


def continued_note(text: str, settings: TableSettings = DEFAULT) -> bool:
    """Whether a printed line is a "continued" note between a table's pieces (`(continua)`,
    `Table 3 (continued)`): short, and saying so."""
    return len(text) <= settings.continued_note_chars and bool(CONTINUED.search(text))


@dataclass
class TableLayout:
    """Where a table sits on its page: what the continuation test looks at."""

    page: int
    columns: list[float]  # x of every column edge, left to right
    page_width: float
    first_on_page: bool  # no text above it (running headers aside)
    last_on_page: bool  # no text below it (running footers and "continued" notes aside)


def _columns_agree(
    a: Sequence[float], b: Sequence[float], page_width: float, settings: TableSettings
) -> bool:
    if len(a) != len(b) or not a:
        return False
    tolerance = max(settings.min_continued_columns, page_width * settings.continued_columns)
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def continues(
    previous: TableLayout,
    current: TableLayout,
    previous_header: Sequence[str],
    current_first_row: Sequence[str],
    settings: TableSettings = DEFAULT,
) -> bool:
    """Whether `current` continues `previous` on the next page: one logical table.

    Both must sit where a page break cuts a table (`previous` last on its page, `current`
    first on the next), with the same columns; the current piece either repeats the
    previous header or has its column edges where the previous piece had them.
    """
    if current.page != previous.page + 1:
        return False
    if not (previous.last_on_page and current.first_on_page):
        return False
    if len(previous.columns) != len(current.columns):
        return False
    if previous_header and norm_row(current_first_row) == norm_row(previous_header):
        return True
    return _columns_agree(previous.columns, current.columns, current.page_width, settings)
