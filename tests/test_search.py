"""The LanceDB store and search API, on a real LanceDB and the bundled model."""

from __future__ import annotations

import datetime as dt
import logging
import multiprocessing as mp
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from rag_assets.core import index as search
from rag_assets.core.embedding.embedder import MINILM, Embedder
from rag_assets.core.index import (
    Index,
    Stamp,
    delete_partition_everywhere,
    fts_terms,
    table_name,
    upkeep,
)
from rag_assets.core.index.citations import cited_articles
from rag_assets.core.lake.layout import LakeError
from rag_assets.core.lake.schemas import CHUNKS
from rag_assets.core.request import RequestError, SearchRequest, search_request

from .conftest import (
    DOCS,
    V1_END,
    V2_START,
    VALIDITY,
    chunk_row,
    make_chunks,
    prompted_model,
)


@pytest.fixture(scope="module")
def three_versions(upsert, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """A LanceDB folder holding the three versions, all active: embedded once a module."""
    folder = tmp_path_factory.mktemp("three") / "lancedb"
    idx = Index(folder, embedder)
    for key in DOCS:
        upsert(idx, key)
    return folder


@pytest.fixture
def index(three_versions: Path, tmp_path: Path, embedder: Embedder) -> Index:
    """An index holding the three versions, all active: a private copy of
    `three_versions`, so a test may change it."""
    shutil.copytree(three_versions, tmp_path / "lancedb")
    return Index(tmp_path / "lancedb", embedder)


def test_table_name_and_empty_store(tmp_path: Path, embedder: Embedder) -> None:
    assert table_name("all-minilm-l6-v2") == "chunks__all-minilm-l6-v2"
    idx = Index(tmp_path / "lancedb", embedder)
    assert not idx.exists()
    assert idx.partition_counts() == {}
    assert idx.delete_partition("doc-a@v1") == 0
    assert idx.search(SearchRequest(query="anything")) == []
    assert idx.search_many([SearchRequest(query=q, mode="fts") for q in ["a", "b"]]) == [[], []]


def test_upsert_creates_table_and_counts(index: Index) -> None:
    assert index.exists()
    assert index.table_name == f"chunks__{index.embedder.model_id}"
    assert index.partition_counts() == {"doc-a@v1": 3, "doc-a@v2": 2, "doc-b@v1": 2}


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
def test_each_mode_finds_the_right_chunk(index: Index, mode: str) -> None:
    hits = index.search(SearchRequest(query="refund deadline after purchase", k=3, mode=mode))
    assert hits[0].chunk_id == "doc-b@v1#refund"
    assert hits[0].title == "Store Policy"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_fts_is_accent_and_case_insensitive_for_portuguese(ids, index: Index) -> None:
    for query in ("vibração", "VIBRACAO", "limites de vibração"):
        hits = index.search(SearchRequest(query=query, k=1, mode="fts"))
        assert ids(hits) == ["doc-a@v2#sec-1"], query


def test_fts_punctuation_does_not_raise(ids, index: Index) -> None:
    nasty = [
        "qual o limite de vibração?",
        'garantia: "12 meses',
        "(motor) AND OR NOT * ~ ^ + - ! [ ] { } \\ /",
        "'; DROP TABLE chunks; --",
    ]
    for query in nasty:
        for mode in ("fts", "hybrid"):
            index.search(SearchRequest(query=query, mode=mode))
    for query in ("???", "", "   "):  # no word: refused where the request is built
        with pytest.raises(RequestError, match="no word|empty"):
            search_request({"query": query, "mode": "fts"})
    assert ids(
        index.search(SearchRequest(query="qual o limite de vibração?", k=1, mode="fts"))
    ) == ["doc-a@v2#sec-1"]
    assert fts_terms('garantia: "12 meses?') == "garantia 12 meses"


def test_hybrid_reports_retrievers_and_ranks(index: Index) -> None:
    hits = index.search(SearchRequest(query="What is the refund deadline?", k=3, mode="hybrid"))
    top = hits[0]
    assert top.chunk_id == "doc-b@v1#refund"
    assert sorted(top.retrievers) == ["fts", "vector"]
    assert top.ranks == {"vector": 1, "fts": 1}
    assert top.score == pytest.approx(2 / 61)
    assert index.search(SearchRequest(query="refund", k=1, mode="vector"))[0].retrievers == [
        "vector"
    ]
    assert index.search(SearchRequest(query="refund", k=1, mode="fts"))[0].retrievers == ["fts"]
    data = top.to_json()
    for key in (
        "chunk_id",
        "doc_id",
        "version",
        "title",
        "path",
        "page_start",
        "page_end",
        "score",
        "text",
        "retrievers",
    ):
        assert key in data
    assert data["retrievers"] == top.retrievers


def test_hybrid_degrades_to_vector_without_fts_match(index: Index) -> None:
    hits = index.search(SearchRequest(query="xyzzy quux", k=3, mode="hybrid"))
    assert len(hits) == 3
    assert all(h.retrievers == ["vector"] for h in hits)
    assert index.search(SearchRequest(query="xyzzy quux", k=3, mode="fts")) == []


def test_hybrid_answers_from_vectors_alone_and_says_so_when_full_text_fails(
    ids, upsert, tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken full-text index (its files overwritten on disk): hybrid search still
    answers, from the vector list, every hit naming `vector` alone as its retriever, and a
    warning names the table; full-text mode fails instead of answering nothing."""
    idx = Index(tmp_path / "lancedb", embedder)
    for key in DOCS:
        upsert(idx, key)
    assert (
        "fts"
        in idx.search(SearchRequest(query="refund deadline", k=3, mode="hybrid"))[0].retrievers
    )
    files = [f for f in (tmp_path / "lancedb" / f"{idx.table_name}.lance" / "_indices").rglob("*")]
    assert [f for f in files if f.is_file()]
    for f in files:
        if f.is_file():
            f.write_bytes(b"not an index")
    idx = Index(tmp_path / "lancedb", embedder)  # a new connection: nothing cached in memory
    with caplog.at_level(logging.WARNING, logger="rag_assets.core.index"):
        hits = idx.search(SearchRequest(query="refund deadline", k=3, mode="hybrid"))
    assert ids(hits)[0] == "doc-b@v1#refund"
    assert [h.retrievers for h in hits] == [["vector"]] * 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("full-text search failed" in m and idx.table_name in m for m in warnings)
    with pytest.raises(RuntimeError):
        idx.search(SearchRequest(query="refund deadline", k=3, mode="fts"))


def test_search_works_before_the_fts_index_is_built(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    idx = Index(tmp_path / "lancedb", embedder)
    upsert(idx, "doc-b@v1", rebuild_fts=False)
    assert (
        ids(idx.search(SearchRequest(query="refund deadline", k=2, mode="hybrid")))[0]
        == "doc-b@v1#refund"
    )
    idx.build_fts_index()
    upsert(idx, "doc-a@v2", rebuild_fts=False)  # rows newer than the index are found too
    assert ids(idx.search(SearchRequest(query="REFUND", k=1, mode="fts"))) == ["doc-b@v1#refund"]
    assert ids(idx.search(SearchRequest(query="vibracao", k=1, mode="fts"))) == ["doc-a@v2#sec-1"]


def test_fts_index_is_updated_incrementally_not_rebuilt(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    """After the first build, new rows are searched flat until INDEX_LAG_ROWS of them wait,
    then added to the index (optimize), never rebuilt; a term only in the new version is
    found all along, and gone once the version is deleted."""
    idx = Index(tmp_path / "lancedb", embedder)
    upsert(idx, "doc-b@v1")
    assert idx.last_index_update[0].startswith("full-text index built")
    first = idx.index_stats().fts
    assert first is not None and (first.indexed_rows, first.unindexed_rows) == (2, 0)
    upsert(idx, "doc-a@v1")  # 3 rows: under INDEX_LAG_ROWS, left to the flat search
    assert idx.last_index_update == []
    fts = idx.index_stats().fts
    assert fts is not None and (fts.indexed_rows, fts.unindexed_rows) == (2, 3)
    old = dt.date(2023, 6, 1)
    query = "lubrificacao rolamentos"
    assert ids(idx.search(SearchRequest(query=query, k=3, mode="fts", as_of=old))) == [
        "doc-a@v1#sec-3"
    ]
    done = idx.update_indexes(max_lag_rows=0)
    assert [a.split(" (")[0] for a in done] == ["indexes updated incrementally"]
    fts = idx.index_stats().fts
    assert fts is not None and (fts.indexed_rows, fts.unindexed_rows) == (5, 0)
    assert fts.segments == 1
    assert ids(idx.search(SearchRequest(query=query, k=3, mode="fts", as_of=old))) == [
        "doc-a@v1#sec-3"
    ]
    assert idx.delete_partition("doc-a@v1") == 3
    assert idx.search(SearchRequest(query=query, k=3, mode="fts", as_of=old)) == []
    assert idx.search(SearchRequest(query="vibração garantia", k=10, mode="fts", as_of=old)) == []
    assert ids(idx.search(SearchRequest(query="refund", k=1, mode="fts"))) == ["doc-b@v1#refund"]


def test_upsert_updates_the_fts_index_past_the_lag(
    upsert, tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upkeep, "INDEX_LAG_ROWS", 3)
    idx = Index(tmp_path / "lancedb", embedder)
    upsert(idx, "doc-b@v1")
    upsert(idx, "doc-a@v2")  # 2 waiting: under the lag
    assert idx.last_index_update == []
    upsert(idx, "doc-a@v1")  # 5 waiting
    assert [a.split(" (")[0] for a in idx.last_index_update] == ["indexes updated incrementally"]
    assert idx.index_stats().fts == search.IndexState("text_idx", "text", "FTS", 7, 0, 1)


def test_fts_index_with_another_analyzer_is_rebuilt(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    idx = Index(tmp_path / "lancedb", embedder)
    upsert(idx, "doc-b@v1")
    english = Index(tmp_path / "lancedb", embedder, fts_language="English")
    assert [a.split(" (")[0] for a in english.update_indexes()] == ["full-text index built"]
    assert english.update_indexes() == []  # up to date: nothing to do
    assert ids(english.search(SearchRequest(query="refunds", k=1, mode="fts"))) == [
        "doc-b@v1#refund"
    ]


def test_a_purge_rebuilds_the_full_text_index_with_its_own_analyzer(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    """Removing a version rebuilds the full-text index (so its words are gone): with the
    analyzer the index had, not the default one."""
    english = Index(tmp_path / "lancedb", embedder, fts_language="English")
    upsert(english, "doc-b@v1")
    upsert(english, "doc-a@v1")
    english.update_indexes()
    delete_partition_everywhere(tmp_path / "lancedb", "doc-a@v1")
    assert english.update_indexes() == []  # still English: nothing to rebuild
    assert ids(english.search(SearchRequest(query="refunds", k=1, mode="fts"))) == [
        "doc-b@v1#refund"
    ]


def test_reupsert_with_fewer_chunks_replaces_only_that_partition(ids, upsert, index: Index) -> None:
    before_b = index.search(
        SearchRequest(query="passwords rotated", k=1, mode="vector", documents=["doc-b"])
    )
    n = upsert(index, "doc-a@v1", only=["sec-2"])
    assert n == 1
    assert index.partition_counts() == {"doc-a@v1": 1, "doc-a@v2": 2, "doc-b@v1": 2}
    old = dt.date(2023, 6, 1)
    hits = index.search(
        SearchRequest(query="garantia", k=10, mode="fts", versions=["v1"], as_of=old)
    )
    assert ids(hits) == ["doc-a@v1#sec-2"]
    assert (
        index.search(SearchRequest(query="lubrifique rolamentos", k=5, mode="fts", as_of=old)) == []
    )
    # the same partition written twice leaves no duplicates
    assert upsert(index, "doc-a@v1", only=["sec-2"]) == 1
    assert index.partition_counts()["doc-a@v1"] == 1
    after_b = index.search(
        SearchRequest(query="passwords rotated", k=1, mode="vector", documents=["doc-b"])
    )
    assert ids(after_b) == ids(before_b) == ["doc-b@v1#passwords"]


def test_upsert_accepts_polars_and_updates_text(index: Index) -> None:
    chunks = make_chunks("doc-b@v1")
    df = pl.from_arrow(chunks)
    df = df.with_columns(
        pl.when(pl.col("chunk_id") == "doc-b@v1#refund")
        .then(pl.col("text").str.replace("thirty", "forty-five"))
        .otherwise(pl.col("text"))
        .alias("text")
    )
    vectors = index.embedder.embed_passages(df["text"].to_list())
    assert index.upsert_partition("doc-b@v1", df, vectors, Stamp("active", title="Policy")) == 2
    hit = index.search(SearchRequest(query="refund", k=1, mode="fts"))[0]
    assert "forty-five" in hit.text and hit.title == "Policy"


def test_revoked_rows_are_never_returned(ids, upsert, index: Index) -> None:
    upsert(index, "doc-b@v1", status="revoked")
    for mode in ("vector", "fts", "hybrid"):
        hits = index.search(SearchRequest(query="refund deadline passwords", k=10, mode=mode))
        assert hits or mode == "fts", mode  # doc-a answers the vector side
        assert all(h.doc_id != "doc-b" for h in hits), mode
    revoked = index.search(
        SearchRequest(query="refund deadline", k=1, mode="hybrid"), include_revoked=True
    )
    assert ids(revoked) == ["doc-b@v1#refund"] and revoked[0].status == "revoked"


def test_as_of_picks_the_version_valid_on_that_day(ids, index: Index) -> None:
    q = "limite de vibração do motor"
    for mode in ("vector", "fts", "hybrid"):
        old = index.search(
            SearchRequest(query=q, k=10, mode=mode, documents=["doc-a"], as_of=dt.date(2023, 6, 1))
        )
        new = index.search(
            SearchRequest(query=q, k=10, mode=mode, documents=["doc-a"], as_of=dt.date(2024, 6, 1))
        )
        today = index.search(SearchRequest(query=q, k=10, mode=mode, documents=["doc-a"]))
        assert {h.version for h in old} == {"v1"}, mode
        assert {h.version for h in new} == {"v2"}, mode
        assert ids(today) == ids(new), mode
        assert old[0].chunk_id == "doc-a@v1#sec-1" and "92 Hz" in old[0].body
    # boundaries are inclusive on both ends
    assert {
        h.version
        for h in index.search(SearchRequest(query=q, k=10, documents=["doc-a"], as_of=V1_END))
    } == {"v1"}
    assert {
        h.version
        for h in index.search(SearchRequest(query=q, k=10, documents=["doc-a"], as_of=V2_START))
    } == {"v2"}


def test_doc_id_and_version_filters(ids, index: Index) -> None:
    hits = index.search(
        SearchRequest(query="garantia meses", k=10, mode="hybrid", documents=["doc-b"])
    )
    assert hits and {h.doc_id for h in hits} == {"doc-b"}
    old = dt.date(2023, 6, 1)
    hits = index.search(
        SearchRequest(query="garantia", k=10, mode="fts", versions=["v1"], as_of=old)
    )
    assert ids(hits) == ["doc-a@v1#sec-2"]
    assert (
        index.search(SearchRequest(query="garantia", k=10, mode="fts", versions=["v9"], as_of=old))
        == []
    )
    with pytest.raises(LakeError):
        index.search(SearchRequest(query="x", documents=["a' OR '1'='1"]))
    with pytest.raises(LakeError):
        index.search(SearchRequest(query="x", versions=["V1"]))


def test_delete_partition_removes_only_that_partition(ids, index: Index) -> None:
    assert index.delete_partition("doc-a@v2") == 2
    assert index.partition_counts() == {"doc-a@v1": 3, "doc-b@v1": 2}
    assert index.delete_partition("doc-a@v2") == 0
    assert (
        index.search(SearchRequest(query="vibração", k=5, mode="fts")) == []
    )  # v1 expired, v2 gone
    assert ids(index.search(SearchRequest(query="refund", k=1, mode="fts"))) == ["doc-b@v1#refund"]


def test_search_many_matches_search(ids, index: Index) -> None:
    """Queries asked together get the hits each gets alone: the same chunks, ranks and
    fields; the cosines up to float rounding (a batch and a single text are embedded by
    different kernels: 1e-7 apart on an AVX2 CPU)."""
    queries = ["refund deadline", "passwords rotation", "vibração do motor"]
    many = index.search_many([SearchRequest(query=q, k=2, mode="hybrid") for q in queries])
    assert len(many) == 3
    for query, hits in zip(queries, many, strict=True):
        alone = [h.to_json() for h in index.search(SearchRequest(query=query, k=2, mode="hybrid"))]
        together = [h.to_json() for h in hits]
        assert [{**h, "cosine": None} for h in together] == [{**h, "cosine": None} for h in alone]
        for a, b in zip(together, alone, strict=True):
            assert a["cosine"] == pytest.approx(b["cosine"], abs=1e-5)


@pytest.mark.parametrize("query", ["refund deadline", "vibração do motor", "garantia meses"])
def test_hybrid_hits_are_their_chunks_rows_at_each_retrievers_rank(
    index: Index, query: str
) -> None:
    """Hybrid search ranks keys and reads the hit columns afterwards: every hit still
    carries its own chunk's text, citation and validity, and the rank each retriever
    gave it on its own."""
    everything = 7  # every chunk of the index (those in force), in each retriever's order
    alone = {
        mode: index.search(SearchRequest(query=query, k=everything, mode=mode))
        for mode in ("vector", "fts")
    }
    rows = {h.chunk_id: h.to_json() for h in alone["vector"]}
    hits = index.search(SearchRequest(query=query, k=everything, mode="hybrid"))
    assert len(hits) == len(alone["vector"]) >= 3
    for hit in hits:
        got = hit.to_json()
        for key in ("score", "retrievers", "ranks", "bm25"):
            del got[key], rows[hit.chunk_id][key]
        assert got == rows[hit.chunk_id]  # its cosine included: the vector retriever's
        for mode, ranked in alone.items():
            order = [h.chunk_id for h in ranked]
            rank = order.index(hit.chunk_id) + 1 if hit.chunk_id in order else None
            assert hit.ranks.get(mode) == rank
        # beside the fused score, each retriever's own: BM25 where full text found it
        bm25 = {h.chunk_id: h.score for h in alone["fts"]}.get(hit.chunk_id)
        assert hit.bm25 == (None if bm25 is None else pytest.approx(bm25, abs=1e-5))
    assert {"vector", "fts"} <= {r for h in hits for r in h.retrievers}


def test_a_hybrid_hit_only_full_text_found_gets_its_cosine_from_its_stored_vector(
    index: Index,
) -> None:
    query = "garantia meses"
    tbl = index.current_table()
    where = index._where(tbl, None, None, dt.date.today(), False)
    fused = search.retrieval.rrf({"fts": index._fts(tbl, query, where, 3, True, True)}, 3)
    [hits] = search.retrieval.fetch_hits(tbl, [fused], index.embedder.embed_queries([query]))
    cosines = {
        h.chunk_id: h.cosine for h in index.search(SearchRequest(query=query, k=7, mode="vector"))
    }
    assert hits and all(h.retrievers == ["fts"] and h.bm25 is not None for h in hits)
    assert all(h.cosine == pytest.approx(cosines[h.chunk_id], abs=1e-5) for h in hits)


def test_min_score_drops_the_hits_below_it_and_needs_a_cosine(index: Index) -> None:
    every = index.search(SearchRequest(query="refund deadline", k=7, mode="hybrid"))
    cut = sorted(h.cosine for h in every)[len(every) // 2]
    kept = index.search(SearchRequest(query="refund deadline", k=7, mode="hybrid", min_score=cut))
    assert [h.chunk_id for h in kept] == [h.chunk_id for h in every if h.cosine >= cut]
    assert 0 < len(kept) < len(every)
    assert (
        index.search(SearchRequest(query="refund deadline", k=7, mode="vector", min_score=1.0))
        == []
    )
    assert index.min_score_for("hybrid") == index.min_score  # the model's default
    assert index.min_score_for("vector", 0.3) == 0.3
    assert index.min_score_for("fts") is None
    with pytest.raises(RequestError, match="mode fts has none"):
        search_request({"query": "refund", "mode": "fts", "min_score": 0.3})


def test_a_ranked_chunk_that_cannot_be_read_back_is_a_clear_error(index: Index) -> None:
    tbl = index.current_table()
    gone = search.retrieval.Fused({"_rowid": 10**12, "partition_key": "x", "chunk_id": "y"})
    with pytest.raises(RuntimeError, match=f"table {index.table_name} .* could not be read back"):
        search.retrieval.fetch_hits(tbl, [[gone]])


def test_bad_input_is_rejected(index: Index) -> None:
    chunks = make_chunks("doc-b@v1")
    vectors = index.embedder.embed_passages(chunks.column("text").to_pylist())
    with pytest.raises(LakeError):
        index.upsert_partition("Doc B@v1", chunks, vectors, Stamp("active", title="t"))
    with pytest.raises(ValueError, match="other partitions"):
        index.upsert_partition("doc-c@v1", chunks, vectors, Stamp("active", title="t"))
    with pytest.raises(ValueError, match="vectors"):
        index.upsert_partition("doc-b@v1", chunks, vectors[:1], Stamp("active", title="t"))
    with pytest.raises(ValueError, match="status"):
        index.upsert_partition("doc-b@v1", chunks, vectors, Stamp("deleted", title="t"))
    with pytest.raises(ValueError, match="dimension|-d vectors"):
        index.upsert_partition(
            "doc-b@v1", chunks, np.ones((2, 8), np.float32), Stamp("active", title="t")
        )
    with pytest.raises(ValueError, match="mode"):
        index.search(SearchRequest(query="x", mode="bm25"))  # type: ignore[arg-type]
    assert index.partition_counts()["doc-b@v1"] == 2


def test_empty_upsert_clears_the_partition(index: Index) -> None:
    empty = make_chunks("doc-b@v1", only=[])
    vectors = np.zeros((0, 384), np.float32)
    assert index.upsert_partition("doc-b@v1", empty, vectors, Stamp("active", title="t")) == 0
    assert "doc-b@v1" not in index.partition_counts()


def _write_partition(uri: str, key: str, rounds: int, start_at: float) -> list[int]:
    """One writer process: upsert a partition a few times, starting with the others."""
    idx = Index(uri, Embedder(model=MINILM))  # model_id only: the model is never loaded here
    while time.time() < start_at:
        pass
    out = []
    for _ in range(rounds):
        chunks = make_chunks(key)
        vectors = np.random.default_rng().random((chunks.num_rows, 384), dtype=np.float32)
        out.append(idx.upsert_partition(key, chunks, vectors, Stamp("active", *VALIDITY[key], "t")))
    return out


@pytest.mark.slow
def test_concurrent_writers_lose_and_duplicate_nothing(tmp_path: Path, embedder: Embedder) -> None:
    """Parallel runs (fresh table, same partition twice) end with exactly one copy each.

    Without the write lock LanceDB 0.40 lets a second "create" overwrite the first one's
    rows and two merges of one partition both insert it.
    """
    uri = str(tmp_path / "lancedb")
    jobs = [key for key in DOCS for _ in range(2)]
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(len(jobs), mp_context=ctx) as pool:
        start_at = time.time() + 6  # after every worker has imported
        futures = [pool.submit(_write_partition, uri, key, 3, start_at) for key in jobs]
        results = [f.result(timeout=300) for f in futures]
    expected = {key: len(DOCS[key][1]) for key in DOCS}
    assert Index(uri, embedder).partition_counts() == expected
    assert results == [[expected[key]] * 3 for key in jobs]


def test_the_models_own_prompts_are_used_when_none_is_configured(
    tmp_path: Path, embedder: Embedder
) -> None:
    """A sentence-transformers model that ships `query`/`document` prompts in its config
    gets them without any trecho setting; a configured prefix still wins."""
    prompts = {"query": "query: ", "document": "passage: "}
    model = prompted_model(tmp_path / "minilm-prompted", prompts)

    prompted = Embedder(model=str(model))
    assert prompted.effective_query_prefix == "query: "
    assert prompted.effective_passage_prefix == "passage: "
    same = embedder.embed_queries(["query: prazo de reembolso"])
    assert np.allclose(prompted.embed_queries(["prazo de reembolso"]), same, atol=1e-5)
    counted = prompted.token_counter().count("prazo")
    assert counted == embedder.token_counter().count("passage: prazo")
    override = Embedder(model=str(model), query_prefix="search: ")
    assert override.effective_query_prefix == "search: "


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
def test_equal_scores_rank_the_same_whatever_order_they_were_written(
    ids, tmp_path: Path, embedder: Embedder, mode: str
) -> None:
    """Two chunks with the same text score alike in every retriever: the ranking must not
    depend on the order the store returns them in (a new model's table, or the same one
    after an index update, must answer the same)."""
    rankings = []
    for order in (["doc-a@v1", "doc-c@v1"], ["doc-c@v1", "doc-a@v1"]):
        idx = Index(tmp_path / "-".join(order), embedder)
        source = make_chunks("doc-a@v1", only=["sec-2"])
        for key in order:
            doc_id, version = key.split("@")
            table = source.set_column(
                source.schema.get_field_index("partition_key"), "partition_key", pa.array([key])
            )
            for name, value in (("chunk_id", f"{key}#sec-2"), ("doc_id", doc_id)):
                table = table.set_column(
                    table.schema.get_field_index(name), name, pa.array([value])
                )
            table = table.set_column(
                table.schema.get_field_index("version"), "version", pa.array([version])
            )
            vectors = embedder.embed_passages(table.column("text").to_pylist())
            idx.upsert_partition(key, table, vectors, Stamp("active", title="Manual do Motor"))
        idx.update_indexes(max_lag_rows=0)  # both rows in the full-text index: same BM25
        hits = idx.search(SearchRequest(query="garantia cobre defeitos", k=2, mode=mode))
        assert len(hits) == 2
        if mode != "hybrid":  # hybrid scores follow the ranks, so they differ by design
            assert hits[0].score == pytest.approx(hits[1].score)
        rankings.append(ids(hits))
    assert rankings[0] == rankings[1] == ["doc-a@v1#sec-2", "doc-c@v1#sec-2"]


def test_the_vector_weight_decides_which_retriever_wins_a_disagreement(index: Index) -> None:
    """A query whose words are in one chunk and whose meaning is in another: the hybrid
    top follows the retriever the fusion weighs more (e5 weighs the vector list 8x)."""
    query = "how long until my password must be changed: the deadline?"
    vector_top = index.search(SearchRequest(query=query, k=1, mode="vector"))[0].chunk_id
    fts_top = index.search(SearchRequest(query=query, k=1, mode="fts"))[0].chunk_id
    assert vector_top != fts_top  # the disagreement this test is about
    assert index.vector_weight == 1.0  # MiniLM: plain reciprocal rank fusion
    index.vector_weight = 8.0
    assert index.search(SearchRequest(query=query, k=1, mode="hybrid"))[0].chunk_id == vector_top
    index.vector_weight = 0.125
    assert index.search(SearchRequest(query=query, k=1, mode="hybrid"))[0].chunk_id == fts_top


def test_the_vector_weight_defaults_by_model_and_settings(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_assets.settings import Settings, SettingsError

    e5 = Embedder(model="multilingual-e5-small")
    assert Index(tmp_path, e5).vector_weight == search.VECTOR_WEIGHT_E5
    assert Index(tmp_path, embedder).vector_weight == 1.0
    monkeypatch.setenv("TRECHO_VECTOR_WEIGHT", "2.5")
    settings = Settings.from_env()
    assert settings.index(str(tmp_path), e5).vector_weight == 2.5
    assert settings.index(str(tmp_path), embedder).vector_weight == 2.5
    # the core reads no environment: the setting arrives as a value or not at all
    assert Index(tmp_path, e5).vector_weight == search.VECTOR_WEIGHT_E5
    monkeypatch.setenv("TRECHO_VECTOR_WEIGHT", "heavy")
    with pytest.raises(SettingsError, match="TRECHO_VECTOR_WEIGHT='heavy': expected a number"):
        Settings.from_env()


LAW = [  # (path, body): the article asked for, and neighbours that quote it
    ("Art. 37", "Art. 37. O controlador deve manter registro das operações que realizar."),
    ("Art. 38", "Art. 38. O conteúdo do art. 37 vale também para o operador."),
    ("Art. 137", "Art. 137. O prazo do art. 37 conta-se em dobro."),
    ("Art. 37-A", "Art. 37-A. O registro previsto no art. 37 é público."),
]


def law_chunks(key: str = "lei@2018") -> pa.Table:
    """Hand-made chunks of a law, one per article, each under its article in the path."""
    doc_id, version = key.split("@")
    rows = []
    for ordinal, (article, body) in enumerate(LAW):
        path = f"DISPOSIÇÕES GERAIS > {article}"
        header = f"[{doc_id} | {path} | {version}]"
        rows.append(chunk_row(key, ordinal, str(ordinal), path, header, body, 100 * ordinal))
    return pa.Table.from_pylist(rows, schema=CHUNKS)


def test_a_query_citing_an_article_gets_that_article_first(
    tmp_path: Path, embedder: Embedder
) -> None:
    """ "O que diz o art. 37?": the chunks that quote art. 37 share every word of the
    question; the article itself comes first, and only it is found as cited."""
    index = Index(tmp_path / "lancedb", embedder)
    chunks = law_chunks()
    vectors = embedder.embed_passages(chunks.column("text").to_pylist())
    index.upsert_partition("lei@2018", chunks, vectors, Stamp("active", title="Lei"))
    query = "Qual é o conteúdo do art. 37?"
    hits = index.search(SearchRequest(query=query, k=4, mode="hybrid"))
    assert hits[0].path.endswith("> Art. 37")
    assert [h.path for h in hits if "citation" in h.retrievers] == [hits[0].path]
    # the same question without a citation: no such list
    plain = index.search(
        SearchRequest(query="Qual é o conteúdo do artigo trinta e sete?", k=4, mode="hybrid")
    )
    assert not any("citation" in h.retrievers for h in plain)


@pytest.mark.parametrize(
    ("query", "labels"),
    [
        ("Qual é o conteúdo do art. 37 da Lei 13.709/2018?", ["Art. 37"]),
        ("o artigo 6º e os arts. 7 e 11", ["Art. 6", "Art. 7"]),
        ("O que diz o Art 54-c?", ["Art. 54-C"]),
        ("a parte 3 da arte 5", []),
    ],
)
def test_cited_articles_are_read_from_the_query(query: str, labels: list[str]) -> None:
    assert cited_articles(query) == labels


def test_searches_never_fail_while_versions_are_purged(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    """A search may read a table version older than a purge that runs meanwhile (the purge
    deletes that version's files): it is answered from the latest version, never fails,
    and hybrid search keeps its full-text list."""
    import threading

    idx = Index(tmp_path / "lancedb", embedder)
    for key in DOCS:
        upsert(idx, key)
    failures: list[str] = []
    answered = {"hybrid": 0, "vector": 0, "fts": 0}
    stop = threading.Event()

    def search(mode: str) -> None:
        reader = Index(tmp_path / "lancedb", embedder)
        while not stop.is_set():
            try:
                hits = reader.search(SearchRequest(query="limite de vibração", k=3, mode=mode))  # type: ignore[arg-type]
            except Exception as exc:  # what a client would get: an error
                failures.append(f"{mode}: {exc}"[:200])
                continue
            if mode == "hybrid" and not any("fts" in h.retrievers for h in hits):
                failures.append("hybrid: answered without its full-text list")
            answered[mode] += 1

    threads = [threading.Thread(target=search, args=(m,)) for m in (*answered, "hybrid")]
    for thread in threads:
        thread.start()
    try:
        for _ in range(6):
            upsert(idx, "doc-a@v1")
            delete_partition_everywhere(tmp_path / "lancedb", "doc-a@v1")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    assert all(answered.values())
    assert "doc-a@v1" not in idx.partition_counts()
    assert not [
        h
        for h in idx.search(SearchRequest(query="garantia", k=10))
        if h.partition_key == "doc-a@v1"
    ]


def test_a_server_keeps_answering_while_versions_are_purged(
    upsert, tmp_path: Path, embedder: Embedder
) -> None:
    """`trecho serve`'s engine keeps a handle open across requests: a request that pinned
    a table version a purge then deletes is answered from the latest version (its
    document check too), never with an error; after the purge, no hit of the purged
    version."""
    import threading

    from rag_assets.core.lake.layout import Lake
    from rag_assets.serve.engine import Engine, Limits

    db = tmp_path / "lancedb"
    idx = Index(db, embedder)
    for key in DOCS:
        upsert(idx, key)
    engine = Engine(Lake(tmp_path / "lake"), db, embedder, Limits())
    failures: list[str] = []
    answered = [0]
    stop = threading.Event()

    def search(mode: str) -> None:
        while not stop.is_set():
            try:
                engine.search(
                    SearchRequest(query="limite de vibração", k=3, mode=mode, documents=["doc-a"])
                )
                answered[0] += 1
            except Exception as exc:  # what a client would get: an HTTP 500
                failures.append(f"{mode}: {exc}"[:200])

    threads = [threading.Thread(target=search, args=(m,)) for m in ("hybrid", "fts", "vector")]
    for thread in threads:
        thread.start()
    try:
        for _ in range(6):
            upsert(idx, "doc-a@v1")
            delete_partition_everywhere(db, "doc-a@v1")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    assert answered[0]
    hits = engine.search(SearchRequest(query="garantia", k=10, documents=["doc-a"]))["hits"]
    assert hits and not [h for h in hits if h["partition_key"] == "doc-a@v1"]


def test_trecho_search_is_asked_again_of_the_new_table_across_a_model_switch(
    upsert, three_versions: Path, tmp_path: Path, embedder: Embedder
) -> None:
    """`trecho search` read the active model (MiniLM), then a switch pointed search at
    another model's table and dropped MiniLM's while the CLI loaded the model: it printed
    a 67-line traceback (`lance error: Not found`). Now it asks the new active table once
    more, as the servers do; failing there too, it says so in one line."""
    from rag_assets.cli.reading import across_switch, search_once
    from rag_assets.core.index import ModelRef, active_embedder, read_active, write_active
    from rag_assets.core.lake.layout import Lake

    db = tmp_path / "lake" / "lancedb"
    shutil.copytree(three_versions, db)
    lake = Lake(tmp_path / "lake")
    write_active(db, ModelRef.of(embedder))
    other = Embedder(model=MINILM, passage_prefix="passage: ")  # another id, another table
    for key in DOCS:
        upsert(Index(db, other), key)
    stale = Index(db, active_embedder(db, embedder))  # what the CLI holds before the switch
    write_active(db, ModelRef.of(other))  # the switch: search moves on, the old table goes
    assert Index(db, embedder).drop()

    def active() -> Index:
        return Index(db, active_embedder(db, embedder))

    request = search_request({"query": "What is the refund deadline?", "k": 2})
    index, _, hits, rows = across_switch(stale, active, lambda i: search_once(lake, request, i))
    assert index.table_name == table_name(other.model_id) == table_name(read_active(db).model_id)
    assert hits and "thirty days" in hits[0].text and len(rows) == len(hits)

    broken = Index(db, other)  # the new table loses its data too: one line, not a traceback
    for data in (db / f"{broken.table_name}.lance" / "data").iterdir():
        data.unlink()
    with pytest.raises(LakeError) as refused:
        across_switch(stale, active, lambda i: search_once(lake, request, i))
    message = str(refused.value)
    assert "\n" not in message and message.endswith("; run it again"), message
    assert f"search moved from {stale.table_name} to {broken.table_name}" in message


def test_drop_model_leaves_no_lock_file_nor_an_empty_chunks_next_behind(
    upsert, three_versions: Path, tmp_path: Path, embedder: Embedder, capsys, monkeypatch
) -> None:
    """`trecho drop-model` left the dropped model's lock files in `lancedb/` and an empty
    `derived/chunks-next/` (its backfill's folder removed, not the one above it)."""
    from rag_assets.cli import main
    from rag_assets.core.index import EmbeddingCache, ModelRef, write_active

    lake = tmp_path / "lake"
    db = lake / "lancedb"
    shutil.copytree(three_versions, db)
    (lake / "raw").mkdir()
    write_active(db, ModelRef.of(embedder))
    other = Embedder(model=MINILM, passage_prefix="passage: ")
    upsert(Index(db, other), "doc-b@v1")
    EmbeddingCache(db, other).add(["ab" * 32], np.ones((1, 384), dtype=np.float32))
    staged = lake / "derived" / "chunks-next" / other.model_id
    staged.mkdir(parents=True)
    (staged / "doc-b@v1.parquet").write_bytes(b"PAR1")
    assert any(other.model_id in p.name and p.suffix == ".lock" for p in db.iterdir())

    monkeypatch.setenv("TRECHO_MODEL", MINILM)
    flags = ["--model", MINILM, "--passage-prefix", "passage: ", "--lake", str(lake)]
    assert main(["drop-model", *flags]) == 0
    assert f"dropped {table_name(other.model_id)}" in capsys.readouterr().out
    assert [p.name for p in db.iterdir() if other.model_id in p.name] == []
    assert not (lake / "derived" / "chunks-next").exists()
    assert {p.name for p in db.iterdir() if p.suffix == ".lock"} >= {
        f".{table_name(embedder.model_id)}.lock"  # the model search uses keeps its own
    }


def test_status_says_a_version_whose_chunks_file_is_gone_is_not_in_sync(
    upsert, three_versions: Path, tmp_path: Path, embedder: Embedder, capsys, monkeypatch
) -> None:
    """Its rows are served, but `derived/chunks/` lost its file (deleted by hand, a disk
    restored from an older copy): status said `indexed`; the next run cuts it again."""
    from rag_assets.cli import main
    from rag_assets.core.index import ModelRef, write_active

    from .conftest import SAMPLE_LAKE

    lake = tmp_path / "lake"
    shutil.copytree(three_versions, lake / "lancedb")
    write_active(lake / "lancedb", ModelRef.of(embedder))
    (lake / "raw" / "doc-b").mkdir(parents=True)
    shutil.copy(SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf", lake / "raw" / "doc-b")
    monkeypatch.setenv("TRECHO_MODEL", MINILM)
    capsys.readouterr()
    assert main(["status", "--lake", str(lake)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if " doc-b@v1 " in x)
    assert line.endswith(
        "UNSYNCED (no chunks file derived/chunks/doc-b@v1.parquet: `trecho materialize`, "
        "or the sensor of `trecho ui`, cuts it again)"
    ), line
