"""The vector (ANN) index: built from `ann_min_rows`, kept current, bypassed on request.

Tables here are small (hundreds of rows) with `ann_min_rows` lowered to match: the
policy does not depend on the size, and an HNSW index on 600 rows builds in a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from rag_assets.core import index as search
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import Index, Stamp, upkeep
from rag_assets.core.lake.schemas import CHUNKS, Chunk
from rag_assets.core.request import SearchRequest

MIN_ROWS = 500
FILLER_ROWS = 250


def filler(index: Index, n: int, rows: int = FILLER_ROWS) -> None:
    """Upsert `n` synthetic versions of `rows` chunks each, with random unit vectors
    (nearly orthogonal to any real query) and texts sharing no word with the real docs."""
    rng = np.random.default_rng(n)
    for v in range(n):
        key = f"filler{v:02d}@v1"
        table = pa.Table.from_pylist(
            [
                Chunk(
                    chunk_id=f"{key}#{i}",
                    partition_key=key,
                    doc_id=f"filler{v:02d}",
                    version="v1",
                    strategy="structure",
                    parent_id=None,
                    ordinal=i,
                    kind="section",
                    path="x",
                    header="[Filler]",
                    body=f"zz{i} qq{v}",
                    text=f"[Filler]\nzz{i} qq{v}",
                    token_count=2,
                    truncated=False,
                    char_start=0,
                    char_end=8,
                    page_start=1,
                    page_end=1,
                ).as_row()
                for i in range(rows)
            ],
            schema=CHUNKS,
        )
        vectors = rng.normal(size=(rows, index.embedder.dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        index.upsert_partition(key, table, vectors, Stamp("active", title="Filler"))


def actions(index: Index) -> list[str]:
    """What the last index update did, without the timings."""
    return [a.split(" (")[0] for a in index.last_index_update]


def plan(index: Index, query: str, exact: bool = False) -> str:
    """LanceDB's plan for the vector query `search` would run."""
    vector = index.embedder.embed_queries([query])[0]
    tbl = index.current_table()
    return str(index._vector_query(tbl, vector, Index.filter_sql(), 10, exact).explain_plan())


def test_vector_index_is_built_once_the_table_reaches_ann_min_rows(
    upsert, tmp_path: Path, embedder: Embedder
) -> None:
    idx = Index(tmp_path / "lancedb", embedder, ann_min_rows=MIN_ROWS)
    upsert(idx, "doc-a@v2")
    filler(idx, 1)
    stats = idx.index_stats()
    assert stats.rows == 2 + FILLER_ROWS and stats.vector is None
    assert "exact (index from 500 rows)" in stats.summary()
    assert "ANNSubIndex" not in plan(idx, "vibração")
    filler(idx, 2)  # filler00 again (a re-upsert) and filler01: 502 rows
    assert actions(idx)[-1] == "vector index built"
    stats = idx.index_stats()
    assert stats.vector is not None and stats.vector.kind == "IVF_HNSW_SQ"
    assert (stats.vector.indexed_rows, stats.vector.unindexed_rows) == (502, 0)
    assert stats.fts is not None and stats.fts.unindexed_rows == 0
    assert "vector: IVF_HNSW_SQ (502 indexed, 0 searched flat, 1 segment, ef 200)" in (
        stats.summary()
    )
    meta = stats.as_metadata()
    assert meta["vector_index"] == "IVF_HNSW_SQ" and meta["fts_index"] == "FTS"
    assert meta["vector_unindexed_rows"] == 0 and meta["index_rows"] == 502
    assert "ANNSubIndex" in plan(idx, "vibração")
    assert "ANNSubIndex" not in plan(idx, "vibração", exact=True)


def test_search_through_the_index_matches_exact_search(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    idx = Index(tmp_path / "lancedb", embedder, ann_min_rows=MIN_ROWS)
    upsert(idx, "doc-a@v2")
    upsert(idx, "doc-b@v1")
    filler(idx, 2)
    assert idx.index_stats().vector is not None
    queries = ["refund deadline", "limite de vibração do motor", "passwords", "garantia"]
    approx = idx.search_many([SearchRequest(query=q, k=3, mode="vector") for q in queries])
    exact = idx.search_many(
        [SearchRequest(query=q, k=3, mode="vector") for q in queries], exact=True
    )
    for a, e in zip(approx, exact, strict=True):
        assert ids(a) == ids(e)
        # scores are exact cosines (re-ranked on the stored vectors), not SQ distances
        assert [h.score for h in a] == pytest.approx([h.score for h in e], abs=1e-5)
    hybrid = idx.search(SearchRequest(query="What is the refund deadline?", k=3, mode="hybrid"))
    assert hybrid[0].chunk_id == "doc-b@v1#refund"
    assert ids(hybrid) == ids(
        idx.search(SearchRequest(query="What is the refund deadline?", k=3), exact=True)
    )


def test_rows_written_after_the_index_are_found_at_once(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    idx = Index(tmp_path / "lancedb", embedder, ann_min_rows=MIN_ROWS)
    filler(idx, 2)
    assert idx.index_stats().vector is not None
    upsert(idx, "doc-b@v1")  # 2 rows, under INDEX_LAG_ROWS: left to the flat search
    assert idx.last_index_update == []
    stats = idx.index_stats()
    assert stats.vector is not None and stats.vector.unindexed_rows == 2
    for mode in ("vector", "fts", "hybrid"):
        assert ids(idx.search(SearchRequest(query="refund deadline", k=1, mode=mode))) == [
            "doc-b@v1#refund"
        ], mode
    upsert(idx, "doc-a@v2", rebuild_fts=False)
    assert actions(idx) == []
    assert ids(idx.search(SearchRequest(query="vibração do motor", k=1, mode="vector"))) == [
        "doc-a@v2#sec-1"
    ]
    assert [a.split(" (")[0] for a in idx.update_indexes(max_lag_rows=0)] == [
        "indexes updated incrementally"
    ]
    stats = idx.index_stats()
    assert stats.vector is not None and stats.fts is not None
    assert (stats.vector.unindexed_rows, stats.fts.unindexed_rows) == (0, 0)
    assert stats.vector.segments == 2  # the index plus one delta
    assert ids(idx.search(SearchRequest(query="refund deadline", k=1, mode="vector"))) == [
        "doc-b@v1#refund"
    ]
    assert ids(idx.search(SearchRequest(query="vibração do motor", k=1, mode="vector"))) == [
        "doc-a@v2#sec-1"
    ]


def test_deleted_and_revoked_versions_leave_results_with_the_index(
    upsert, tmp_path: Path, embedder: Embedder
) -> None:
    idx = Index(tmp_path / "lancedb", embedder, ann_min_rows=MIN_ROWS)
    upsert(idx, "doc-a@v2")
    upsert(idx, "doc-b@v1")
    filler(idx, 2)
    assert idx.index_stats().vector is not None
    assert (
        idx.search(SearchRequest(query="refund deadline", k=1, mode="vector"))[0].doc_id == "doc-b"
    )
    assert idx.delete_partition("doc-b@v1") == 2  # revocation: rows removed
    for mode in ("vector", "fts", "hybrid"):
        hits = idx.search(SearchRequest(query="refund deadline passwords", k=20, mode=mode))
        assert hits or mode == "fts", mode  # doc-a still answers the vector side
        assert all(h.doc_id != "doc-b" for h in hits), mode
    upsert(idx, "doc-a@v2", status="revoked")  # revoked in place: filtered out
    for mode in ("vector", "fts", "hybrid"):
        hits = idx.search(SearchRequest(query="limite de vibração do motor", k=20, mode=mode))
        assert hits or mode == "fts", mode
        assert all(h.doc_id != "doc-a" for h in hits), mode


def test_many_delta_segments_retrain_the_index(
    upsert, tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upkeep, "ANN_MAX_SEGMENTS", 2)
    monkeypatch.setattr(upkeep, "INDEX_LAG_ROWS", 0)  # every write updates the indexes
    idx = Index(tmp_path / "lancedb", embedder, ann_min_rows=MIN_ROWS)
    filler(idx, 2)
    upsert(idx, "doc-b@v1")
    assert idx.index_stats().vector.segments == 2  # type: ignore[union-attr]
    upsert(idx, "doc-a@v2")
    assert actions(idx) == ["indexes updated incrementally", "vector index retrained"]
    vector = idx.index_stats().vector
    assert vector is not None and (vector.segments, vector.indexed_rows) == (1, 504)


def test_ann_min_rows_zero_disables_the_index(
    ids, upsert, tmp_path: Path, embedder: Embedder
) -> None:
    uri = tmp_path / "lancedb"
    idx = Index(uri, embedder, ann_min_rows=MIN_ROWS)
    filler(idx, 2)
    assert idx.index_stats().vector is not None
    off = Index(uri, embedder, ann_min_rows=0)
    assert "ANNSubIndex" not in plan(off, "x")  # searches exact even while it exists
    upsert(off, "doc-b@v1")
    assert actions(off) == ["vector index dropped"]
    stats = off.index_stats()
    assert stats.vector is None and "ANN disabled" in stats.summary()
    filler(off, 3)
    assert off.index_stats().vector is None
    assert ids(off.search(SearchRequest(query="refund deadline", k=1, mode="vector"))) == [
        "doc-b@v1#refund"
    ]


def test_settings_come_from_the_environment(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_assets.core.lake.layout import Lake
    from rag_assets.settings import Settings, SettingsError
    from resources import LanceDBResource

    assert Index(tmp_path, embedder).ann_min_rows == search.ANN_MIN_ROWS == 50_000
    assert Index(tmp_path, embedder).ann_ef == search.ANN_EF >= 100
    monkeypatch.setenv("TRECHO_ANN_MIN_ROWS", "20_000")
    monkeypatch.setenv("TRECHO_ANN_EF", "120")
    idx = Settings.from_env().index(str(tmp_path), embedder)
    assert (idx.ann_min_rows, idx.ann_ef) == (20_000, 120)
    assert Index(tmp_path, embedder).ann_min_rows == search.ANN_MIN_ROWS  # no env in the core
    assert Index(tmp_path, embedder, ann_min_rows=0).ann_min_rows == 0
    served = LanceDBResource(ann_min_rows=7, ann_ef=300).index(Lake(tmp_path), embedder)
    assert (served.ann_min_rows, served.ann_ef) == (7, 300)
    monkeypatch.setenv("TRECHO_ANN_MIN_ROWS", "lots")
    with pytest.raises(SettingsError, match="TRECHO_ANN_MIN_ROWS='lots': expected a whole"):
        Settings.from_env()


def test_empty_table_stats(tmp_path: Path, embedder: Embedder) -> None:
    idx = Index(tmp_path / "lancedb", embedder)
    stats = idx.index_stats()
    assert (stats.rows, stats.vector, stats.fts) == (0, None, None)
    assert idx.update_indexes() == []


def test_the_default_search_breadth_grows_with_the_table_and_a_set_one_stays(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upkeep, "ANN_EF_ROWS", 100)  # tables of hundreds of rows are "large"
    index = Index(tmp_path, embedder, ann_min_rows=1)
    filler(index, 1)  # 250 rows
    assert index.index_stats().ann_ef == 500 == search.ANN_EF * 250 // 100
    filler(index, 2)  # 500 rows: twice the rows, twice the breadth
    assert index.index_stats().ann_ef == 1000
    assert "ef 1000" in index.index_stats().summary()
    assert Index(tmp_path, embedder, ann_min_rows=1, ann_ef=150).index_stats().ann_ef == 150
    hits = index.search(
        SearchRequest(query="zz3 qq1", k=3, mode="vector")
    )  # searched at the wider breadth
    assert len(hits) == 3 and all(h.doc_id.startswith("filler") for h in hits)
    monkeypatch.setattr(upkeep, "ANN_EF_ROWS", 10)  # 50x the rows: capped
    assert index.index_stats().ann_ef == upkeep.ANN_EF_MAX
