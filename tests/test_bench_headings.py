"""The synthetic report corpus of bench/headings.py (bench/synth/headings.py): what its
truth says is printed where it says (every true heading's text on its page, read back by
pdfplumber), the same seed gives the same bytes, and the bench's matching counts a heading
that does not match as a miss."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from synth import heading_score as bench
from synth import headings as synth

# 38: Spanish, two columns, outline, run-in and wrapped headings, banner;
# 58: German, centred and run-in headings, figure, pull quote, bold lead-in;
# 102: Portuguese, all caps centred headings, a table without a caption
SEEDS = (38, 58, 102)


def test_truth_holds_on_the_printed_pdf(tmp_path: Path) -> None:
    assert synth.generate(tmp_path, SEEDS) == len(SEEDS)
    for seed in SEEDS:
        pdf, record = synth.read(tmp_path, seed)
        assert record["headings"], seed
        assert 2 <= record["pages"] <= synth.MAX_PAGES
        assert synth.problems(pdf, record) == [], seed
    _, two = synth.read(tmp_path, 38)
    assert two["columns"] == 2 and two["has_outline"]
    assert any("runin" in h["style"] for h in two["headings"])
    kinds = {d["kind"] for d in synth.read(tmp_path, 58)[1]["distractors"]}
    assert {"toc", "running", "pull_quote", "axis_label"} <= kinds
    assert any(t["caption"] is None for t in synth.read(tmp_path, 102)[1]["tables"])


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pdf", tmp_path / "b.pdf"
    ta, tb = synth.write(58, a), synth.write(58, b)
    assert a.read_bytes() == b.read_bytes()
    assert json.dumps(ta) == json.dumps(tb)


def test_a_heading_printed_otherwise_is_a_miss() -> None:
    truth = [
        bench.Item("2 Results", "Results", 3),
        bench.Item("2.1 Scope", "Scope", 3, parent=0),
        bench.Item("2.2 Costs per beneficiary", "Costs per beneficiary", 4, parent=0),
    ]
    detected = [
        bench.Item("2. Results", "Results", 3),  # number printed otherwise: a match
        bench.Item("Scope", "Scope", 3),  # without its number: a match
        bench.Item("2.2 Costs per", "Costs per", 4),  # cut short: a miss
        bench.Item("2.1 Scope ........ 3", page=1),  # a contents line: no match
    ]
    pairs = bench.assign(detected, truth)
    assert pairs == {0: 0, 1: 1}
    # the right text on another page is no match either
    assert bench.assign([bench.Item("2.1 Scope", "Scope", 5)], truth) == {}
    assert bench.quality(bench.Item("3.1 Scope"), bench.Item("2.1 Scope", "Scope")) == 0


def test_score_headings_counts_misses_false_headings_and_parents() -> None:
    def node(nid: str, parent: str | None, kind: str, label: str, title: str, page: int):
        return SimpleNamespace(
            node_id=nid, parent_id=parent, kind=kind, label=label, title=title, page_start=page
        )

    source = SimpleNamespace(
        nodes=[
            node("d", None, "document", "", "doc", 1),
            node("a", "d", "section", "1", "Introduction", 2),
            node("t", "a", "text", "", "", 2),
            node("b", "a", "section", "1.1", "Scope", 2),
            node("c", "d", "section", "", "Page 2 of 3", 2),
            node("e", "c", "section", "1.2", "Costs", 3),  # under a false heading
        ]
    )
    truth = [
        bench.Item("1 Introduction", "Introduction", 2, None),
        bench.Item("1.1 Scope", "Scope", 2, 0),
        bench.Item("1.2 Costs", "Costs", 3, 0),
        bench.Item("1.3 Limitations", "Limitations", 3, 0),
    ]
    distractors = [{"text": "Page 2 of 3", "page": 2, "kind": "running"}]
    doc = bench.Doc("x")
    bench.score_headings(doc, source, truth, distractors, 0)
    assert doc.counts["detected"] == 4 and doc.counts["det_matched"] == 3
    assert doc.counts["true"] == 4 and doc.counts["true_matched"] == 3
    assert doc.counts["parent_ok"] == 2  # 1.2 hangs under the running head
    assert doc.false_by_kind == {"running": 1}
    assert doc.missed == ["p3: 1.3 Limitations"]


def test_path_judges() -> None:
    truth = [bench.Item("2.1 Scope", "Scope", 2)]
    chunks = [
        SimpleNamespace(path="2.1 Scope"),
        SimpleNamespace(path="2.1 Scope > Table 3"),
        SimpleNamespace(path="2.1 Scope > Tabela 3"),  # a Portuguese label, English document
        SimpleNamespace(path="2.1 Scope > Coverage of target populations"),  # caption's title
        SimpleNamespace(path="the study covers"),
    ]
    doc = bench.Doc("x")
    caption = ["Table 3. Coverage of target populations"]
    bench.score_paths(doc, chunks, "en", truth, caption)
    assert doc.counts["bad_chunks"] == 2  # Tabela 3 and the prose
    assert doc.counts["suspicious_chunks"] == 2  # Tabela 3 and the lower-case prose
    assert bench.suspicious("Results of the", "en") == "ends with a function word"
    assert bench.suspicious("Art. 1º", "pt") == ""
