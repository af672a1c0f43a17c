"""One interface for every strategy, and the policy that picks one per document."""

from __future__ import annotations

import dataclasses

import pytest

from rag_assets.core.chunking import NAMED, Policy, PolicyChunker, build_chunker
from rag_assets.core.chunking.base import DocInfo, Source
from rag_assets.core.eval.metrics import chunk_damage

from .conftest import SAMPLE_LAKE


@pytest.fixture(scope="module")
def manual(prepared) -> Source:
    doc, nodes, rows = prepared(SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf", "op@v1")
    return Source(DocInfo("op@v1", "op", "v1", "Manual"), doc, nodes, rows, doc_type="manual")


@pytest.fixture(scope="module")
def lgpd(prepared) -> Source:
    doc, nodes, rows = prepared(SAMPLE_LAKE / "raw" / "lgpd" / "2018.pdf", "lgpd@2018")
    return Source(DocInfo("lgpd@2018", "lgpd", "2018", "LGPD"), doc, nodes, rows, doc_type="law")


def test_every_named_strategy_runs_behind_one_interface(manual, counter, embedder):
    for name in [*NAMED, "fixed_chars-200-o40", "fixed_tokens-128-o0-s32", "recursive-256-o32"]:
        chunks = build_chunker(name, embedder)(manual, counter)
        assert chunks, name
        assert all(c.partition_key == "op@v1" for c in chunks)
        for chunk in chunks:  # every chunk points back into the same text
            assert 0 <= chunk.char_start < chunk.char_end <= len(manual.doc.text)
    with pytest.raises(ValueError, match="unknown chunking strategy 'fixed-512'"):
        build_chunker("fixed-512")
    # recursive splitting has no start offset: a `-s` would be named in the report, unused
    with pytest.raises(ValueError, match="recursive splitting has no start offset"):
        build_chunker("recursive-512-o64-s128")


def test_noheader_variant_drops_the_header(manual, counter):
    plain = build_chunker("structural-noheader")(manual, counter)
    assert plain and all(c.header == "" and c.text == c.body for c in plain)


def test_policy_by_structure_and_by_type(manual, lgpd):
    assert Policy().choose(lgpd) == "structural"
    assert Policy(with_articles="legal-point").choose(lgpd) == "legal-point"
    assert Policy(with_articles="legal-point").choose(manual) == "structural"
    assert Policy(by_type={"law": "legal-article"}).choose(lgpd) == "legal-article"


def test_legal_points_on_lgpd_art5_are_one_chunk_per_inciso_under_the_caput(lgpd, counter):
    chunks = PolicyChunker(Policy(with_articles="legal-point"))(lgpd, counter)
    art5 = [c for c in chunks if c.chunk_id.startswith("lgpd@2018#art-5/inc-")]
    assert len(art5) >= 19
    for chunk in art5:
        assert "Art. 5º Para os fins desta Lei, considera-se" in chunk.body
        assert chunk.path.split(" > ")[-2:][0] == "Art. 5º"
    assert max(c.token_count for c in chunks) <= counter.max_tokens
    damage = chunk_damage(chunks, lgpd.rows, {"lgpd@2018": lgpd.doc.text})
    assert (damage.orphans, damage.mid_line_starts, damage.truncated) == (0, 0, 0)


def test_default_on_lgpd_packs_clauses_under_the_caput_and_fits_the_model(lgpd, counter):
    chunks = PolicyChunker()(lgpd, counter)
    assert {c.strategy for c in chunks} == {"structural"}
    art5 = [c for c in chunks if c.parent_id == "lgpd@2018#art-5"]
    assert len(art5) > 1 and all(c.body.startswith("Art. 5º") for c in art5)
    assert max(c.token_count for c in chunks) <= counter.max_tokens


def test_default_on_the_manual_has_no_damage_and_fixed_chars_has_both(manual, counter):
    default = PolicyChunker()(manual, counter)
    texts = {"op@v1": manual.doc.text}
    damage = chunk_damage(default, manual.rows, texts, {"op@v1": manual.nodes})
    assert dataclasses.astuple(damage)[1:] == (0, 0, 0, 0, 0, 0)
    naive = build_chunker("fixed_chars-200-o40")(manual, counter)
    damage = chunk_damage(naive, manual.rows, texts)
    assert damage.orphans > 0 and damage.mid_line_starts > 0


def test_full_header_names_the_version_and_when_it_came_into_force():
    import datetime as dt

    from rag_assets.core.chunking.base import DocInfo, make_header

    info = DocInfo("m@v7", "m", "v7", "Manual", valid_from=dt.date(2026, 3, 1))
    assert make_header(info, "1 Reembolso") == "[m | 1 Reembolso | v7 (2026-03-01)]"
    assert make_header(info, "1 Reembolso", "path") == "[m | 1 Reembolso]"
    assert make_header(DocInfo("m@v1", "m", "v1", "Manual"), "") == "[m | v1]"
