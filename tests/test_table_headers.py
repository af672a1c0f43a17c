"""Heading paths and row-label paths, as a user finds them in the indexed chunks: every
level of a column's heading on each value (`Grade > 1: 626`), an indented row under its
group row (`Units with elderly > Inadequate`), the stub's heading naming the row label,
and a wide statistical table printed without column rules read value by value, upright
or turned. The PDFs are generated (`table_layouts`), read by the real extraction and
chunked by the default policy (what `trecho materialize` indexes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_assets.core.chunking import Policy, PolicyChunker
from rag_assets.core.corpus import read_pdf

from .table_layouts import (
    APART_HEADER,
    ARREST_GROUPS,
    CANDIDATES,
    EMISSIONS,
    GRADES,
    HEBREW_HEADER,
    HEBREW_TITLE,
    HOUSING_HEADER,
    LIABILITIES,
    PERIODS,
    RUN_ON_YEARS,
    SECTORS,
    UNIT_HEADS,
    WRITTEN,
    apart_paths,
    apart_pdf,
    arrest_rows,
    banded_periods_pdf,
    block_rows,
    blocks_pdf,
    column_ruled_pdf,
    emissions_pdf,
    grade_pdf,
    grade_rows,
    hebrew_pdf,
    hebrew_rows,
    holding,
    housing_paths,
    housing_pdf,
    liability_rows,
    loan_rows,
    numbered_pdf,
    periods_pdf,
    run_on_pdf,
    run_on_rows,
    unit_rows,
    units_pdf,
    upward_pdf,
    vote_rows,
    wide_paths,
    wide_pdf,
    wide_rows,
)


def chunk_texts(path: Path, embedder) -> list[str]:
    """The default policy's chunks of one PDF, whitespace collapsed."""
    source, _ = read_pdf(path, "doc@v1")
    chunks = PolicyChunker(Policy(), embedder)(source, embedder.token_counter())
    return [" ".join(c.text.split()) for c in chunks]


def with_pair(chunks: list[str], label: str, heading: str, value: str) -> list[str]:
    """The chunks that hold a row's label pair and `heading: value` as a pair of that row
    (between `; ` separators, so `Rifle: 9` is not read inside `Pawn > Rifle: 9`)."""
    pair = re.compile(rf"; {re.escape(heading)}: {re.escape(value)}(?:;|$)")
    return [c for c in holding(chunks, f"{label};") if pair.search(c)]


@pytest.mark.parametrize("rules", ["none", "booktabs", "grid"])
def test_a_heading_over_sub_columns_is_on_every_value_under_it(
    tmp_path: Path, embedder, rules: str
):
    """`Grade` printed once over `K 1 2 3` (centred, underlined, or in one ruled cell):
    each score carries `Grade > 1`, beside its year under the stub's heading; the
    two-line `All grades` over one column is one heading, not a path."""
    chunks = chunk_texts(grade_pdf(tmp_path / f"grade-{rules}.pdf", rules), embedder)
    for year, *scores in grade_rows():
        pairs = [f"Grade > {g}: {s}" for g, s in zip(GRADES, scores, strict=False)]
        row = f"Year: {year}; " + "; ".join([*pairs, f"All grades: {scores[-1]}"])
        assert holding(chunks, row), (rules, row)
    assert not holding(chunks, "Year: Year") and not holding(chunks, "Grade > All")


@pytest.mark.parametrize(
    ("stub_heading", "grid", "wrapped", "underlined", "tight"),
    [
        (True, False, False, False, False),
        (False, False, False, False, False),
        (True, True, False, False, False),
        (True, False, True, False, False),
        (False, False, False, True, False),
        (True, False, False, True, True),
    ],
)
def test_a_period_over_each_value_and_percent_pair_heads_both(
    tmp_path: Path,
    embedder,
    stub_heading: bool,
    grid: bool,
    wrapped: bool,
    underlined: bool,
    tight: bool,
):
    """A header line with fewer cells than the body (a date centred over each `$000's |
    %` pair, unruled or each in a ruled box over its pair; the amount's heading `$
    millions` wrapped, its `$` alone on a line) is a heading level over the columns
    under it: each value carries its period and its own heading (`12/31/2010 > %:
    39.3%`), and no header line is a row, also where no rule parts the header from the
    body (a short rule under each period only: the dates and the `%` read as values, the
    header lines as the body's first lines), also where each date is wider than the gap
    between its pair's columns. Before, the periods were dropped (dates read as values,
    not headings): every amount read `$000's: 7,967`, the three periods told apart by
    nothing; a line of `$` ended the header (a line of values); a date over all of the
    gap between its pair's columns made the pair one column (`75 84.1%`)."""
    path = periods_pdf(tmp_path / "periods.pdf", stub_heading, grid, wrapped, underlined, tight)
    chunks = chunk_texts(path, embedder)
    amount = "$ millions" if wrapped else "$000's"
    headings = [f"{period} > {unit}" for period in PERIODS for unit in (amount, "%")]
    for label, *values in loan_rows():
        for heading, cell in zip(headings, values, strict=True):
            pair = f"{heading}: {cell}"
            assert [c for c in holding(chunks, label, pair) if f"; {pair}" in c], (label, pair)
    assert not holding(chunks, f"{amount}; %") and not holding(chunks, "12/31/2009; ")


def test_a_written_out_period_in_a_shaded_header_band_stays_whole(tmp_path: Path, embedder):
    """A period written out (`Dec. 31, 2009`) over its `$000's | %` pair in a header band
    shaded cell by cell, the edge between the pair's columns falling in the space before
    the year: each value carries the whole period. Before, the period's box was cut at
    that edge like a data row merged over its columns (`Dec. 31, $000's`, `2009 %`),
    since its second piece was a number."""
    chunks = chunk_texts(banded_periods_pdf(tmp_path / "banded.pdf"), embedder)
    headings = [f"{period} > {unit}" for period in WRITTEN for unit in ("$000's", "%")]
    for label, *values in loan_rows():
        for heading, cell in zip(headings, values, strict=True):
            assert holding(chunks, label, f"; {heading}: {cell}"), (label, heading, cell)
    assert not holding(chunks, "; 2009 %:") and not holding(chunks, "Dec. 31, $000's")


def test_a_label_running_past_the_first_value_column_stays_the_rows_label(tmp_path: Path, embedder):
    """One label of a short stub printed on one line that runs on past the middle
    between the stub and the first value column (its last word nearer the values than
    the other labels): the whole label names its row and its first value stands alone
    under its year. Before, its last word went into the value's cell (`services 2,276`),
    the label lost it and the value carried it."""
    chunks = chunk_texts(run_on_pdf(tmp_path / "run-on.pdf"), embedder)
    for label, *values in run_on_rows():
        pairs = [f"{year}: {cell}" for year, cell in zip(RUN_ON_YEARS, values, strict=True)]
        assert holding(chunks, "; ".join([f"Industry: {label}", *pairs])), (label, values)


def test_a_heading_starting_left_of_the_edge_a_space_after_its_neighbour_is_its_columns(
    tmp_path: Path, embedder
):
    """`%` over a share and `$ thousands` over an amount, set flush right as the figures
    are, one space apart (`% $ thousands`), the `$` left of the edge halfway between the
    two columns' figures: each value carries its own column's heading. Before, the line
    of units was a line of values, its ink bridged the two columns, and the share and the
    amount were read as one column under `% $ thousands` (`5.0 3,619`)."""
    chunks = chunk_texts(units_pdf(tmp_path / "units.pdf"), embedder)
    for region, *values in unit_rows():
        pairs = [f"{head}: {cell}" for head, cell in zip(UNIT_HEADS, values, strict=True)]
        assert holding(chunks, "; ".join([f"Region: {region}", *pairs])), (region, values)


@pytest.mark.parametrize(
    ("ruled", "tenure"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_indented_rows_carry_the_group_rows_they_are_printed_under(
    tmp_path: Path, embedder, ruled: bool, tenure: bool
):
    """A stub whose rows are indented under group rows (one with values, one without,
    and a row two steps in): each row's label is its path from the outermost group,
    named by the stub's heading; a row back at the margin starts a new group."""
    path = housing_pdf(tmp_path / f"housing-{ruled}-{tenure}.pdf", ruled, tenure)
    chunks = chunk_texts(path, embedder)
    names = ["Total", "Tenure > Owner", "Tenure > Renter"] if tenure else list(HOUSING_HEADER)
    for label, row in housing_paths():
        pairs = [f"{n}: {v}" for n, v in zip(names, row.values, strict=False)]
        text = "; ".join([f"Characteristic: {label}", *pairs])
        assert holding(chunks, text), (ruled, tenure, text)
    assert holding(chunks, "Characteristic: Units with elderly > Moderately inadequate > Severely")
    assert not holding(chunks, "Characteristic: Total occupied housing units > New construction")


@pytest.mark.parametrize("beside", ["middle", "first"])
def test_a_group_label_beside_a_block_of_rows_leads_each_row_of_it(
    tmp_path: Path, embedder, beside: str
):
    """A year printed left of the ruled box, once per block of three rows (beside the
    block's middle row, or its first): each row of the block is read under it, `2021 >
    North; Farming: ...`, the first and last rows of a block included."""
    chunks = chunk_texts(blocks_pdf(tmp_path / f"blocks-{beside}.pdf", beside), embedder)
    for block, member, shares in block_rows():
        pairs = [f"{n}: {v}" for n, v in zip(SECTORS, shares, strict=True)]
        row = "; ".join([f"{block} > {member}", *pairs])
        assert holding(chunks, row), (beside, row)


def test_labels_and_headings_run_onto_a_second_ruled_row_are_read_whole(tmp_path: Path, embedder):
    """`Threshold` over `(kg/year)` in the ruled row under it is one heading, and so is
    `Share` / `(%)`; a label whose rest is printed in a ruled row of its own (`(as
    SO2)`, `compounds (NMVOC)`) is one label, that row no row of the table."""
    chunks = chunk_texts(emissions_pdf(tmp_path / "emissions.pdf"), embedder)
    for label, threshold, share in EMISSIONS:
        row = f"Pollutant: {' '.join(label)}; Threshold (kg/year): {threshold}; Share (%): {share}"
        assert holding(chunks, row), row
    assert not holding(chunks, "Pollutant: (as SO2)") and not holding(chunks, "Threshold: ")


WIDE = [  # rules, printing, a group heading on two lines, column width, in the fast tier
    ("none", "upright", False, 33.0, True),
    ("thin", "rotate", False, 33.0, True),
    ("boxed", "sideways", False, 33.0, True),
    ("shaded", "upright", False, 33.0, True),
    ("none", "upright", True, 33.0, True),
    ("thin", "upright", False, 27.0, True),
    ("none", "rotate", False, 33.0, False),
    ("none", "sideways", False, 33.0, False),
    ("none", "sideways", False, 27.0, False),
    ("thin", "upright", False, 33.0, False),
    ("thin", "sideways", False, 33.0, False),
    ("thin", "sideways", True, 33.0, False),
    ("boxed", "upright", False, 33.0, False),
    ("boxed", "rotate", False, 33.0, False),
    ("shaded", "rotate", False, 33.0, False),
    ("shaded", "sideways", False, 33.0, False),
    ("shaded", "rotate", True, 33.0, False),
    ("shaded", "upright", False, 27.0, False),
]
LAYOUTS = [
    pytest.param(
        rules,
        printing,
        wrapped,
        width,
        marks=[] if fast else [pytest.mark.slow],
        id=f"{rules}-{printing}{'-wrapped' if wrapped else ''}-{width:.0f}pt",
    )
    for rules, printing, wrapped, width, fast in WIDE
]


@pytest.mark.parametrize(("rules", "printing", "wrapped", "width"), LAYOUTS)
def test_a_wide_table_without_column_rules_keeps_every_heading_path(
    tmp_path: Path, embedder, rules: str, printing: str, wrapped: bool, width: float
):
    """22 columns (a stub and 21 counts) under a two-level header: single columns
    (`Pistol`, one of them headed on two lines, `Licence renewal`) beside groups
    (`Pawn` over `Pistol Rifle Other`), no line between columns (no rule at all,
    hairlines between rows, the header boxed, or rows shaded); on a landscape page, a
    page turned by /Rotate, or printed sideways; `wrapped`, a group heading on two lines
    (`Private` / `transfer`) over its sub-headings, a header of three lines; columns 27
    pt wide set the widest counts closer than a column gap usually is. Every count is in
    a chunk with its region and its whole heading path, and no line of bare numbers is
    left."""
    path = wide_pdf(tmp_path / "wide.pdf", rules, printing, wrapped, width)
    chunks = chunk_texts(path, embedder)
    headings = wide_paths()
    for region, *counts in wide_rows():
        label = f"Region: {region}"
        for heading, count in zip(headings, counts, strict=True):
            assert with_pair(chunks, label, heading, count), (rules, printing, region, heading)
    first = wide_rows()[0]
    assert not holding(chunks, " ".join(first[:4]))  # `Acre 48 3,619 7,190`: no prose line


def test_hebrew_labels_and_prose_read_in_reading_order(tmp_path: Path, embedder):
    """A table printed right to left (Hebrew city names in its stub, a Hebrew heading)
    and a Hebrew paragraph: the chunks hold each label as it is read, not its letters
    reversed, beside its values under their headings, and the prose reads the same."""
    path = hebrew_pdf(tmp_path / "hebrew.pdf")
    chunks = chunk_texts(path, embedder)
    stub, change = HEBREW_HEADER[0], HEBREW_HEADER[3]
    for city, first, second, percent in hebrew_rows():
        row = f"{stub}: {city}; 2021: {first}; 2022: {second}; {change}: {percent}"
        assert holding(chunks, row), row
        assert not holding(chunks, city[::-1])
    assert holding(chunks, "הנתונים מוצגים לפי עיר ושנה")
    assert holding(chunks, HEBREW_TITLE)


def test_headings_printed_upward_read_bottom_to_top(tmp_path: Path, embedder):
    """Candidates' names turned a quarter counter-clockwise over narrow ruled columns:
    each vote count carries its candidate's name as printed to be read (not `ecarG
    reppoH`) beside its precinct."""
    chunks = chunk_texts(upward_pdf(tmp_path / "upward.pdf"), embedder)
    for precinct, *votes in vote_rows():
        for name, count in zip(CANDIDATES, votes, strict=True):
            assert with_pair(chunks, f"Precinct: {precinct}", name, count), (precinct, name)
    assert not any(name[::-1] in c for c in chunks for name in CANDIDATES)


def test_a_header_that_numbers_its_columns_keeps_labels_above_its_rules(tmp_path: Path, embedder):
    """Labels over the columns, a rule, the columns' numbers and a formula citing them,
    a rule, then the body: every amount carries its column's label lines (`Loans from
    Banks`) beside its state, and the numbers and formula are the header's, not a row."""
    chunks = chunk_texts(numbered_pdf(tmp_path / "numbered.pdf"), embedder)
    for state, *amounts in liability_rows():
        for lines, amount in zip(LIABILITIES, amounts, strict=True):
            label = " ".join(w for w in lines if w)
            pair = re.compile(rf"; {re.escape(label)}[^;:]*: {re.escape(amount)}(?:;|$)")
            assert [c for c in holding(chunks, f"{state};") if pair.search(c)], (state, label)
    assert not [c for c in chunks if re.search(r"States: (?:1|2=|\(3 to 6\));", c)]


def test_a_table_ruled_by_column_groups_is_read_row_by_row(tmp_path: Path, embedder):
    """Rules only between column groups, three figures side by side in each, labels led
    by dots to them, a label wrapped over two lines: every figure (`–` and `(X)` marks
    included) is in a chunk with its whole row label, without the dots, and its group."""
    chunks = chunk_texts(column_ruled_pdf(tmp_path / "arrests.pdf"), embedder)
    for label, *cells in arrest_rows():
        for g, group in enumerate(ARREST_GROUPS):
            figures = cells[3 * g : 3 * g + 3]
            row = [c for c in holding(chunks, f"Offense charged: {label};") if group in c]
            assert [c for c in row if " ".join(figures) in c], (label, group)
    assert not [c for c in chunks if ". . ." in c]


def test_a_stub_printed_apart_gives_each_value_its_group_and_wrapped_label(
    tmp_path: Path, embedder
):
    """Labels set in a narrow block far left of the values, indented under group rows,
    two of them wrapped onto a second line with the values against the last: each value
    carries its group and its whole label (`Northeast > Middle Atlantic; Owner: 682`),
    and no line of a wrapped label is a row of its own."""
    chunks = chunk_texts(apart_pdf(tmp_path / "apart.pdf"), embedder)
    for label, values in apart_paths():
        pairs = [f"{n}: {v}" for n, v in zip(APART_HEADER, values, strict=True)]
        row = "; ".join([label, *pairs])
        assert holding(chunks, row), (row, chunks)
    assert not [c for c in chunks if c.endswith("> Middle") or "> Middle;" in c]
