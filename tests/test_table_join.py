"""The joined region finder (the reader's rules, then the layout model's boxes) keeps the
tables the model sees: tune seeds of the synthetic corpus (bench/synth) whose table the
rules found only in part, scored as bench/tables.py scores regions (IoU >= 0.5 with the
truth's box). Only tune seeds here: the report seeds stay for the figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.extract import OcrSettings, extract
from rag_assets.core.layout import LayoutSettings
from rag_assets.core.layout.proposals import found_there
from synth import corpus
from synth.table_metrics import Found, match_regions, region
from synth.table_readers import displayed

from .test_browser import require_chromium

HEADER_OVER_ZEBRA = {
    # a ruled box of headings (years and units in it: not labels only) over zebra rows
    # without rules: the rules read the box alone, the model sees the whole table
    750: "a ruled header of labels and units over zebra rows",
    355: "a ruled header of two rows over zebra rows with group rows",
}


def regions(pdf: Path, layout: LayoutSettings) -> list[Found]:
    """The tables `extract()` finds, as bench/tables.py scores them."""
    extraction = extract(pdf, ocr=OcrSettings(enabled=False), layout=layout)
    return [
        region(page.page, displayed(t.bbox, page.rotation, page.width, page.height), t.rows)
        for page in extraction.pages
        for t in page.tables
    ]


@pytest.mark.parametrize("seed", sorted(HEADER_OVER_ZEBRA))
def test_a_table_the_rules_found_in_part_is_found_whole_with_the_models_box(
    tmp_path: Path, seed: int
) -> None:
    require_chromium()
    [(_, pdf, tables, record)] = list(corpus.cases(tmp_path, [seed]))
    assert record["fits"] and len(tables) == 1
    why = HEADER_OVER_ZEBRA[seed]
    assert match_regions(tables, regions(pdf, LayoutSettings(enabled=False))) == {}, why
    # the join before issue 41 item 4: the ruled header covered the model's box
    assert match_regions(tables, regions(pdf, LayoutSettings(found_part=0.0))) == {}, why
    found = regions(pdf, LayoutSettings())
    assert list(match_regions(tables, found)) == [0], why
    assert len(found) == 1, f"{why}: the header is the table's, not a table of its own"


def test_a_box_is_a_found_tables_unless_the_tables_inside_fill_little_of_it() -> None:
    box = (40.0, 50.0, 360.0, 230.0)  # the model's box: 320 x 180 pt
    header = (42.0, 55.0, 358.0, 85.0)  # a ruled header at its top: 17% of it
    assert not found_there(box, [header])
    body = (42.0, 90.0, 358.0, 225.0)
    assert found_there(box, [header, body])  # the tables found fill it between them
    assert found_there(box, [(42.0, 55.0, 560.0, 225.0)])  # one found across its edge
    assert found_there(box, [(30.0, 150.0, 370.0, 400.0)])  # a table reaching into it
    assert not found_there(box, [])
    assert found_there(box, [header], LayoutSettings(found_part=0.0))  # the join before
