"""Index upkeep: the full-text and vector indexes built, updated and described, and the
tables' files kept few (compaction) and their old versions deleted (`upkeep_tables`)."""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lancedb.index import FTS, HnswSq

from rag_assets.core.index.connection import connect
from rag_assets.core.index.locking import retry_commit, table_lock
from rag_assets.core.index.store import ModelTable, model_tables, table_or_none

log = logging.getLogger(__name__)

FTS_LANGUAGE = "Portuguese"
ANN_MIN_ROWS = 50_000
"""Rows from which a table gets a vector index (below, the exact scan is fast enough)."""
ANN_EF = 200
"""HNSW search breadth: recall@10 0.97 at 100k rows (0.91 at 100, 0.62 at LanceDB's 15)."""
ANN_EF_ROWS = 100_000
"""Rows up to which the default breadth is `ANN_EF`; past them it grows in proportion to
the table (`ann_ef_for`): a graph over a million rows needs a wider search for the same
recall (ef 200 found 0.75-0.79 of the exact top 10 there, bench/README.md)."""
ANN_EF_MAX = 2_000
"""The most the default breadth grows to (a million rows' worth): beyond, unmeasured;
`TRECHO_ANN_EF` sets it."""


def ann_ef_for(ef: int, grows: bool, rows: int) -> int:
    """The HNSW search breadth for a table of `rows` rows: `ef`, or with `grows` (no
    breadth set) `ef` scaled with the rows past `ANN_EF_ROWS`, at most `ANN_EF_MAX`."""
    if not grows or rows <= ANN_EF_ROWS:
        return ef
    return max(ef, min(ANN_EF_MAX, math.ceil(ef * rows / ANN_EF_ROWS)))


ANN_MAX_SEGMENTS = 16
"""Delta segments (one per incremental update) before the vector index is retrained."""
INDEX_LAG_ROWS = 300
"""Rows left out of the indexes (searched flat, +6 ms a full-text query at 300) before
an incremental update: each one rewrites the table (compaction), 1.4-1.9 s at 100k rows."""
KEEP_VERSIONS = dt.timedelta(minutes=10)
"""Table versions younger than this survive a compaction or an upkeep; older ones are
deleted, with the files only they use (LanceDB's own default keeps them 7 days: every
commit a version, every compaction a copy of the table, so disk grows with the
writes). A read of a version deleted under it starts again on the latest one
(`store.read_latest`), as after a purge."""
COMPACT_FRAGMENTS = 16
"""Fragments (one per commit: a version's rows, a cache write) from which upkeep
compacts a table: a read opens every fragment, so reads slow down as they pile up."""


def fts_config(language: str = FTS_LANGUAGE) -> FTS:
    """The full-text analyzer: lowercase, ASCII-folded, stemmed, without stop words."""
    return FTS(
        language=language,
        lower_case=True,
        ascii_folding=True,
        stem=True,
        remove_stop_words=True,
    )


@dataclass(frozen=True)
class IndexState:
    """One LanceDB index of a table: what it covers and how far behind it is."""

    name: str
    column: str
    kind: str
    indexed_rows: int
    unindexed_rows: int
    segments: int


@dataclass(frozen=True)
class IndexStats:
    """The indexes of a model's table, for asset metadata and `trecho status`.

    `vector`/`fts` are None when that index does not exist (vector: exact search).
    """

    rows: int
    vector: IndexState | None
    fts: IndexState | None
    ann_min_rows: int
    ann_ef: int

    def summary(self) -> str:
        """One line: how vector and full-text search are served, and what is pending."""

        def part(label: str, state: IndexState | None, extra: str = "") -> str:
            if state is None:
                return f"{label}: no index (covers 0 of {self.rows} rows)"
            return (
                f"{label}: {state.kind} ({state.indexed_rows} indexed, "
                f"{state.unindexed_rows} searched flat, {state.segments} "
                f"segment{'s' if state.segments != 1 else ''}{extra})"
            )

        if self.vector is not None:
            vector = part("vector", self.vector, f", ef {self.ann_ef}")
        elif self.ann_min_rows == 0:
            vector = "vector: exact (ANN disabled)"
        else:
            vector = f"vector: exact (index from {self.ann_min_rows} rows)"
        fts = self.fts
        covered = f", covers {self.rows - fts.unindexed_rows} of {self.rows} rows" if fts else ""
        return f"{self.rows} rows; {vector}; {part('full-text', fts, covered)}"

    def as_metadata(self) -> dict[str, int | str]:
        """Flat values for Dagster metadata (every key always present)."""
        out: dict[str, int | str] = {"index_rows": self.rows}
        for label, state in (("vector", self.vector), ("fts", self.fts)):
            out[f"{label}_index"] = state.kind if state else "none"
            out[f"{label}_unindexed_rows"] = state.unindexed_rows if state else self.rows
            out[f"{label}_index_segments"] = state.segments if state else 0
        out["ann_min_rows"] = self.ann_min_rows
        out["ann_ef"] = self.ann_ef
        return out


_KINDS = {"IvfHnswSq": "IVF_HNSW_SQ", "IvfHnswPq": "IVF_HNSW_PQ", "IvfPq": "IVF_PQ"}


class IndexUpkeep(ModelTable):
    """The `Index` methods that keep its full-text and vector indexes current."""

    fts_language: str
    ann_min_rows: int
    ann_ef: int
    ann_ef_grows: bool
    last_index_update: list[str]

    def _fts_config(self) -> FTS:
        return fts_config(self.fts_language)

    def build_fts_index(self) -> None:
        """(Re)build the full-text index on `text` from scratch (lowercase, ASCII-folded,
        stemmed): after a bulk load into a fresh table. Upserts use `update_indexes()`.

        Takes the write lock: two concurrent builds only fail each other's commit.
        """

        with self._write_lock():
            retry_commit(self._create_fts_index, f"fts index on {self.table_name}")

    def _create_fts_index(self) -> None:
        """Build the full-text index over every row now (the caller holds the lock)."""
        tbl = self.current_table()
        if tbl is not None:
            tbl.create_index("text", config=self._fts_config(), replace=True)

    def _fts_is_current(self, state: IndexState | None, tbl: Any) -> bool:
        """Whether the table's full-text index exists with this Index's analyzer."""
        if state is None:
            return False
        details = next(
            (getattr(c, "index_details", None) for c in tbl.list_indices() if c.name == state.name),
            None,
        )
        if not isinstance(details, dict):
            return True  # no details to compare: trust the index
        wanted = {"language": self.fts_language, "stem": True, "ascii_folding": True}
        return all(details.get(key, value) == value for key, value in wanted.items())

    def update_indexes(self, max_lag_rows: int | None = None) -> list[str]:
        """Bring the table's indexes up to date after a write; returns what was done.

        - full-text: built when missing (or built with another analyzer);
        - both indexes: once `max_lag_rows` rows (default INDEX_LAG_ROWS) are not in them
          yet, LanceDB's `optimize()` adds those rows (a delta segment of the vector
          index) and compacts the table; until then they are searched flat, so they are
          found anyway. `max_lag_rows=0` takes every row in now (before an eval: BM25
          scores then equal a rebuild's);
        - vector: built once the table holds `ann_min_rows` rows, retrained when it has
          more than ANN_MAX_SEGMENTS segments, dropped when `ann_min_rows` is 0.

        Takes the write lock for the whole update.
        """
        lag = INDEX_LAG_ROWS if max_lag_rows is None else max_lag_rows
        done: list[str] = []

        def step(what: str, action: Callable[[], Any]) -> None:
            start = time.perf_counter()
            retry_commit(action, f"{what} on {self.table_name}")
            done.append(f"{what} ({time.perf_counter() - start:.2f}s)")

        with self._write_lock():
            tbl = self.current_table()
            if tbl is None:
                self.last_index_update = []
                return []
            stats = self._stats(tbl)
            if not self._fts_is_current(stats.fts, tbl):
                step("full-text index built", self._create_fts_index)
                stats = self._stats(self.current_table())
            pending = max(
                [s.unindexed_rows for s in (stats.vector, stats.fts) if s is not None] or [0]
            )
            if pending and pending >= lag:
                step(
                    "indexes updated incrementally",
                    lambda: self.current_table().optimize(cleanup_older_than=KEEP_VERSIONS),
                )
                stats = self._stats(self.current_table())
            vector = stats.vector
            if self.ann_min_rows == 0:
                if vector is not None:
                    step(
                        "vector index dropped", lambda: self.current_table().drop_index(vector.name)
                    )
            elif vector is None and stats.rows >= self.ann_min_rows:
                step("vector index built", self._build_vector_index)
            elif vector is not None and vector.segments > ANN_MAX_SEGMENTS:
                step("vector index retrained", self._build_vector_index)
        self.last_index_update = done
        if done:
            log.info("%s: %s", self.table_name, "; ".join(done))
        return done

    def _build_vector_index(self) -> None:
        """Train the HNSW index on every row (see the module docstring for the choice)."""
        config = HnswSq(distance_type="cosine", num_partitions=1)
        self.current_table().create_index("vector", config=config, replace=True)

    def index_stats(self) -> IndexStats:
        """Which indexes the table has, and how many rows each covers or leaves flat."""
        tbl = self.current_table()
        if tbl is None:
            return IndexStats(0, None, None, self.ann_min_rows, self.ann_ef)
        return self._stats(tbl)

    def _stats(self, tbl: Any) -> IndexStats:
        vector = fts = None
        for config in tbl.list_indices():
            state = IndexState(
                name=config.name,
                column=config.columns[0] if config.columns else "",
                kind=_KINDS.get(config.index_type, config.index_type),
                indexed_rows=int(config.num_indexed_rows or 0),
                unindexed_rows=int(config.num_unindexed_rows or 0),
                segments=int(config.num_segments or 1),
            )
            if state.column == "vector":
                vector = state
            elif state.column == "text" and state.kind == "FTS":
                fts = state
        rows = int(tbl.count_rows())
        ef = ann_ef_for(self.ann_ef, self.ann_ef_grows, rows)
        return IndexStats(rows, vector, fts, self.ann_min_rows, ef)


@dataclass(frozen=True)
class TableUpkeep:
    """What upkeep did to one table: fragments and versions before and after."""

    table: str
    fragments: tuple[int, int]
    versions: tuple[int, int]
    seconds: float

    def __str__(self) -> str:
        (f0, f1), (v0, v1) = self.fragments, self.versions
        return f"{self.table}: {f0} -> {f1} fragments, {v0} -> {v1} versions ({self.seconds:.2f}s)"


def table_shape(tbl: Any) -> tuple[int, int]:
    """A table's fragments and versions (what upkeep keeps few)."""
    versions = tbl.list_versions()
    return _fragments(versions), len(versions)


def _fragments(versions: list[dict[str, Any]]) -> int:
    """The fragments of the latest of `versions` (its manifest's count)."""
    meta = (versions[-1].get("metadata") or {}) if versions else {}
    return int(meta.get("total_fragments", 0))


def _older_than(versions: list[dict[str, Any]], keep: dt.timedelta) -> int:
    """How many versions before the latest were committed longer than `keep` ago."""
    old = 0
    for version in versions[:-1]:
        stamp = version["timestamp"]
        if dt.datetime.now(stamp.tzinfo) - stamp > keep:
            old += 1
    return old


def upkeep_table(
    tbl: Any, keep: dt.timedelta = KEEP_VERSIONS, compact_from: int = COMPACT_FRAGMENTS
) -> TableUpkeep | None:
    """Compact a table once it has `compact_from` fragments, delete its versions older
    than `keep`, and take into its indexes the rows they do not cover yet (rows a run
    left searched flat: LanceDB's `optimize` does all three), when any is due; None when
    none was (nothing written). The caller holds the table's write lock."""
    start = time.perf_counter()
    versions = tbl.list_versions()
    fragments = _fragments(versions)
    lagging = rows_not_indexed(tbl)
    if fragments < compact_from and not _older_than(versions, keep) and not lagging:
        return None
    retry_commit(lambda: tbl.optimize(cleanup_older_than=keep), f"upkeep of {tbl.name}")
    after = table_shape(tbl)
    elapsed = time.perf_counter() - start
    return TableUpkeep(tbl.name, (fragments, after[0]), (len(versions), after[1]), elapsed)


def rows_not_indexed(tbl: Any) -> int:
    """The most rows any index of `tbl` leaves searched flat (0: every index covers
    every row, or the table has none)."""
    return max((int(c.num_unindexed_rows or 0) for c in tbl.list_indices()), default=0)


def upkeep_tables(
    uri: str | os.PathLike[str],
    keep: dt.timedelta = KEEP_VERSIONS,
    compact_from: int = COMPACT_FRAGMENTS,
) -> list[TableUpkeep]:
    """`upkeep_table` on every table of the database (each model's, each embedding
    cache, the active-model pointer), each under its write lock: what the `table_upkeep`
    schedule and the end of `trecho materialize` run (so rows a run left outside the
    full-text index are in it within the schedule's period). Returns what changed."""
    db = connect(str(uri))
    done = []
    for name in model_tables(uri, prefix=""):
        with table_lock(str(uri), name):
            tbl = table_or_none(db, name)
            result = upkeep_table(tbl, keep, compact_from) if tbl is not None else None
        if result is not None:
            log.info("%s", result)
            done.append(result)
    return done
