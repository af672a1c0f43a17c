"""The embedding cache: a vector already computed for a text is never computed again."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rag_assets.core.embedding import Embedder
from rag_assets.core.index.connection import connect
from rag_assets.core.index.locking import retry_commit, table_lock
from rag_assets.core.index.store import model_tables, table_name, table_or_none
from rag_assets.core.index.upkeep import COMPACT_FRAGMENTS, upkeep_table
from rag_assets.core.lake import content_hash

CACHE_PREFIX = "embcache__"
LOOKUP_BATCH = 512


@dataclass
class CacheStats:
    """What one `embed_cached` call did: vectors reused and texts actually embedded."""

    hits: int = 0
    misses: int = 0
    fresh: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    """The vectors embedded, by text hash: what `EmbeddingCache.add_fresh` stores (the
    embeddings asset does, in the commit of the rows that use them)."""


class EmbeddingCache:
    """Vectors already computed, keyed by (model id, hash of the embedded text).

    A chunk text seen before, in a rerun or in another version of the same document, is
    never embedded again. One LanceDB table per model id (`embcache__<model_id>`) in the
    same database as the index. An entry is written in the commit of the index rows that
    use its text (under the model table's write lock), and leaves when no row of that
    table uses its text any more (`core.lifecycle.purge`): a revoked version's vectors
    leave with its rows, a vector another version still uses stays.
    """

    def __init__(self, uri: str | os.PathLike[str], embedder: Embedder) -> None:
        self.uri = str(uri)
        self.embedder = embedder
        self.db = connect(self.uri)
        self.table_name = CACHE_PREFIX + embedder.model_id

    def _open(self) -> Any | None:
        return table_or_none(self.db, self.table_name)

    def lookup(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among `hashes` (missing ones are simply absent)."""
        tbl = self._open()
        wanted = sorted(set(hashes))
        found: dict[str, np.ndarray] = {}
        if tbl is None or not wanted:
            return found
        for start in range(0, len(wanted), LOOKUP_BATCH):
            batch = wanted[start : start + LOOKUP_BATCH]
            for h in batch:
                if not re.fullmatch(r"[0-9a-f]+", h):
                    raise ValueError(f"not a content hash: {h!r}")
            listed = ", ".join(f"'{h}'" for h in batch)
            rows = (
                tbl.search()
                .where(f"text_hash IN ({listed})")
                .select(["text_hash", "vector"])
                .limit(None)
                .to_arrow()
            )
            vectors = rows.column("vector").combine_chunks()
            flat = vectors.flatten().to_numpy(zero_copy_only=False).astype(np.float32)
            flat = flat.reshape(rows.num_rows, -1) if rows.num_rows else flat
            for i, h in enumerate(rows.column("text_hash").to_pylist()):
                found[h] = flat[i]
        return found

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store new vectors; hashes already cached are left as they are. Every
        COMPACT_FRAGMENTS-th write compacts the table (`upkeep_table`)."""
        if not len(hashes):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        first = {h: i for i, h in reversed(list(enumerate(hashes)))}  # one row per hash
        vectors = vectors[list(first.values())]
        dim = vectors.shape[1]
        data = pa.Table.from_arrays(
            [
                pa.array(list(first), pa.string()),
                pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.reshape(-1), type=pa.float32()), dim
                ),
            ],
            names=["text_hash", "vector"],
        )

        def merge() -> None:
            tbl = self._open()
            if tbl is None:
                try:
                    self.db.create_table(self.table_name, data, mode="create")
                    return
                except ValueError as exc:
                    if "already exists" not in str(exc).lower():
                        raise
                    tbl = self.db.open_table(self.table_name)
            tbl.merge_insert("text_hash").when_not_matched_insert_all().execute(data)

        with table_lock(self.uri, self.table_name):
            retry_commit(merge, f"cache {self.table_name}")
            tbl = self._open()
            if tbl is not None and int(tbl.version) % COMPACT_FRAGMENTS == 0:
                upkeep_table(tbl)  # one fragment per write: lookups would open them all

    def add_fresh(self, stats: CacheStats) -> None:
        """Store the vectors an `embed_cached(..., store=False)` call embedded."""
        if stats.fresh:
            self.add(list(stats.fresh), np.stack(list(stats.fresh.values())))

    def count(self) -> int:
        """How many vectors are cached for this model."""
        tbl = self._open()
        return 0 if tbl is None else int(tbl.count_rows())


def embed_cached(
    embedder: Embedder,
    cache: EmbeddingCache | None,
    texts: Sequence[str],
    *,
    store: bool = True,
) -> tuple[np.ndarray, CacheStats]:
    """Passage vectors for `texts`, embedding only the texts the cache does not hold.

    Duplicate texts within the call are embedded once. Without a cache, everything is
    embedded (and counted as misses). With `store=False` the new vectors are not written
    to the cache but left in the stats' `fresh` for the caller (`add_fresh`): the
    embeddings asset stores them only with the rows that use them, so a version revoked
    while it is embedded leaves no vector behind.
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32), CacheStats()
    hashes = [content_hash(t) for t in texts]
    known = cache.lookup(hashes) if cache is not None else {}
    todo: dict[str, str] = {}
    for h, t in zip(hashes, texts, strict=True):
        if h not in known and h not in todo:
            todo[h] = t
    if todo:
        fresh = embedder.embed_passages(list(todo.values()))
        if cache is not None and store:
            cache.add(list(todo), fresh)
        known.update(zip(todo, fresh, strict=True))
    vectors = np.stack([known[h] for h in hashes]).astype(np.float32)
    stats = CacheStats(hits=len(texts) - len(todo), misses=len(todo))
    stats.fresh = {h: known[h] for h in todo}
    return vectors, stats


def hashes_of(tbl: Any | None, column: str) -> set[str]:
    """Every value of a hash column of a table (empty for no table)."""
    return set(hash_column(tbl, column).to_pylist())


def hash_column(tbl: Any | None, column: str) -> pa.Array:
    """A hash column of a table as one Arrow array (empty for no table)."""
    if tbl is None:
        return pa.array([], pa.string())
    return tbl.search().select([column]).limit(None).to_arrow().column(column).combine_chunks()


def unused_entries(uri: str | os.PathLike[str], model_id: str) -> set[str]:
    """The text hashes a model's cache holds that no row of its index table uses: the
    vectors of texts removed (a revoked version's, or left by a run before entries were
    written with their rows); none for a model without a table (a model switched away
    from keeps its cache, so that a switch back embeds nothing again). Compared in
    Arrow: only the unused ones become strings."""
    db = connect(str(uri))
    cached = hash_column(table_or_none(db, CACHE_PREFIX + model_id), "text_hash")
    tbl = table_or_none(db, table_name(model_id))
    if not len(cached) or tbl is None:  # no table (switched away): the cache is kept
        return set()
    used = hash_column(tbl, "content_hash")
    unused = pc.filter(cached, pc.invert(pc.is_in(cached, value_set=pc.unique(used))))
    return set(unused.to_pylist())


def drop_cache(uri: str | os.PathLike[str], model_id: str) -> str | None:
    """Drop a model's embedding cache table; its name, or None when it had none."""
    cache = CACHE_PREFIX + model_id
    if cache not in model_tables(uri, prefix=cache):
        return None
    connect(str(uri)).drop_table(cache)
    return cache
