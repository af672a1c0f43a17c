"""The table package's stages on small generated PDFs: one classifier for cells, both
readers finished alike, regions proposed from outside, and the settings every stage
reads its tolerances from."""

from __future__ import annotations

import itertools
from pathlib import Path

import pdfplumber
import pytest

from rag_assets.core.corpus import read_pdf
from rag_assets.core.tables import (
    DEFAULT_SETTINGS,
    CellKind,
    TableSettings,
    classify,
    find_regions,
    find_tables,
)
from rag_assets.core.tables.text_columns import gutters

from .table_layouts import (
    GRADES,
    LICENCE_COLUMNS,
    centred,
    column_rules,
    grade_pdf,
    grade_rows,
    licence_rows,
    licences_pdf,
    new_pdf,
    right_aligned,
    rule,
    value,
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("1,234", CellKind.FIGURE),
        ("-12.5", CellKind.FIGURE),
        ("54,876*", CellKind.FIGURE),
        ("n.a.", CellKind.MISSING),
        ("x", CellKind.MISSING),
        ("%", CellKind.UNIT),
        ("(%)", CellKind.UNIT),
        ("2009/10", CellKind.PERIOD),
        ("Q1 2008", CellKind.PERIOD),
        ("†", CellKind.MARK),
        ("Total occupied units", CellKind.LABEL),
        ("  ", CellKind.EMPTY),
        (None, CellKind.EMPTY),
    ],
)
def test_one_classifier_names_what_a_cell_holds(text: str | None, kind: CellKind):
    """Figures (marks and all), not-available marks, units, periods, footnote marks and
    labels are told apart by the one classifier."""
    assert classify(text) is kind


def _tables(path: Path, **kwargs) -> list:
    with pdfplumber.open(path) as pdf:
        return find_tables(pdf.pages[0], **kwargs)


def _body(table) -> list[list[str]]:
    return [[" ".join(c.split()) for c in row] for row in table.rows[table.header_rows :]]


def test_ruled_and_aligned_readers_finish_alike(tmp_path: Path):
    """The same table boxed cell by cell and printed with no rule at all: the ruled and
    the aligned reader give the same header paths and the same rows (one finish)."""
    grid = _tables(grade_pdf(tmp_path / "grid.pdf", "grid"))
    bare = _tables(grade_pdf(tmp_path / "none.pdf", "none"))
    assert len(grid) == len(bare) == 1
    expected = ["Year", *(f"Grade > {g}" for g in GRADES), "All grades"]
    assert grid[0].header == bare[0].header == expected
    assert _body(grid[0]) == _body(bare[0]) == [list(r) for r in grade_rows()]


def test_regions_proposed_from_outside(tmp_path: Path):
    """A proposed box over a ruled table is that table's region, not a second one; a box
    over an unruled table reads the same table; a box over a note adds no table."""
    ruled = grade_pdf(tmp_path / "grid.pdf", "grid")
    with pdfplumber.open(ruled) as pdf:
        page = pdf.pages[0]
        alone = find_regions(page)
        box = next(r.bbox for r in alone if r.kind == "ruled")
        assert [r.kind for r in find_regions(page, proposals=[box])] == [r.kind for r in alone]
    bare = grade_pdf(tmp_path / "none.pdf", "none")
    table = _tables(bare)[0]
    (proposed,) = _tables(bare, proposals=[table.bbox])
    assert (proposed.header, proposed.rows) == (table.header, table.rows)
    with pdfplumber.open(bare) as pdf:
        note = next(w for w in pdf.pages[0].extract_words() if w["text"] == "NOTE:")
    box = (note["x0"] - 2, note["top"] - 2, note["x0"] + 300, note["bottom"] + 2)
    assert [t.header for t in _tables(bare, proposals=[box])] == [table.header]


def test_settings_are_what_the_stages_read(tmp_path: Path):
    """A tolerance changed in `TableSettings` changes the reading: lines of one table
    asked to stand closer than they are printed leave an unruled table's lines as text."""
    bare = grade_pdf(tmp_path / "none.pdf", "none")
    assert len(_tables(bare, settings=TableSettings())) == 1
    assert _tables(bare, settings=TableSettings(line_pitch=0.1, min_line_gap=0.0)) == []


INDUSTRIES = (
    "Private industries",
    "Mining, quarrying, and oil and gas extraction",
    "Construction",
    "Manufacturing",
    "Wholesale trade",
    "Retail trade",
    "Transportation and warehousing of goods and people",
    "Information",
    "Finance and insurance, real estate, and rental and leasing",
    "Professional and business services",
    "Educational services, health care, and social assistance",
    "Administrative and support and waste management services",
    "Arts, entertainment, recreation, accommodation, and food services",
    "Other services, except government",
)


def _long_labels_pdf(path: Path) -> Path:
    """No rule at all: a header of years over a stub of industry names, the longest
    filling the stub as a line of a text column fills it, short ones run out in leaders."""
    pdf = new_pdf(size=7)
    pdf.add_page()
    years = [str(2013 + k) for k in range(6)]
    stub_right, first, pitch = 275.0, 325.0, 46.0
    baseline = 80.0
    pdf.text(42, baseline, "Industry")
    for k, year in enumerate(years):
        right_aligned(pdf, year, first + k * pitch, baseline)
    dot = pdf.get_string_width(" .")
    for r, name in enumerate(INDUSTRIES):
        baseline += 12
        room = stub_right - 42 - pdf.get_string_width(name)
        pdf.text(42, baseline, name if len(name) > 40 else name + " ." * int(room / dot))
        for k in range(len(years)):
            right_aligned(pdf, value(r, k), first + k * pitch, baseline)
    pdf.output(str(path))
    return path


def test_long_row_labels_are_no_column_of_prose(tmp_path: Path):
    """Long row labels filling the stub look like lines of a text column beside the gap
    before the figures; with no sentence on the figures' side that gap is no gutter, and
    the table is read whole, every figure under its year and beside its industry."""
    path = _long_labels_pdf(tmp_path / "labels.pdf")
    with pdfplumber.open(path) as pdf:
        words = pdf.pages[0].extract_words(x_tolerance=DEFAULT_SETTINGS.word_x_tolerance)
    assert gutters(words, DEFAULT_SETTINGS) == []
    (table,) = _tables(path)
    assert table.header[1:] == [str(2013 + k) for k in range(6)]
    assert [row[0] for row in _body(table)] == list(INDUSTRIES)
    assert _body(table)[1][1:] == [value(1, k) for k in range(6)]


def test_cells_of_several_columns_wrapped_at_once_stay_in_the_proposed_table(tmp_path: Path):
    """A register of words in a box the layout model sees as one table, where some rows
    wrap two cells at once onto a line of their own above the row: one table, every
    licence's row under the named columns, no row read twice (before, the list was cut
    at each such line, and each later piece took the rows above it for its header)."""
    path = licences_pdf(tmp_path / "licences.pdf")
    with pdfplumber.open(path) as pdf:
        words = pdf.pages[0].extract_words()
    inked = [w for w in words if w["top"] > 50]  # the list, under its title
    box = (
        min(w["x0"] for w in inked) - 4,
        min(w["top"] for w in inked) - 4,
        max(w["x1"] for w in inked) + 4,
        max(w["bottom"] for w in inked) + 4,
    )
    (table,) = _tables(path, proposals=[box])
    assert table.header == list(LICENCE_COLUMNS)
    body = _body(table)
    for _, (number, *_, city, zip_code) in licence_rows():
        [row] = [r for r in body if number in r[0]]
        assert (row[-2], row[-1]) == (city, zip_code)


def _form_pdf(path: Path) -> Path:
    """A ruled form of two columns (a label, its text), one text cell holding a small
    ruled table of its own under a sentence."""
    pdf = new_pdf(9)
    pdf.add_page()
    x0, mid, x1 = 40.0, 150.0, 555.0
    tops = [60.0, 100.0, 240.0, 280.0]
    labels = ["PURPOSE", "DEATH COVER", "DURATION"]
    texts = ["A unit-linked life contract for saving.", "The benefit is raised by:", "For life."]
    pdf.set_line_width(0.6)
    for y in tops:
        pdf.line(x0, y, x1, y)
    column_rules(pdf, [x0, mid, x1], tops[0], tops[-1])
    for label, text, top in zip(labels, texts, tops, strict=False):
        pdf.text(x0 + 4, top + 14, label)
        pdf.text(mid + 4, top + 14, text)
    # the table inside the second text cell
    edges, rows = [200.0, 380.0, 500.0], [125.0, 145.0, 165.0, 185.0, 205.0]
    pdf.set_line_width(0.4)
    for y in rows:
        pdf.line(edges[0], y, edges[-1], y)
    column_rules(pdf, edges, rows[0], rows[-1])
    cells = [("Age at death", "Raise"), ("18-75", "1.00%"), ("76-80", "0.50%"), ("81+", "0.10%")]
    for (age, rate), top in zip(cells, rows, strict=False):
        pdf.text(edges[0] + 4, top + 14, age)
        pdf.text(edges[1] + 4, top + 14, rate)
    pdf.output(str(path))
    return path


def test_a_table_ruled_inside_a_ruled_form_is_read_once(tmp_path: Path):
    """A table ruled inside a cell of a ruled form (Camelot's `table_region`): the form's
    cell keeps its own sentence without the table's values (read there, they were bare
    numbers with no heading), and the table is read on its own, under its headings."""
    tables = _tables(_form_pdf(tmp_path / "form.pdf"))
    form = next(t for t in tables if any("DEATH COVER" in (c or "") for r in t.rows for c in r))
    inner = next(t for t in tables if t.header == ["Age at death", "Raise"])
    death = next(r for r in form.rows if "DEATH COVER" in (r[0] or ""))
    assert "benefit is raised" in " ".join(death)
    for rate in ("1.00%", "0.50%", "0.10%"):
        assert not any(rate in (c or "") for r in form.rows for c in r)
    assert _body(inner) == [["18-75", "1.00%"], ["76-80", "0.50%"], ["81+", "0.10%"]]
    # and indexed so: each value in one row of the inner table, under its headings (its
    # lines are the innermost table's, not the form's, which would drop the table)
    source, _ = read_pdf(tmp_path / "form.pdf", "form@v1")
    for rate in ("1.00%", "0.50%", "0.10%"):
        [row] = [r for r in source.rows if rate in r.cells]
        assert row.header == ["Age at death", "Raise"]


def _backed_pdf(path: Path) -> Path:
    """A ruled table as office software exports it: each heading cell filled white, and
    inside it a white rectangle behind each line of its text, each at its own height
    (the wrapped `Read & / Write` has one per line, centred on the header row,
    `Illiterate` beside it one in the middle). White on white, they draw nothing; their
    edges are no rules."""
    pdf = new_pdf(9)
    pdf.add_page()
    edges = [40.0, 140.0, 210.0, 280.0, 350.0]
    top, head = 60.0, 30.0
    states = [("Kerala", "7.2", "0.5", "25.3"), ("Goa", "21.4", "2.3", "8.8")]
    rows = [top, top + head] + [top + head + 16.0 * (i + 1) for i in range(len(states))]
    pdf.set_fill_color(255)
    headings = [("State",), ("Illiterate",), ("Read &", "Write"), ("1-4 std.",)]
    for (left, right), lines in zip(itertools.pairwise(edges), headings, strict=True):
        pdf.rect(left, top, right - left, head, style="F")  # the cell's background
        first = top + head / 2 - 5.5 * (len(lines) - 1)  # baselines centred on the row
        for k, line in enumerate(lines):
            baseline = first + 11.0 * k + 3
            pdf.rect(left + 2, baseline - 9, right - left - 4, 12, style="F")
            centred(pdf, line, left, right, baseline)
    for (state, *cells), y in zip(states, rows[2:], strict=False):
        pdf.text(edges[0] + 4, y - 4, state)
        for j, cell in enumerate(cells):
            right_aligned(pdf, cell, edges[j + 2] - 4, y - 4)
    for y in rows:  # the rules last, over the backgrounds
        rule(pdf, edges[0], edges[-1], y)
    column_rules(pdf, edges, rows[0], rows[-1])
    pdf.output(str(path))
    return path


def test_white_rectangles_behind_headings_cut_no_header_row(tmp_path: Path):
    """Rectangles that draw nothing (white behind each heading, Camelot's `twotables_2`)
    used to cut the header row at their edges: `Read &` and `Write` became two headings
    on two rows, `Illiterate` a row between them. A wrapped heading is one heading."""
    [table] = _tables(_backed_pdf(tmp_path / "backed.pdf"))
    assert [" ".join(c.split()) for c in table.header] == [
        "State",
        "Illiterate",
        "Read & Write",
        "1-4 std.",
    ]
    assert _body(table) == [["Kerala", "7.2", "0.5", "25.3"], ["Goa", "21.4", "2.3", "8.8"]]
