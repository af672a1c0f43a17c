"""Legal, table-row and whole-document strategies on the real laws and manual: the units
are the law's own, every chunk fits the model, no article text is lost, rows keep their
header, and a document too long to read whole falls back without truncation."""

from __future__ import annotations

import pytest

from rag_assets.core.chunking.base import Source
from rag_assets.core.chunking.legal import LegalChunker
from rag_assets.core.chunking.rows import TableRowsChunker
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.chunking.whole import WholeChunker
from rag_assets.core.eval.metrics import chunk_damage
from rag_assets.core.lake.schemas import Chunk

from .conftest import SAMPLE_LAKE

UNITS = ("article", "paragraph", "point")


@pytest.fixture(scope="module")
def lgpd(source_of) -> Source:
    return source_of(SAMPLE_LAKE / "raw" / "lgpd" / "2018.pdf", "lgpd@2018")


@pytest.fixture(scope="module")
def cdc(source_of) -> Source:
    return source_of(SAMPLE_LAKE / "raw" / "cdc" / "1990.pdf", "cdc@1990")


@pytest.fixture(scope="module")
def manual(source_of) -> Source:
    return source_of(SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf", "manual-operacao@v1")


def article(source: Source, label: str):
    return next(n for n in source.nodes if n.kind == "article" and n.label == label)


def test_point_gives_one_chunk_per_inciso_under_the_caput(lgpd, counter):
    chunks = LegalChunker("point")(lgpd, counter)
    art5 = article(lgpd, "Art. 5º")
    incisos = [c for c in chunks if c.parent_id == art5.node_id and c.kind == "item"]
    assert len(incisos) >= 19
    by_id = {n.node_id: n for n in lgpd.nodes}
    for chunk in incisos:
        node = by_id[chunk.chunk_id.split("~")[0]]
        assert chunk.body.startswith("Art. 5º") and "Para os fins desta Lei" in chunk.body
        assert chunk.path.endswith(f"Art. 5º > {node.label}")
        assert chunk.header == f"[lgpd | {chunk.path} | 2018]"  # no valid_from given
        assert chunk.body.endswith(lgpd.doc.text[chunk.char_start : chunk.char_end])
    tenth = next(c for c in incisos if c.chunk_id == "lgpd@2018#art-5/inc-x")
    assert tenth.body.split("\n")[1].startswith("X - tratamento")
    caput = [c for c in chunks if c.chunk_id == "lgpd@2018#art-5"]
    assert len(caput) == 1 and caput[0].body == "Art. 5º Para os fins desta Lei, considera-se:"
    assert {c.strategy for c in chunks} == {"legal-point"}


def test_point_keeps_alineas_with_their_inciso_and_repeats_the_paragraph(lgpd, counter):
    chunks = {c.chunk_id: c for c in LegalChunker("point")(lgpd, counter)}
    inciso = chunks["lgpd@2018#art-4/inc-iii"]  # III - ... de: a) b) c) d) fit together
    assert "a) segurança pública" in inciso.body and "d) atividades" in inciso.body
    assert not any(k.startswith("lgpd@2018#art-4/inc-iii/ali") for k in chunks)
    nested = chunks["lgpd@2018#art-52/par-1/inc-ii"]  # an inciso of a § repeats the §'s lead
    lines = nested.body.split("\n")
    assert lines[0].startswith("Art. 52") and lines[1].startswith("§ 1º")
    assert lines[2] == "II - a boa-fé do infrator;"
    assert nested.path.endswith("Art. 52 > § 1º > II")


def test_paragraph_groups_caput_with_incisos_and_each_paragraph(lgpd, counter):
    chunks = LegalChunker("paragraph")(lgpd, counter)
    art3 = article(lgpd, "Art. 3º")
    mine = [c for c in chunks if c.parent_id == art3.node_id]
    assert [c.chunk_id for c in mine] == [
        "lgpd@2018#art-3",
        "lgpd@2018#art-3/par-1",
        "lgpd@2018#art-3/par-2",
    ]
    assert "I - a operação" in mine[0].body and "III - os dados" in mine[0].body
    assert "§ 1º" not in mine[0].body
    assert mine[1].body.startswith("Art. 3º") and mine[1].path.endswith("Art. 3º > § 1º")


def test_article_has_one_chunk_per_article_unless_split_for_size(lgpd, counter):
    chunks = LegalChunker("article")(lgpd, counter)
    articles = [n for n in lgpd.nodes if n.kind == "article"]
    assert len(articles) == 80
    for node in articles:
        mine = [c for c in chunks if c.parent_id == node.node_id]
        assert any(c.char_start < node.char_end and node.char_start < c.char_end for c in mine)
        ids = [c.chunk_id for c in mine]
        seg = node.node_id
        assert ids == [seg] or ids == [f"{seg}~{i}" for i in range(1, len(ids) + 1)], ids
        assert all(c.path.endswith(node.label) for c in mine)
    pieces = [c for c in chunks if c.chunk_id.startswith("lgpd@2018#art-5~")]
    assert len(pieces) > 1  # Art. 5º is far longer than 256 tokens: split, not truncated
    assert all(c.body.startswith("Art. 5º Para os fins desta Lei") for c in pieces)


def covered(chunks: list[Chunk], size: int) -> list[bool]:
    flags = [False] * size
    for chunk in chunks:
        for i in range(chunk.char_start, chunk.char_end):
            flags[i] = True
    return flags


@pytest.mark.parametrize("law", ["lgpd", "cdc"])
@pytest.mark.parametrize("unit", UNITS)
def test_legal_chunks_fit_the_model_lose_no_text_and_do_no_damage(request, counter, law, unit):
    source: Source = request.getfixturevalue(law)
    chunks = LegalChunker(unit)(source, counter)
    text = source.doc.text
    assert max(c.token_count for c in chunks) <= counter.max_tokens == 256
    assert not any(c.truncated for c in chunks)
    damage = chunk_damage(chunks, source.rows, {source.info.partition_key: text})
    assert (damage.orphans, damage.mid_line_starts, damage.truncated) == (0, 0, 0)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    for chunk in chunks[::7]:
        assert chunk.text == f"{chunk.header}\n{chunk.body}"
        assert counter.count(chunk.text) == chunk.token_count
        assert chunk.body.endswith(text[chunk.char_start : chunk.char_end])
    flags = covered(chunks, len(text))
    for node in source.nodes:
        if node.kind == "article":
            missing = [i for i in range(node.char_start, node.char_end) if not flags[i]]
            assert not [i for i in missing if not text[i].isspace()], node.label


def test_legal_on_a_document_without_articles_is_the_default(manual, counter):
    chunks = LegalChunker("point")(manual, counter)
    default = structural_chunks(manual, counter)
    assert {c.chunk_id: c.text for c in chunks} == {c.chunk_id: c.text for c in default}
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)  # in reading order (the default puts tables last)


def test_legal_rejects_unknown_unit():
    with pytest.raises(ValueError, match="legal unit"):
        LegalChunker("chapter")  # type: ignore[arg-type]
    assert LegalChunker("paragraph").name == "legal-paragraph"


def test_table_rows_each_carry_caption_and_every_header(manual, counter):
    chunks = TableRowsChunker()(manual, counter)
    assert len(chunks) == 4
    table = next(n for n in manual.nodes if n.kind == "table")
    for chunk in chunks:
        assert chunk.parent_id == table.node_id and chunk.strategy == "table_rows"
        assert chunk.body.startswith("Tabela 1 – Limites de tolerância por medida\n")
        assert all(f"{h}:" in chunk.body for h in ("Medida", "Unidade", "Limite", "Ação"))
    damage = chunk_damage(chunks, manual.rows, {manual.info.partition_key: manual.doc.text})
    assert (damage.orphans, damage.mid_line_starts, damage.truncated) == (0, 0, 0)
    packed = TableRowsChunker(pack=True)(manual, counter)
    assert 0 < len(packed) < len(chunks)
    rows = [line for c in packed for line in c.body.split("\n")[1:]]
    assert len(rows) == 4 and all("Limite:" in row for row in rows)
    assert all(c.token_count <= counter.max_tokens for c in packed)
    assert {c.strategy for c in packed} == {"table_rows-packed"}


def test_table_rows_on_a_law_without_tables_is_empty(lgpd, counter):
    assert TableRowsChunker()(lgpd, counter) == []


def test_whole_is_one_chunk_when_it_fits_and_falls_back_when_not(
    source_of, tmp_path, make_pdf, lgpd, counter
):
    pdf = make_pdf(
        tmp_path / "aviso.pdf",
        [("Aviso de manutenção", 16, True), ("O sistema para no sábado às 22 horas.", 11, False)],
    )
    small = source_of(pdf, "aviso@v1")
    chunks = WholeChunker()(small, counter)
    assert len(chunks) == 1
    chunk = chunks[0]
    assert chunk.chunk_id == "aviso@v1#doc" and chunk.parent_id == "aviso@v1"
    assert chunk.body == small.doc.text.strip() and "22 horas" in chunk.body
    assert chunk.text == f"[aviso | v1]\n{chunk.body}" and not chunk.truncated
    fallback = WholeChunker()(lgpd, counter)
    assert len(fallback) > 1 and {c.strategy for c in fallback} == {"whole"}
    assert not any(c.truncated for c in fallback)
    assert max(c.token_count for c in fallback) <= counter.max_tokens
