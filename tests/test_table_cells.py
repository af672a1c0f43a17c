"""The one cell classifier (`cells.classify`): every question the table readers ask of a
cell's text answers from it, and the cases a review found read two ways are pinned here,
each with what every question says of it."""

from __future__ import annotations

import pytest

from rag_assets.core.tables import CellKind, classify
from rag_assets.core.tables.cells import (
    header_label,
    is_label,
    is_value,
    names_column,
    plain_number,
)

F, P, U, M, L = CellKind.FIGURE, CellKind.PERIOD, CellKind.UNIT, CellKind.MISSING, CellKind.LABEL


@pytest.mark.parametrize(
    ("text", "kind", "strict", "label"),
    [
        # a minus as printed: hyphen and minus sign; an en dash only to the ruled repairs
        ("-14.7", F, F, False),
        ("−14.7", F, F, False),
        ("–14.7", L, F, True),
        ("1,234", F, F, False),
        ("84.8r", F, F, False),  # a letter against a figure marks it
        ("12a", F, F, False),
        # figures to the values' reading, labels to the ruled repairs' stricter one
        ("$5", F, L, False),
        ("1/2", F, L, False),
        ("1:2", F, L, False),
        ("1 (a)", F, L, False),
        ("54,876†", F, L, False),
        ("1,234⁴", F, L, False),
        ("R$ 1.200", F, L, False),
        # periods and units name columns: labels to a header, values in a body
        ("2009/10", P, P, True),
        ("Q1 2008", P, P, True),
        ("2008", P, F, True),  # a bare year is also a plain number to the repairs
        ("%", U, U, True),
        ("(%)", U, U, True),
        ("–", M, M, True),
        ("n.a.", M, M, True),
        ("Total occupied units", L, L, True),
    ],
)
def test_one_entry_answers_every_question(
    text: str, kind: CellKind, strict: CellKind, label: bool
) -> None:
    assert classify(text) is kind
    assert classify(text, strict=True) is strict
    assert plain_number(text) is (strict is F)
    assert names_column(text) is (strict is not F)
    assert is_label(text) is header_label(text) is label
    assert is_value(text) is (kind in (F, P, U, M))


def test_empty_cells_are_no_figure_label_or_value() -> None:
    for text in ("", "   ", None):
        assert classify(text) is classify(text, strict=True) is CellKind.EMPTY
        assert not header_label(text) and not plain_number(text) and not names_column(text)
