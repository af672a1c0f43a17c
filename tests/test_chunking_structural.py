"""The default policy's chunks answer alone: no orphan table values, no mid-line starts,
nothing truncated, headers that say where a chunk comes from; size-based cuts do damage."""

from __future__ import annotations

import pytest

from rag_assets.core.chunking.base import DocInfo, Source
from rag_assets.core.chunking.sized import fixed_chars
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.eval.metrics import chunk_damage

from .conftest import SAMPLE_LAKE

MANUAL = SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf"


def test_default_policy_has_no_damage_where_fixed_chars_has_both(prepared, counter):
    key = "manual-operacao@v1"
    doc, nodes, rows = prepared(MANUAL, key)
    info = DocInfo(key, "manual-operacao", "v1", "Manual de Operação")
    default = structural_chunks(Source(info, doc, nodes, rows), counter)
    damage = chunk_damage(default, rows, {key: doc.text})
    assert (damage.orphans, damage.mid_line_starts, damage.truncated) == (0, 0, 0)
    naive = fixed_chars(doc, key, counter, size=200, overlap=40)
    naive_damage = chunk_damage(naive, rows, {key: doc.text})
    assert naive_damage.orphans > 0
    assert naive_damage.mid_line_starts > 0


def test_table_value_chunk_holds_header_caption_and_context(prepared, counter):
    key = "manual-operacao@v1"
    doc, nodes, rows = prepared(MANUAL, key)
    info = DocInfo(key, "manual-operacao", "v1", "Manual de Operação")
    chunks = structural_chunks(Source(info, doc, nodes, rows), counter)
    vib = [c for c in chunks if "4,5" in c.text]
    assert len(vib) == 1
    chunk = vib[0]
    assert "Limite: 4,5" in chunk.text and "Medida: Vibração" in chunk.text
    assert chunk.text.startswith("[manual-operacao | 3 Tabela de tolerância > Tabela 1")
    assert chunk.text == f"{chunk.header}\n{chunk.body}"
    assert chunk.parent_id is not None and chunk.parent_id.endswith("tab-1")


def test_header_modes(prepared, counter):
    key = "manual-operacao@v1"
    doc, nodes, rows = prepared(MANUAL, key)
    info = DocInfo(key, "manual-operacao", "v1", "Manual")
    off = structural_chunks(Source(info, doc, nodes, rows), counter, header_mode="off")
    assert off and all(c.header == "" and c.text == c.body for c in off)
    path = structural_chunks(Source(info, doc, nodes, rows), counter, header_mode="path")
    assert path and all("v1" not in c.header for c in path)
    with pytest.raises(ValueError, match="header mode"):
        structural_chunks(Source(info, doc, nodes, rows), counter, header_mode="loud")


@pytest.mark.parametrize("law", ["lgpd/2018", "cdc/1990"])
def test_laws_fit_the_model_and_later_pieces_repeat_the_caput(prepared, counter, law: str):
    key = law.replace("/", "@")
    doc, nodes, rows = prepared(SAMPLE_LAKE / "raw" / f"{law}.pdf", key)
    info = DocInfo(key, key.split("@")[0], key.split("@")[1], "Lei")
    chunks = structural_chunks(Source(info, doc, nodes, rows), counter)
    assert max(c.token_count for c in chunks) <= counter.max_tokens
    assert counter.max_tokens == 256
    assert all(counter.count(c.text) == c.token_count for c in chunks[:50])
    damage = chunk_damage(chunks, rows, {key: doc.text})
    assert (damage.mid_line_starts, damage.truncated) == (0, 0)
    by_id = {n.node_id: n for n in nodes}
    for chunk in chunks:
        parent = by_id[chunk.parent_id]
        if parent.kind == "article" and chunk.char_start > parent.char_start:
            assert chunk.body.startswith(parent.label), chunk.chunk_id  # caput repeated
    assert len({c.chunk_id for c in chunks}) == len(chunks)


def test_unchanged_clauses_keep_id_and_hash_when_another_changes(
    prepared, tmp_path, make_pdf, counter
):
    blocks = [
        ("Política de Uso", 16, True),
        ("1. Acesso", 14, True),
        ("O acesso ao sistema exige senha pessoal.", 11, False),
        ("2. Backup", 14, True),
        ("O backup é feito diariamente às 22 horas.", 11, False),
    ]
    a = make_pdf(tmp_path / "a.pdf", blocks)
    changed = [*blocks[:4], ("O backup é feito a cada 6 horas.", 11, False)]
    b = make_pdf(tmp_path / "b.pdf", changed)
    results = []
    for path in (a, b):
        doc, nodes, rows = prepared(path, "pol@v1")
        info = DocInfo("pol@v1", "pol", "v1", "Política")
        results.append(
            {
                c.chunk_id: c.content_hash
                for c in structural_chunks(Source(info, doc, nodes, rows), counter)
            }
        )
    before, after = results
    assert before.keys() == after.keys()
    changed_ids = {k for k in before if before[k] != after[k]}
    assert changed_ids == {k for k in before if "sec-2" in k}


def test_across_versions_unchanged_clauses_keep_their_unit_id_and_with_path_headers_hash(
    prepared, tmp_path, make_pdf, counter
):
    """chunk_id is `<doc>@<version>#<unit path>`: the unit path survives a new version.
    The full header names the version, so every text (and hash) changes with it; with
    `header_mode=path` an unchanged clause keeps its hash, and so its cached vector."""
    blocks = [
        ("Política de Uso", 16, True),
        ("1. Acesso", 14, True),
        ("O acesso ao sistema exige senha pessoal.", 11, False),
        ("2. Backup", 14, True),
        ("O backup é feito diariamente às 22 horas.", 11, False),
    ]
    v1 = make_pdf(tmp_path / "v1.pdf", blocks)
    v2 = make_pdf(
        tmp_path / "v2.pdf", [*blocks[:4], ("O backup é feito a cada 6 horas.", 11, False)]
    )
    by_mode: dict[str, list[dict[str, str]]] = {"full": [], "path": []}
    for version, path in (("v1", v1), ("v2", v2)):
        key = f"pol@{version}"
        doc, nodes, rows = prepared(path, key)
        info = DocInfo(key, "pol", version, "Política")
        for mode in by_mode:
            chunks = structural_chunks(Source(info, doc, nodes, rows), counter, header_mode=mode)
            by_mode[mode].append({c.chunk_id.split("#", 1)[1]: c.content_hash for c in chunks})
    (full1, full2), (path1, path2) = by_mode["full"], by_mode["path"]
    assert full1.keys() == full2.keys() == path1.keys() == path2.keys()
    assert full1 and all(full1[u] != full2[u] for u in full1)  # the version is in every text
    assert {u for u in path1 if path1[u] != path2[u]} == {u for u in path1 if "sec-2" in u}


def test_a_paragraph_printed_around_a_table_is_cut_where_its_words_are(counter):
    """A text unit whose lines sit before and after a table's lines (its text skips them):
    every chunk cut from it starts at a line or sentence and holds the document's own
    text at its offsets, not the text a table's length further on."""
    from rag_assets.core.lake.schemas import DocText, Node

    key = "gap@v1"
    sentence = "The agency has no data that would enable it to estimate the flight costs"
    after = "\n".join(f"{sentence} of operator {i}." for i in range(1, 30))
    table = "Action Labor cost Parts cost\nWiring change $3,790 $10,505\nSensor test $3,400 $0"
    text = f"Costs of Compliance\nThe costs follow.\n{table}\n{after}"
    doc = DocText(text=text, page_starts=[0])
    own = f"The costs follow.\n{after}"  # the paragraph's text, the table's lines left out
    start = text.index("The costs follow.")

    def node(node_id: str, kind: str, body: str, begin: int, parent: str | None) -> Node:
        return Node(node_id, key, parent, kind, "", "", 0, 0, body, 1, 1, begin, len(text))

    nodes = [
        node(f"{key}#doc", "document", "Costs of Compliance", 0, None),
        node(f"{key}#t1", "text", own, start, f"{key}#doc"),
    ]
    info = DocInfo(key, "gap", "v1", "Gap")
    chunks = structural_chunks(Source(info, doc, nodes, []), counter, target_tokens=60)
    assert len(chunks) > 2
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] in chunk.text
    assert chunk_damage(chunks, [], {key: text}).mid_line_starts == 0
    assert "Wiring change" not in " ".join(c.text for c in chunks)
