"""The stage metrics of bench/tables.py on a real generated PDF: a found region matched to
its truth table, and a heading path held only when every heading reaches the value."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from synth.table_corpus import Drawing, enrollment, truth, write
from synth.table_metrics import (
    Found,
    Reading,
    Score,
    heading_path_held,
    match_regions,
    region,
    row_label_path_held,
)
from synth.table_readers import pdfplumber_reader, words_inside
from synth.table_truth import TruthTable, grid_table, norm


@pytest.fixture(scope="module")
def enrollment_pdf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TruthTable]:
    """The generated enrollment table (ruled, `Grade` spanning K to 5) and its truth."""
    spec = enrollment(random.Random(7))
    path = tmp_path_factory.mktemp("bench") / "enrollment.pdf"
    write(path, Drawing("P", "", [[spec]]))
    return path, truth(spec, 1)


def test_a_found_table_matches_its_truth_and_a_box_elsewhere_does_not(
    enrollment_pdf: tuple[Path, TruthTable],
) -> None:
    path, table = enrollment_pdf
    reading = pdfplumber_reader()(path)
    assert len(reading.regions) == 1
    found = reading.regions[0]
    x0, y0, x1, y1 = found.box
    beside = (x0, y0 - 2 * (y1 - y0), x1, y0 - (y1 - y0))  # as tall, just below the table
    elsewhere = Found(1, beside, words=words_inside(path, 1, beside))
    assert match_regions([table], [elsewhere, found]) == {0: 1}
    boxed = TruthTable(1, found.box, table.cells, table.header_rows, table.stub_cols)
    assert match_regions([boxed], [elsewhere]) == {}
    score = Score()
    score.add("enrollment", [table], Reading(texts=None, regions=[found, elsewhere]))
    figures = score.figures()
    assert (figures["region_recall"], figures["region_precision"]) == (1.0, 0.5)
    assert figures["cells_held"] is None  # a proposer reads no cells


def test_a_heading_path_needs_the_group_heading_and_a_row_label_path_every_label(
    enrollment_pdf: tuple[Path, TruthTable],
) -> None:
    _, table = enrollment_pdf
    target = next(t for t in table.targets() if len(t.heads) == 2)
    group, lowest = target.heads
    assert group == "Grade"
    without = norm(f"{target.label}; {lowest}: {target.cell}")
    with_group = norm(f"{target.label}; {group} > {lowest}: {target.cell}")
    assert not heading_path_held(target, [without])
    assert heading_path_held(target, [without, with_group])
    assert row_label_path_held(target, [with_group])
    assert not row_label_path_held(target, [norm(f"{group} > {lowest}: {target.cell}")])


def test_a_right_to_left_truth_stored_as_displayed_matches_the_table_read_in_order() -> None:
    """Camelot's truth stores Arabic as displayed (each word's letters reversed); trecho
    reads it in logical order. The same words, so the region matches, and a region of
    other words still does not."""
    logical = [["שם", "עיר"], ["דנה", "חיפה"], ["יוסי", "אילת"]]
    table = grid_table([[cell[::-1] for cell in row] for row in logical], 1, "rtl")
    assert table is not None
    assert match_regions([table], [region(1, (0, 0, 1, 1), logical)]) == {0: 0}
    other = [["שם", "עיר"], ["רון", "עכו"], ["מאיר", "צפת"]]
    assert match_regions([table], [region(1, (0, 0, 1, 1), other)]) == {}


def test_precision_judges_no_region_outside_the_area_a_test_reads(
    enrollment_pdf: tuple[Path, TruthTable],
) -> None:
    """A Camelot test that reads one area of a page holds only that area's tables: a region
    found elsewhere on the page (a ruled form around the table) is neither right nor wrong,
    while a stray region inside the area still counts against precision."""
    path, table = enrollment_pdf
    found = pdfplumber_reader()(path).regions[0]
    x0, y0, x1, y1 = found.box
    form = Found(1, (x0 - 50, y0 - 3 * (y1 - y0) - 100, x1 + 50, y1 + 5))  # centred below it
    stray = Found(1, (x0, y0, x0 + 5, y0 + 5))
    whole_page = Score()
    whole_page.add("form", [table], Reading(texts=None, regions=[found, form]), False)
    assert whole_page.figures()["region_precision"] == 0.5
    area = TruthTable(
        1, None, table.cells, table.header_rows, area=(x0 - 5, y0 - 5, x1 + 5, y1 + 5)
    )
    in_area = Score()
    in_area.add("form", [area], Reading(texts=None, regions=[found, form, stray]), False)
    assert in_area.figures()["region_precision"] == 0.5
    assert in_area.figures()["region_recall"] == 1.0
    # a box reaching well beyond the area that still holds the table's cells is the
    # table found (a model's box around the form): it counts, matched
    wide = Found(1, form.box, words=found.words)
    matched = Score()
    matched.add("form", [area], Reading(texts=None, regions=[wide]), False)
    assert (matched.figures()["region_recall"], matched.figures()["region_precision"]) == (1.0, 1.0)
