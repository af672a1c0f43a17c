"""The one cell classifier (`cells.classify`): every question the table readers ask of a
cell's text answers from it, and the cases a review found read two ways are pinned here,
each with what every question says of it."""

from __future__ import annotations

import pytest

from rag_assets.core.tables import CellKind, classify
from rag_assets.core.tables.cells import (
    figure,
    header_label,
    is_value,
    number,
    values_cell,
)

F, P, D, U, M, K, L = (
    CellKind.FIGURE,
    CellKind.PERIOD,
    CellKind.DATE,
    CellKind.UNIT,
    CellKind.MISSING,
    CellKind.MARK,
    CellKind.LABEL,
)


@pytest.mark.parametrize(
    ("text", "kind", "label", "why"),
    [
        # the cases two readings once disagreed on: one answer each
        ("$5", F, False, "a currency before the digits is a figure's"),
        ("R$ 1.200", F, False, "the Brazilian real, a space after it, dots grouping"),
        ("1/2", F, False, "a fraction; a year span is a period first (below)"),
        ("54,876†", F, False, "a dagger after a value marks it: a footnote, still a figure"),
        ("1,234⁴", F, False, "a superscript digit after a value: a footnote mark"),
        ("1 (a)", F, False, "a letter in brackets after a value: a footnote mark"),
        ("2009/10", P, True, "a fiscal year: names a column in a header, a value in a body"),
        ("–14.7", F, False, "an en dash printed as the minus sign"),
        # the minus as printed otherwise, and marks against figures
        ("-14.7", F, False, "a hyphen minus"),
        ("−14.7", F, False, "the minus sign U+2212"),
        ("84.8r", F, False, "a letter against a figure marks it revised"),
        ("(1,000)", F, False, "a negative in accounting brackets"),
        ("2008", P, True, "a bare year is a period"),
        ("Q1 2008", P, True, "a quarter is a period"),
        ("%", U, True, "a unit names a column"),
        ("(%)", U, True, "a unit in brackets"),
        # digit groups joined twice: a value in a body, never a figure to count or split by
        ("26-02-2014", D, False, "a date"),
        ("10:30:15", D, False, "a time with seconds (`10:30` is a ratio's pattern: a figure)"),
        ("09205433377/66/941904", D, False, "phone numbers: a ruled row is not cut at them"),
        # not-available marks: values; a label only when written with a letter
        ("–", M, False, "a dash alone: not available, no name"),
        ("..", M, False, "dots alone: not available"),
        ("n.a.", M, True, "not available, written out"),
        # marks alone and labels
        ("†", K, False, "a footnote mark alone names nothing"),
        ("(a)", K, True, "a letter in brackets may be a column's name or a note"),
        ("10–14", L, True, "an age band joined by an en dash: a label, not a minus"),
        ("Total occupied units", L, True, "words"),
    ],
)
def test_one_entry_answers_every_question(text: str, kind: CellKind, label: bool, why: str) -> None:
    assert classify(text) is kind, why
    assert header_label(text) is label, why
    assert is_value(text) is (kind in (F, P, D, U, M)), why
    assert figure(text) is (kind is F) and number(text) is (kind in (F, P)), why


def test_a_figure_needs_a_digit() -> None:
    """Separators alone are no figure: `-`, `:` and `..` are not-available marks, `/` a
    label."""
    assert [classify(t) for t in ("-", ":", "...", "/")] == [M, M, M, L]


def test_cells_of_values_side_by_side() -> None:
    """Sub-columns ruled as one column: numbers (periods too) and not-available marks."""
    assert values_cell("11,062.6 1,540.0 9,522.6")
    assert values_cell("2008 .. 14")
    assert values_cell("$5")
    assert not values_cell("Total 14") and not values_cell("n.a. -")


def test_empty_cells_are_no_figure_label_or_value() -> None:
    for text in ("", "   ", None):
        assert classify(text) is CellKind.EMPTY
        assert not header_label(text) and not number(text) and not figure(text)
