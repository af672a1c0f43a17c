"""The synthetic table corpus (bench/synth/): what its truth says is in the PDF, read back
by pdfplumber (every truth cell's text inside its box, every heading on a value's path
printed above it and across its column), and the same seed gives the same corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import corpus
from synth.check import problems
from synth.spec import draw_doc
from synth.truth import SynthTable

from .test_browser import require_chromium


def seeds_for(producer: str) -> list[int]:
    """The first seed of each layout and page shape that `producer` prints."""
    found: dict[tuple[str, str], int] = {}
    for seed in range(400):
        doc = draw_doc(seed)
        features = doc.pages[0].tables[0].features
        key = (features["layout"], features["page"])
        if doc.producer == producer and key not in found:
            found[key] = seed
    return sorted(found.values())


def headings_above(table: SynthTable) -> list[str]:
    """Values whose path names a heading not printed above the value, across its column
    (on an upright page)."""
    if table.features["page"] == "sideways":
        return []
    heads_all = [c for c in table.cells if c.row < (table.header_rows or 0)]
    wrong = []
    for cell in table.cells:
        if cell.row < (table.header_rows or 0) or cell.col < table.stub_cols or not cell.box:
            continue
        heads = [
            h
            for h in heads_all
            if h.col <= cell.col <= h.end_col and h.box and h.col >= table.stub_cols
        ]
        for h in heads:
            hx0, hy0, hx1, _ = h.box
            x0, _, x1, y1 = cell.box
            if hy0 < y1 - 0.5 or hx1 < x0 or hx0 > x1:
                wrong.append(f"{cell.text!r} under {h.text!r}")
    return wrong


def assert_holds(root: Path, seeds: list[int]) -> None:
    for seed, pdf, tables, record in corpus.cases(root, seeds):
        assert record["fits"], seed
        assert problems(pdf, tables) == [], seed
        for table in tables:
            targets = table.targets()
            assert targets, (seed, table.name)
            # every value's path: a heading over it (at least), then its row label(s)
            assert all(
                t.path[0] == t.head and t.label in t.path[1:] for t in targets if t.head != t.label
            ), seed
            assert headings_above(table) == [], seed


def test_reportlab_tables_hold_their_truth_and_repeat_byte_for_byte(tmp_path: Path) -> None:
    seeds = seeds_for("reportlab")
    assert len(seeds) >= 8  # single, two a page, over pages, in text columns; turned pages
    assert_holds(tmp_path / "a", seeds)
    corpus.generate(tmp_path / "b", seeds)
    for seed in seeds:
        a = corpus.folder(tmp_path / "a") / f"{seed}.pdf"
        b = corpus.folder(tmp_path / "b") / f"{seed}.pdf"
        assert a.read_bytes() == b.read_bytes(), seed


@pytest.mark.slow  # headless Chromium: about 0.2 s a PDF after a second to start
def test_chromium_tables_hold_their_truth_and_repeat(tmp_path: Path) -> None:
    require_chromium()
    seeds = seeds_for("chromium")
    assert len(seeds) >= 8
    assert_holds(tmp_path / "a", seeds)
    corpus.generate(tmp_path / "b", seeds[:4])
    for seed in seeds[:4]:
        a = json.loads((corpus.folder(tmp_path / "a") / f"{seed}.json").read_text())
        b = json.loads((corpus.folder(tmp_path / "b") / f"{seed}.json").read_text())
        assert a == b, seed


def test_seed_ranges_do_not_overlap_and_hold_two_thousand_tables() -> None:
    ranges = [corpus.TUNE, corpus.REPORT, corpus.WIDE_TUNE, corpus.WIDE_REPORT]
    assert sum(len(r) for r in ranges) == len(set().union(*ranges))
    assert corpus.parse_seeds("report+wide-report") == [*corpus.REPORT, *corpus.WIDE_REPORT]
    tables = sum(len(p.tables) for s in corpus.TUNE for p in draw_doc(s).pages)
    assert tables >= 2000


def test_wide_seeds_draw_wide_tables_with_every_crowded_layout() -> None:
    seen: set[str] = set()
    for seed in corpus.WIDE_TUNE[:60]:
        for table in (t for p in draw_doc(seed).pages for t in p.tables):
            assert 20 <= table.n_cols <= 30 and table.depth == 2, seed
            assert table.size <= 7.0 and draw_doc(seed).landscape, seed
            groups = [h for h in table.heads if h.level == 0 and h.rows == 1]
            assert all(3 <= h.last - h.first + 1 <= 6 for h in groups), seed
            f = table.features
            seen |= {k for k in ("crowded headings", "stub apart") if f[k] == "yes"}
            seen |= {"own line"} if any(r.alone for r in table.rows) else set()
            seen |= {"middle"} if table.head_valign == "middle" else set()
            seen |= {"label-only"} if any(r.values is None for r in table.rows) else set()
    assert seen == {"crowded headings", "stub apart", "own line", "middle", "label-only"}


@pytest.mark.slow  # headless Chromium
def test_wide_tables_hold_their_truth(tmp_path: Path) -> None:
    require_chromium()
    assert_holds(tmp_path, list(corpus.WIDE_TUNE[:6]))
