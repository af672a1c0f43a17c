"""`Index`: the LanceDB table of one embedding model, written and searched."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from rag_assets.core.embedding import Embedder
from rag_assets.core.errors import ConfigError
from rag_assets.core.index.connection import connect
from rag_assets.core.index.locking import retry_commit
from rag_assets.core.index.retrieval import Retrieval, VersionRow
from rag_assets.core.index.scoring import default_min_score, default_rrf_k, default_vector_weight
from rag_assets.core.index.store import NoLongerLive, as_chunk_table, store_schema
from rag_assets.core.index.upkeep import ANN_EF, ANN_MIN_ROWS, FTS_LANGUAGE, IndexUpkeep
from rag_assets.core.lake import STATUSES, split_key


@dataclass(frozen=True)
class Stamp:
    """What every row of one version carries besides its chunk: the version's `status`
    (one of `STATUSES`), its validity dates and its title (stored on the rows, so that an
    as-of filter needs no join)."""

    status: str = "active"
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None
    title: str = ""


class Index(IndexUpkeep, Retrieval):
    """The LanceDB table of one embedding model: write partitions, search chunks.

    Every call opens the table afresh, so writes by other processes (Dagster runs in
    parallel) are seen by the next call.
    """

    def __init__(
        self,
        uri: str | os.PathLike[str],
        embedder: Embedder,
        *,
        fts_language: str = FTS_LANGUAGE,
        ann_min_rows: int | None = None,
        ann_ef: int | None = None,
        vector_weight: float | None = None,
        rrf_k: int | None = None,
        min_score: float | None = None,
    ) -> None:
        """`ann_min_rows`/`ann_ef` default to ANN_MIN_ROWS / ANN_EF (the settings give
        them: `rag_assets.settings`), the default ef growing with a table past
        ANN_EF_ROWS rows; `ann_min_rows=0` means exact vector search only.
        `vector_weight`: the vector retriever's weight in hybrid fusion (full text: 1;
        default: the model's, `default_vector_weight`); `rrf_k`: the fusion constant
        (default by model, `default_rrf_k`); `min_score`: the lowest cosine a served
        search returns (default by model, `default_min_score`)."""
        self.uri = str(uri)
        self.embedder = embedder
        self.fts_language = fts_language
        self.ann_min_rows = ANN_MIN_ROWS if ann_min_rows is None else ann_min_rows
        self.ann_ef = ANN_EF if ann_ef is None else ann_ef
        self.ann_ef_grows = ann_ef is None
        """No breadth set: it grows with the table past `ANN_EF_ROWS` (`ann_ef_for`)."""
        self.vector_weight = (
            default_vector_weight(embedder) if vector_weight is None else vector_weight
        )
        if self.vector_weight < 0:
            raise ConfigError(f"vector_weight must be >= 0, got {self.vector_weight}")
        self.rrf_k = default_rrf_k(embedder) if rrf_k is None else rrf_k
        if self.rrf_k < 1:
            raise ConfigError(f"rrf_k must be >= 1, got {self.rrf_k}")
        self.min_score = default_min_score(embedder) if min_score is None else min_score
        if self.ann_min_rows < 0 or self.ann_ef < 1:
            raise ConfigError(f"ann_min_rows must be >= 0 and ann_ef >= 1, got {self!r}")
        self.db = connect(self.uri)
        self._versions_cache: tuple[tuple[int, int], dict[str, VersionRow]] = ((-1, -1), {})
        self._versions_seen = None
        self._where_cache = {}
        self.last_index_update: list[str] = []
        """What the last `update_indexes()` did, with timings (for logs)."""

    def __repr__(self) -> str:
        return (
            f"Index({self.uri!r}, table={self.table_name!r}, "
            f"ann_min_rows={self.ann_min_rows}, ann_ef={self.ann_ef})"
        )

    def upsert_partition(
        self,
        partition_key: str,
        chunks: pa.Table | pl.DataFrame,
        vectors: np.ndarray,
        stamp: Stamp,
        *,
        rebuild_fts: bool = True,
        still_live: Callable[[], str | None] | None = None,
        replaces: Sequence[str] = (),
        on_commit: Callable[[], None] | None = None,
    ) -> int:
        """Replace one version's rows (chunks + vectors + `stamp`: status, validity and
        title) in one commit.

        Rows of the version that are not in `chunks` are deleted, and so are the rows of
        the versions in `replaces` (the older versions this one supersedes: they leave
        in the commit that brings it in, never before); other versions are untouched.
        `still_live` is asked under the table's write lock, just before the commit: a
        reason it returns (the version was revoked, deleted... meanwhile) raises
        NoLongerLive and nothing is written, so a run never puts back a version removed
        while it ran (removals take the same lock). `on_commit` runs right after the
        commit, still under the lock (the embeddings asset stores the new vectors in the
        cache there: a removal, which takes the lock, then sees the rows that use them).
        Then the indexes are kept current
        (`update_indexes()`: built when missing, updated once enough rows wait); set
        `rebuild_fts=False` in a bulk load and call `build_fts_index()` (fresh table) or
        `update_indexes()` once at the end.
        Rows not yet indexed are found all the same (flat search). Returns the number of
        rows now stored for the version.
        """
        split_key(partition_key)
        if stamp.status not in STATUSES:
            raise ValueError(f"status {stamp.status!r} must be one of {list(STATUSES)}")
        table = as_chunk_table(chunks)
        keys = set(table.column("partition_key").to_pylist())
        if keys - {partition_key}:
            raise ValueError(
                f"chunks for {partition_key!r} hold rows of other partitions: {sorted(keys)}"
            )
        ids = table.column("chunk_id")
        if ids.null_count or len(pc.unique(ids)) != len(ids):
            raise ValueError(f"{partition_key}: chunk_id must be present and unique")
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != table.num_rows:
            raise ValueError(
                f"{partition_key}: {table.num_rows} chunks but vectors of shape {vectors.shape}"
            )
        if table.num_rows == 0:
            self.delete_partition(partition_key)
            return 0
        data = self._with_store_columns(table, vectors, stamp)
        where = f"partition_key = '{partition_key}'"
        for old in replaces:
            split_key(old)
        gone = where + "".join(f" OR partition_key = '{old}'" for old in replaces)

        def merge() -> Any:
            tbl = self.current_table()  # a fresh handle: a retry must see the winner's commit
            if tbl is None:
                try:
                    return self.db.create_table(self.table_name, data, mode="create")
                except ValueError as exc:  # created meanwhile (object stores: no lock)
                    if "already exists" not in str(exc).lower():
                        raise
                    tbl = self.db.open_table(self.table_name)
            self._check_dimension(tbl, vectors.shape[1])
            (
                tbl.merge_insert(["partition_key", "chunk_id"])
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .when_not_matched_by_source_delete(gone)
                .execute(data)
            )
            return tbl

        with self._write_lock():
            reason = still_live() if still_live is not None else None
            if reason:
                raise NoLongerLive(f"{partition_key}: not written: {reason}")
            tbl = retry_commit(merge, f"upsert {partition_key}")
            stored = int(tbl.count_rows(where))
            if on_commit is not None:
                on_commit()
        if rebuild_fts:
            self.update_indexes()
        return stored

    def _with_store_columns(
        self,
        table: pa.Table,
        vectors: np.ndarray,
        stamp: Stamp,
    ) -> pa.Table:
        n, dim = vectors.shape
        flat = pa.array(vectors.reshape(-1), type=pa.float32())
        columns = [
            *table.columns,
            pa.FixedSizeListArray.from_arrays(flat, dim),
            pa.array([stamp.status] * n, pa.string()),
            pa.array([stamp.valid_from] * n, pa.date32()),
            pa.array([stamp.valid_to] * n, pa.date32()),
            pa.array([stamp.title] * n, pa.string()),
        ]
        return pa.Table.from_arrays(columns, schema=store_schema(dim))

    @staticmethod
    def _check_dimension(tbl: Any, dim: int) -> None:
        stored = tbl.schema.field("vector").type.list_size
        if stored != dim:
            raise ConfigError(
                f"table {tbl.name!r} holds {stored}-d vectors, got {dim}-d: "
                "a different model needs its own table"
            )

    def drop(self) -> bool:
        """Drop this model's table (after search switched to another model)."""
        if not self.exists():
            return False
        with self._write_lock():
            self.db.drop_table(self.table_name)
        return True

    def delete_partition(self, partition_key: str) -> int:
        """Remove one version's rows; returns how many were removed (0 if no table)."""
        split_key(partition_key)
        if not self.exists():
            return 0
        where = f"partition_key = '{partition_key}'"
        with self._write_lock():
            n = int(self.db.open_table(self.table_name).count_rows(where))
            if n:
                retry_commit(lambda: self.db.open_table(self.table_name).delete(where), "delete")
        return n

    def partition_counts(self) -> dict[str, int]:
        """Rows per partition key (empty when the table does not exist)."""
        tbl = self.current_table()
        if tbl is None:
            return {}
        keys = tbl.search().select(["partition_key"]).limit(None).to_arrow()
        counts = keys.group_by("partition_key").aggregate([("partition_key", "count")])
        return dict(
            zip(
                counts.column("partition_key").to_pylist(),
                counts.column("partition_key_count").to_pylist(),
                strict=True,
            )
        )

    def version_rows(self) -> list[dict[str, Any]]:
        """One row per version the table holds (partition_key, doc_id, version, status,
        valid_from, valid_to); empty when the table does not exist."""
        tbl = self.current_table()
        if tbl is None:
            return []
        columns = ["partition_key", "doc_id", "version", "status", "valid_from", "valid_to"]
        rows = tbl.search().select(columns).limit(None).to_arrow().to_pylist()
        return list({row["partition_key"]: row for row in rows}.values())
