"""Tune seeds of the synthetic table corpus (bench/synth), each one a failure kind of
issue 41 that was fixed, indexed as `trecho materialize` indexes them and scored as
bench/tables.py scores them: every value's chunk holds the value, its column heading,
the group heading over it and its row label. Only tune seeds here: the report seeds
stay for the figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth import corpus
from synth.table_metrics import Reading, Score
from synth.table_readers import trecho_reader

from .test_browser import require_chromium

REPORTLAB = {
    # a group heading centred over four sub-columns, set on the bottom line, whose words
    # (`Housing units`) each sit by chance over one sub-column: read as a group heading,
    # not as the upper lines of wrapped sub-headings (`Housing 2018`, `units 2019`)
    70: "group heading over sub-columns, set on the bottom line",
    # a group label wrapped over two lines in a narrow stub, each line read as a row of
    # its own: `Nondurable goods` / `(continued)` over the rows of the table's next page
    0: "a group label wrapped over lines of their own",
    # group headings set flush left over their sub-columns, a stub heading centred
    # vertically beside them: each group heads the columns from its start to the next
    408: "group headings set flush left",
}
CHROMIUM = {
    # wide layouts (synth/wide.py): labels wrapped over two or three lines, the values on
    # the last (`East` / `North` / `Central 4,744`)
    20049: "wide table, row labels wrapped over lines of their own",
    # a group label wrapped (`Asia and` / `Pacific`), on the next page `(continued)`
    20054: "wide table over two pages, a wrapped group label",
    # group headings set flush left (`Expenditure` overlapping the second sub-heading,
    # `Wages and salaries` over two), `Area` and `All` centred vertically between the
    # group line and the sub-headings: not one line of wrapped headings
    20070: "wide table, group headings set flush left, stub heading centred vertically",
    # crowded sub-headings (`Charter Private Public`), two of them a thin space apart and
    # by chance as wide per letter: taken for monospaced type, they stayed one heading
    # over two columns, the wrapped `Home school` beside them split in two rows, and
    # the document failed its orphan check
    20319: "wide table, two crowded sub-headings as wide per letter",
    # a group label and row labels wrapped over up to four lines each in a narrow stub:
    # five label lines in a row ended the table, the rest read without its header
    20389: "wide table, labels wrapped over many lines in a narrow stub",
    # each row's label on a line of its own over its values, some running on over the
    # first columns (`Real estate and rental and leasing`): cut at the column edge,
    # `leasing` became a value and the values below lost their label
    20301: "wide table, long row labels on lines of their own",
}


@pytest.fixture(scope="module")
def read():
    """trecho's default policy on a PDF, read into its chunks (one model for the module)."""
    return trecho_reader()


def missed(root: Path, seed: int, read) -> tuple[int, list[str]]:
    """A seed's cell count and its cells not held, as `value under heading, row label`."""
    [(_, pdf, tables, record)] = list(corpus.cases(root, [seed]))
    assert record["fits"], seed
    score = Score()
    reading: Reading = read(pdf)
    assert not reading.refused, reading.refused
    _, cells = score.add(f"synth-{seed}", tables, reading)
    lost = [
        f"{t.cell!r} under {t.head!r}, row {t.label!r}" for m in score.missed.values() for _, t in m
    ]
    return cells, lost


@pytest.mark.parametrize("seed", sorted(REPORTLAB))
def test_every_value_of_a_tune_seed_keeps_its_headings_and_row_label(
    tmp_path: Path, read, seed: int
) -> None:
    cells, lost = missed(tmp_path, seed, read)
    assert cells > 0
    assert lost == [], f"{REPORTLAB[seed]}: {len(lost)} of {cells} lost: {lost[:5]}"


@pytest.mark.slow  # starts Chromium to print each seed
@pytest.mark.parametrize("seed", sorted(CHROMIUM))
def test_every_value_of_a_wide_tune_seed_keeps_its_headings_and_row_label(
    tmp_path: Path, read, seed: int
) -> None:
    require_chromium()
    cells, lost = missed(tmp_path, seed, read)
    assert cells > 0
    assert lost == [], f"{CHROMIUM[seed]}: {len(lost)} of {cells} lost: {lost[:5]}"


REGIONS = {
    # headings of figures only (`2016–17 2017–18 ...`) over tightly set columns: digits
    # are one width in a proportional type too, so the line was taken for monospaced
    # type, its headings for one sentence, and the table stayed text, bare numbers
    246: ("reportlab", "period headings over tightly set columns"),
    # an aligned table in the left text column, a short column of prose beside its first
    # rows: the gutter was open on too few lines to count, the prose read as a column
    322: ("reportlab", "an aligned table beside a short column of prose"),
    # one total row under its group rows and a full header: too few lines of values
    617: ("reportlab", "a single row of values under a full header"),
    # a header whose wrapped headings end in a line of figures (`$25,000 to` /
    # `$49,999`) over the body: no table of its own, one table with the body
    346: ("reportlab", "a header line of figures, not a one-row table"),
    # a table's last row alone on a third page, under `Table 32. (continued)` and the
    # repeated one-line header: a short body, a table since the note says it goes on
    71: ("chromium", "the last row of a continued table alone on its page"),
    # a narrow table down a whole text column: the white beside it is no gutter
    611: ("reportlab", "a narrow long table beside a column of prose"),
    # a ruled box of headings (months over a units row) over zebra rows the model boxed
    # alone, just under the box: one table, the box its header
    940: ("chromium", "a ruled header right on top of the body the model boxed"),
    # a ruled box of headings whose last row repeats `(1,000)` over every column (a unit,
    # not a negative number): the header of the zebra rows under it
    568: ("chromium", "a ruled header with a units row over a body set without rules"),
    # a ruled table in the left text column, the prose beside it on its rows' baselines
    337: ("chromium", "a ruled table beside a column of prose"),
}


@pytest.mark.parametrize(
    "seed",
    [  # a seed Chromium prints starts Chromium: slow
        pytest.param(seed, marks=[pytest.mark.slow] if REGIONS[seed][0] == "chromium" else [])
        for seed in sorted(REGIONS)
    ],
)
def test_every_table_of_a_tune_seed_is_found_where_it_is_printed(
    tmp_path: Path, read, seed: int
) -> None:
    producer, what = REGIONS[seed]
    if producer == "chromium":
        require_chromium()
    [(_, pdf, tables, record)] = list(corpus.cases(tmp_path, [seed]))
    assert record["fits"], seed
    reading: Reading = read(pdf)
    score = Score()
    score.add(f"synth-{seed}", tables, reading)
    assert score.regions_matched == len(tables), f"{what}: {score.regions_matched} of {len(tables)}"
    assert score.regions == score.regions_matched, f"{what}: {score.regions} regions read"
