"""Semantic chunking with the real model: it cuts at a topic change, covers every
character of the text with exact spans, and never exceeds what the model reads."""

from __future__ import annotations

import pytest

from rag_assets.core.chunking.base import DocInfo, Source
from rag_assets.core.chunking.semantic import SemanticChunker, sentences_of
from rag_assets.core.lake.schemas import DocText

from .conftest import SAMPLE_LAKE

MANUAL = SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf"

PUMP = [
    "The pump vibration limit is 4.5 millimetres per second at the bearings.",
    "Vibration is measured every ninety days with a portable collector on each bearing.",
    "When the vibration reading passes the limit, the operator must stop the pump.",
    "A misaligned shaft or a worn bearing is the usual cause of high pump vibration.",
]
REFUND = [
    "Customers may ask for a refund within thirty days of the purchase date.",
    "The refund is paid back to the original credit card within ten business days.",
    "Refund requests made after the deadline are rejected by the billing team.",
    "A refund for a cancelled subscription covers only the unused months.",
]


def _spans_exact(chunks, doc: DocText) -> None:
    for chunk in chunks:
        assert chunk.body == doc.text[chunk.char_start : chunk.char_end]
        assert chunk.text == f"{chunk.header}\n{chunk.body}"
        assert chunk.body == chunk.body.strip()


def test_breaks_at_the_topic_change(source_of, tmp_path, make_pdf, embedder, counter):
    pdf = make_pdf(tmp_path / "two-topics.pdf", [(" ".join(PUMP + REFUND), 11, False)])
    source = source_of(pdf, "topics@v1")
    text = source.doc.text
    assert "\n" in text.strip()  # printed line breaks inside sentences
    chunks = SemanticChunker(embedder)(source, counter)
    _spans_exact(chunks, source.doc)
    assert len(chunks) >= 2
    assert {c.strategy for c in chunks} == {"semantic-p90"}
    assert [c.chunk_id for c in chunks] == [f"topics@v1#semantic/{i}" for i in range(len(chunks))]
    assert all(c.parent_id is None and c.kind == "text" for c in chunks)
    assert all(c.header == "[topics | v1]" for c in chunks)
    # a break right where the refund topic starts, and no chunk mixes the two topics
    refund_start = " ".join(text.split()).index(REFUND[0][:20])
    starts = [len(" ".join(text[: c.char_start].split())) for c in chunks]
    assert any(abs(s - refund_start) <= 1 for s in starts), (starts, refund_start)
    for chunk in chunks:
        flat = " ".join(chunk.body.split()).lower()
        assert not ("vibration" in flat and "refund" in flat), chunk.body


def test_manual_is_covered_with_exact_spans_within_the_model(source_of, embedder, counter):
    source = source_of(MANUAL, "manual-operacao@v1")
    text = source.doc.text
    chunks = SemanticChunker(embedder)(source, counter)
    assert len(chunks) > 1
    _spans_exact(chunks, source.doc)
    covered = [False] * len(text)
    for chunk in chunks:
        for i in range(chunk.char_start, chunk.char_end):
            covered[i] = True
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missing, text[missing[0] : missing[0] + 40]
    assert all(a.char_end <= b.char_start for a, b in zip(chunks, chunks[1:], strict=False))
    for chunk in chunks:
        assert counter.count(chunk.text) == chunk.token_count <= counter.max_tokens
        assert not chunk.truncated
    # the table stays whole: its header line travels with every row
    table = [c for c in chunks if "4,5" in c.body]
    assert len(table) == 1 and "Medida Unidade Limite" in table[0].body


def test_size_cap_and_long_sentences_are_split_never_truncated(embedder, counter):
    words = " ".join(f"palavra{i}" for i in range(400))  # one sentence far over the model
    doc = DocText(f"Primeira frase curta sobre bombas.\n{words}.\nÚltima frase.", [0])
    source = Source(DocInfo("long@v1", "long", "v1", "Long"), doc)
    chunks = SemanticChunker(embedder, max_tokens=64, header_mode="off")(source, counter)
    assert {c.strategy for c in chunks} == {"semantic-p90-max64"}
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.body == doc.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.token_count <= 64 and not chunk.truncated
    joined = "".join(c.body for c in chunks)
    assert "".join(joined.split()) == "".join(doc.text.split())  # nothing lost


def test_sentences_keep_headings_with_their_text():
    doc = DocText("Fim da seção anterior.\n2.2 Medição\nA medição é mensal. Outra frase.", [0])
    units = sentences_of(doc)
    assert [u.text for u in units] == [
        "Fim da seção anterior.",
        "2.2 Medição\nA medição é mensal.",
        "Outra frase.",
    ]
    assert all(doc.text[u.start : u.end] == u.text for u in units)


def test_bad_percentile_is_rejected(embedder):
    with pytest.raises(ValueError, match="percentile"):
        SemanticChunker(embedder, percentile=150)


def test_empty_document_gives_no_chunks(embedder, counter):
    source = Source(DocInfo("e@v1", "e", "v1", "E"), DocText("  \n ", [0]))
    assert SemanticChunker(embedder)(source, counter) == []
