"""The LanceDB store and the search API: vector, full-text and hybrid, with filters.

One LanceDB table per embedding model (`chunks__<model_id>`), holding the chunk columns
(schemas.CHUNKS) plus `vector`, `status`, `valid_from`, `valid_to` and `title`
(docs/design.md). A document version (partition) is replaced in one commit with
`merge_insert`, so a reader never sees half of a version.

Choices written down here:

- Rows are matched on (`partition_key`, `chunk_id`), not on `chunk_id` alone: the merge
  then can never touch another version's rows, even if two versions share chunk ids.
- Full-text search is LanceDB's native inverted index on `text`, tokenized lowercase,
  ASCII-folded (`vibração` matches `vibracao`) and with Portuguese stemming and stop words
  (the corpus is mostly Portuguese; English text still matches itself since queries go
  through the same analyzer). It is built with the table, then kept current, never
  rebuilt: rows written since its last update are searched flat (with the index's
  analyzer), so they are found at once but cost time at every query (+6 ms a full-text
  query at 300 such rows, +26 ms at 900); once INDEX_LAG_ROWS (300) rows wait,
  LanceDB's `optimize()` adds them (BM25 scores then equal a full rebuild's). That
  update is no cheap append: it also compacts the table, which rewrites every row
  already indexed (1.4 s at 100k rows against 2.3 s for a full rebuild, 0.24 vs 0.27 s
  at 10k), hence the batching; it also drops table versions older than 7 days
  (LanceDB's default). Deleted rows leave results at once (deletion masks).
  With no index at all LanceDB 0.40 still answers by a flat scan of `text`, but
  without folding or stemming: build the index.
- Hybrid search is reciprocal rank fusion (k=60) computed here, not LanceDB's reranker,
  so each hit says which retriever found it and at what rank; the vector list is
  weighted by the model (`default_vector_weight`: 8 for the bundled e5, else 1).
- Vector search is exact below `ann_min_rows` rows (default 50k; `TRECHO_ANN_MIN_ROWS`,
  0 disables): there the scan costs tens of ms. From there on the table gets an
  IVF_HNSW_SQ index (one partition, cosine), searched with `ef` = `ann_ef` (default
  200, raised to cover the candidates) and the top `k x ANN_REFINE` candidates
  re-ranked on the stored vectors, so scores stay exact cosines (SQ's own distances are
  twice the cosine distance, and coarse) and near-ties keep their order: recall@10
  0.97 at 100k rows, 6x faster than the scan. Each `optimize()` adds the waiting rows
  as a delta segment; each segment costs ~0.5 ms a query, so past ANN_MAX_SEGMENTS the
  index is retrained (40 s at 100k rows). Rows not yet indexed are searched flat, so
  they are found at once. Evaluations pass `exact=True`: the index is bypassed and
  results do not depend on when it was trained.
- Filters are applied before ranking (prefilter), so `k` hits come back whenever `k`
  rows match the filters. A filter that would keep every row (the usual case: the
  table of a live lake holds what search serves) is left out, since evaluating it costs
  a pass over the filter columns at each query (~10 ms of a hybrid query at 100k rows);
  which versions a table holds, with their status and validity, is read once per table
  state.
- Hybrid search runs the full-text query on another thread while the query is embedded
  and the vector query runs (LanceDB releases the GIL). With the filter left out when it
  keeps every row: hybrid 1.65x faster at 100k rows (1.2x at 10k), the same hits and
  scores on 30 of 30 queries (bench/serve.py).
- Writes to a table (create, merge, delete, index build) are serialized by a file lock
  next to it, because LanceDB 0.40 alone loses rows when two processes create the table
  at once and duplicates rows when two runs merge the same partition at once. Commit
  conflicts that remain (object stores, other writers) are retried with backoff.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, NamedTuple, TypeVar

import lancedb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.index import FTS, HnswSq

from rag_assets.core.embedding import Embedder
from rag_assets.core.lake import (
    STATUSES,
    file_lock,
    local_lock_path,
    split_key,
    superseded,
    validate_key_part,
)
from rag_assets.core.schemas import CHUNKS, content_hash

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "vector", "fts"]
MODES: tuple[str, ...] = ("hybrid", "vector", "fts")
RRF_K = 60
"""Reciprocal rank fusion constant: score = sum over retrievers of 1 / (RRF_K + rank)."""
VECTOR_WEIGHT_E5 = 8.0
"""The vector retriever's weight in hybrid fusion for the bundled e5 (full text: 1).
Measured on the LGPD + CDC dev questions (docs/models.md): with equal weights the
full-text list pulls down e5's right answers to lay questions that share no word with
the law (`leiga` hit@3 0.50 at weight 1, 0.75 at 8); MiniLM keeps equal weights."""
CANDIDATES_PER_K = 4
"""Hybrid search fetches this many times `k` candidates from each retriever."""
MIN_CANDIDATES = 20
"""...and at least this many, so fusion has material even for k=1."""
FTS_LANGUAGE = "Portuguese"
MAX_QUERY_TERMS = 64
ANN_MIN_ROWS = 50_000
"""Rows from which a table gets a vector index (below, the exact scan is fast enough)."""
ANN_EF = 200
"""HNSW search breadth: recall@10 0.97 at 100k rows (0.91 at 100, 0.62 at LanceDB's 15)."""
ANN_REFINE = 5
"""Candidates re-ranked on the stored vectors per hit wanted: exact scores and order."""
ANN_MAX_SEGMENTS = 16
"""Delta segments (one per incremental update) before the vector index is retrained."""
INDEX_LAG_ROWS = 300
"""Rows left out of the indexes (searched flat, +6 ms a full-text query at 300) before
an incremental update: each one rewrites the table (compaction), 1.4-1.9 s at 100k rows."""

EXTRA_COLUMNS: tuple[str, ...] = ("status", "valid_from", "valid_to", "title")
"""Columns the store adds to the chunk columns, besides `vector`."""
HIT_COLUMNS: list[str] = [*CHUNKS.names, *EXTRA_COLUMNS]
"""What a search reads back: everything but the vector."""

_T = TypeVar("_T")
_RETRIEVERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trecho-fts")
"""Runs hybrid search's full-text queries beside the embedding and vector queries."""


def table_name(model_id: str) -> str:
    """The LanceDB table holding one embedding model's vectors."""
    return f"chunks__{model_id}"


def store_schema(dimension: int) -> pa.Schema:
    """Chunk columns plus the vector and the validity columns of a version."""
    return pa.schema(
        [
            *CHUNKS,
            pa.field("vector", pa.list_(pa.float32(), dimension)),
            pa.field("status", pa.string()),
            pa.field("valid_from", pa.date32()),
            pa.field("valid_to", pa.date32()),
            pa.field("title", pa.string()),
        ]
    )


def fts_terms(query: str) -> str:
    """The words of a query, without punctuation or operators, for full-text search.

    LanceDB 0.40's native FTS does not parse query syntax, but stripping everything but
    word characters keeps `?`, `:`, quotes and the like from ever mattering.
    """
    return " ".join(re.findall(r"\w+", query)[:MAX_QUERY_TERMS])


def _sql_date(value: dt.date) -> str:
    return f"date '{value.isoformat()}'"


def _is_conflict(exc: Exception) -> bool:
    """Whether a LanceDB error is a lost commit race (worth retrying) and nothing else."""
    text = str(exc).lower()
    return any(
        word in text
        for word in ("commit conflict", "preempted", "contention", "incompatible transaction")
    )


@contextmanager
def _table_lock(uri: str, name: str) -> Iterator[None]:
    """Serialize writes to one table: across processes for a local database, across the
    processes of one host for an object store (hosts race through LanceDB's commit retry)."""
    with file_lock(local_lock_path(uri, f".{name}.lock")):
        yield


def _retry(action: Callable[[], _T], what: str, attempts: int = 8) -> _T:
    """Run a LanceDB write, retrying commit conflicts with another writer (with backoff)."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except Exception as exc:  # LanceDB raises plain OSError/RuntimeError/ValueError
            if attempt == attempts or not _is_conflict(exc):
                raise
            delay = min(5.0, 0.1 * 2**attempt) * (0.5 + random.random())
            log.warning("%s: commit conflict (attempt %d), retrying in %.2fs", what, attempt, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


@dataclass
class Hit:
    """One retrieved chunk, with where it comes from and which retrievers found it.

    `score` is higher-is-better: cosine similarity (vector), BM25 (fts) or the fused RRF
    score (hybrid). `ranks` maps each retriever that found the chunk to its 1-based rank.
    """

    chunk_id: str
    partition_key: str
    doc_id: str
    version: str
    title: str
    path: str
    header: str
    body: str
    text: str
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    parent_id: str | None
    kind: str
    token_count: int
    score: float
    retrievers: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)
    strategy: str = ""
    status: str = "active"
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any], score: float, retriever: str, rank: int) -> Hit:
        """A hit from one result row of one retriever."""
        return cls(
            chunk_id=row["chunk_id"],
            partition_key=row["partition_key"],
            doc_id=row["doc_id"],
            version=row["version"],
            title=row.get("title") or "",
            path=row.get("path") or "",
            header=row.get("header") or "",
            body=row.get("body") or "",
            text=row.get("text") or "",
            page_start=int(row["page_start"]),
            page_end=int(row["page_end"]),
            char_start=int(row["char_start"]),
            char_end=int(row["char_end"]),
            parent_id=row.get("parent_id"),
            kind=row.get("kind") or "",
            token_count=int(row.get("token_count") or 0),
            score=float(score),
            retrievers=[retriever],
            ranks={retriever: rank},
            strategy=row.get("strategy") or "",
            status=row.get("status") or "active",
            valid_from=row.get("valid_from"),
            valid_to=row.get("valid_to"),
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (dates as ISO strings)."""
        out = asdict(self)
        for key in ("valid_from", "valid_to"):
            if out[key] is not None:
                out[key] = out[key].isoformat()
        return out


def _as_chunk_table(chunks: pa.Table | pl.DataFrame) -> pa.Table:
    table = chunks.to_arrow() if isinstance(chunks, pl.DataFrame) else chunks
    missing = [name for name in CHUNKS.names if name not in table.column_names]
    if missing:
        raise ValueError(f"chunks lack the columns {missing} (see schemas.CHUNKS)")
    return table.select(CHUNKS.names).cast(CHUNKS)


def _tie_order(score: float, row: dict[str, Any]) -> tuple[float, str, str]:
    """Rank order of one retriever's rows: best score first, equal scores (rows of one
    table share BM25 scores) by key and chunk id, so the same index state always gives
    the same ranking, whatever order the store returned them in."""
    return (-round(score, 6), str(row["partition_key"]), str(row["chunk_id"]))


def _rrf(
    ranked: dict[str, list[Hit]], k: int, weights: dict[str, float] | None = None
) -> list[Hit]:
    """Reciprocal rank fusion of several ranked lists, keeping each retriever's rank;
    a retriever's `weights` entry (1 when absent) multiplies its 1 / (RRF_K + rank)."""
    fused: dict[tuple[str, str], Hit] = {}
    for retriever, hits in ranked.items():
        weight = (weights or {}).get(retriever, 1.0)
        for rank, hit in enumerate(hits, start=1):
            key = (hit.partition_key, hit.chunk_id)
            if key not in fused:
                fused[key] = replace(hit, score=0.0, retrievers=[], ranks={})
            fused[key].score += weight / (RRF_K + rank)
            fused[key].retrievers.append(retriever)
            fused[key].ranks[retriever] = rank
    order = sorted(fused.values(), key=lambda h: (-h.score, min(h.ranks.values()), h.chunk_id))
    return order[:k]


CACHE_PREFIX = "embcache__"
LOOKUP_BATCH = 512


@dataclass
class CacheStats:
    """What one `embed_cached` call did: vectors reused and texts actually embedded."""

    hits: int = 0
    misses: int = 0


class EmbeddingCache:
    """Vectors already computed, keyed by (model id, hash of the embedded text).

    A chunk text seen before, in a rerun or in another version of the same document, is
    never embedded again. One LanceDB table per model id (`embcache__<model_id>`) in the
    same database as the index; entries outlive the versions that produced them (a
    revoked version's vectors cost a few KB and may come back in its successor).
    """

    def __init__(self, uri: str | os.PathLike[str], embedder: Embedder) -> None:
        self.uri = str(uri)
        self.embedder = embedder
        self.db = lancedb.connect(self.uri)
        self.table_name = CACHE_PREFIX + embedder.model_id

    def _open(self) -> Any | None:
        return _open_table(self.db, self.table_name)

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
        """Store new vectors; hashes already cached are left as they are."""
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

        with _table_lock(self.uri, self.table_name):
            _retry(merge, f"cache {self.table_name}")

    def count(self) -> int:
        """How many vectors are cached for this model."""
        tbl = self._open()
        return 0 if tbl is None else int(tbl.count_rows())


def embed_cached(
    embedder: Embedder, cache: EmbeddingCache | None, texts: Sequence[str]
) -> tuple[np.ndarray, CacheStats]:
    """Passage vectors for `texts`, embedding only the texts the cache does not hold.

    Duplicate texts within the call are embedded once. Without a cache, everything is
    embedded (and counted as misses).
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
        if cache is not None:
            cache.add(list(todo), fresh)
        known.update(zip(todo, fresh, strict=True))
    vectors = np.stack([known[h] for h in hashes]).astype(np.float32)
    return vectors, CacheStats(hits=len(texts) - len(todo), misses=len(todo))


ACTIVE_TABLE = "trecho_active_model"


@dataclass(frozen=True)
class ModelRef:
    """The model whose table search uses: enough to embed queries the same way."""

    model: str
    query_prefix: str = ""
    passage_prefix: str = ""
    switched_at: str = ""

    @classmethod
    def of(cls, embedder: Embedder) -> ModelRef:
        """The reference of a configured embedder, stamped now."""
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        return cls(embedder.model, embedder.query_prefix, embedder.passage_prefix, now)

    def embedder(self, device: str = "cpu", backend: str = "torch", threads: int = 0) -> Embedder:
        """An embedder configured like the one that filled the table (the backend, device
        and threads give the same vectors, so they are the caller's choice)."""
        return Embedder(
            model=self.model,
            query_prefix=self.query_prefix,
            passage_prefix=self.passage_prefix,
            device=device,
            backend=backend,
            threads=threads,
        )

    @property
    def model_id(self) -> str:
        """The model id (and so the table) this reference points at."""
        return self.embedder().model_id


def read_active(uri: str | os.PathLike[str]) -> ModelRef | None:
    """The model search uses in this database, or None before anything was indexed."""
    db = lancedb.connect(str(uri))
    try:
        rows = db.open_table(ACTIVE_TABLE).to_arrow().to_pylist()
    except ValueError:
        return None
    return ModelRef(**rows[-1]) if rows else None


def write_active(uri: str | os.PathLike[str], ref: ModelRef) -> None:
    """Point search at `ref`'s table (one atomic overwrite of a one-row table)."""
    db = lancedb.connect(str(uri))
    data = pa.Table.from_pylist(
        [asdict(ref)],
        schema=pa.schema([(name, pa.string()) for name in asdict(ref)]),
    )
    with _table_lock(str(uri), ACTIVE_TABLE):
        mode = "overwrite" if ACTIVE_TABLE in model_tables(uri, prefix="") else "create"
        _retry(lambda: db.create_table(ACTIVE_TABLE, data, mode=mode), "switch active model")


def _open_table(db: Any, name: str) -> Any | None:
    """A table of `db`, or None when it does not exist (yet)."""
    try:
        return db.open_table(name)
    except ValueError as exc:
        if "not found" in str(exc).lower() or "does not exist" in str(exc).lower():
            return None
        raise


def model_tables(uri: str | os.PathLike[str], prefix: str = "chunks__") -> list[str]:
    """Every model's index table in a database (`chunks__<model_id>`), or every table
    whose name starts with `prefix`."""
    db = lancedb.connect(str(uri))
    names: list[str] = []
    token = None
    while True:
        page = db.list_tables(page_token=token)
        names += [n for n in page.tables if n.startswith(prefix)]
        token = page.page_token
        if not token:
            return sorted(names)


class NoLongerLive(Exception):
    """A version found not live at commit time (revoked, deleted, superseded, expired
    while its run was under way): nothing of it was written."""


@dataclass
class Removal:
    """What removing one version from the database did."""

    rows: int = 0
    """Rows deleted, over every model's table."""
    cache_entries: int = 0
    """Cached vectors deleted: texts no other indexed row uses."""
    tables_purged: list[str] = field(default_factory=list)
    """Tables compacted with their older versions deleted (the text is gone from disk)."""
    files: int = 0
    """The version's Parquet files deleted (set by `service.purge_version`)."""


def purge_old_versions(tbl: Any) -> None:
    """Rewrite the table's files without deleted rows and delete every older version of
    the table (and files no version uses): what was deleted can no longer be read back
    from disk, nor by checking out an older version. The caller holds the table's lock.

    The full-text index is rebuilt from the remaining rows: an incremental update keeps
    the deleted rows' words in its posting lists."""
    with warnings.catch_warnings():  # "removes every version except the latest": wanted
        warnings.simplefilter("ignore", UserWarning)
        tbl.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)
        if any(c.columns == ["text"] for c in tbl.list_indices()):
            tbl.create_index("text", config=fts_config(), replace=True)
            tbl.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)


def fts_config(language: str = FTS_LANGUAGE) -> FTS:
    """The full-text analyzer: lowercase, ASCII-folded, stemmed, without stop words."""
    return FTS(
        language=language,
        lower_case=True,
        ascii_folding=True,
        stem=True,
        remove_stop_words=True,
    )


def delete_partition_everywhere(
    uri: str | os.PathLike[str], partition_key: str, *, purge: bool = True
) -> Removal:
    """Remove one version's rows from every model's table and, with `purge`, its text
    from disk: each table that held rows is compacted and its older versions deleted,
    and the cached vectors of texts no other row of that model uses are deleted too."""
    split_key(partition_key)
    db = lancedb.connect(str(uri))
    out = Removal()
    for name in model_tables(uri):
        only_mine = _delete_rows(db, str(uri), name, partition_key, purge, out)
        if only_mine:
            cache = CACHE_PREFIX + name.removeprefix("chunks__")
            _delete_cached(db, str(uri), cache, only_mine, out)
    return out


def _delete_rows(db: Any, uri: str, name: str, key: str, purge: bool, out: Removal) -> set[str]:
    """Delete one version's rows from one model's table (then purge it from disk);
    returns the hashes of its texts that no remaining row of the table uses."""
    where = f"partition_key = '{key}'"
    with _table_lock(uri, name):
        mine = db.open_table(name).search().where(where).select(["content_hash"]).limit(None)
        hashes = set(mine.to_arrow().column("content_hash").to_pylist())
        if not hashes:
            return set()
        n = int(db.open_table(name).count_rows(where))
        _retry(lambda: db.open_table(name).delete(where), f"delete in {name}")
        out.rows += n
        if not purge:
            return set()
        _retry(lambda: purge_old_versions(db.open_table(name)), f"purge {name}")
        out.tables_purged.append(name)
        left = db.open_table(name).search().select(["content_hash"]).limit(None).to_arrow()
        return hashes - set(left.column("content_hash").to_pylist())


def _delete_cached(db: Any, uri: str, name: str, hashes: set[str], out: Removal) -> None:
    """Delete cached vectors by text hash from a cache table, then purge it from disk."""
    if _open_table(db, name) is None:
        return
    listed = ", ".join(f"'{h}'" for h in sorted(hashes) if re.fullmatch(r"[0-9a-f]+", h))
    where = f"text_hash IN ({listed})"
    with _table_lock(uri, name):
        n = int(db.open_table(name).count_rows(where))
        if n:
            _retry(lambda: db.open_table(name).delete(where), f"delete in {name}")
            _retry(lambda: purge_old_versions(db.open_table(name)), f"purge {name}")
            out.cache_entries += n
            out.tables_purged.append(name)


def committed_keys(uri: str | os.PathLike[str]) -> set[str]:
    """The versions the table search uses holds (its active model's); empty before
    anything was indexed. What counts as indexed when a newer version supersedes."""
    active = read_active(uri)
    if active is None:
        return set()
    tbl = _open_table(lancedb.connect(str(uri)), table_name(active.model_id))
    if tbl is None:
        return set()
    keys = tbl.search().select(["partition_key"]).limit(None).to_arrow()
    return set(pc.unique(keys.column("partition_key")).to_pylist())


def active_embedder(uri: str | os.PathLike[str], configured: Embedder) -> Embedder:
    """The embedder search must use: the active model's (see `write_active`), else the
    configured one (nothing indexed yet, or a database from before the switch existed)."""
    ref = read_active(uri)
    if ref is None:
        return configured
    return ref.embedder(configured.device, configured.backend, configured.threads)


def default_vector_weight(embedder: Embedder) -> float:
    """The vector retriever's weight in hybrid fusion: TRECHO_VECTOR_WEIGHT when set, else
    VECTOR_WEIGHT_E5 for a bundled e5 variant, else 1 (plain reciprocal rank fusion)."""
    raw = os.environ.get("TRECHO_VECTOR_WEIGHT", "").strip()
    if not raw:
        return VECTOR_WEIGHT_E5 if embedder.variant else 1.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"TRECHO_VECTOR_WEIGHT={raw!r}: expected a number") from None
    if value < 0:
        raise ValueError(f"TRECHO_VECTOR_WEIGHT={raw!r}: expected 0 or more")
    return value


def env_int(name: str, default: int) -> int:
    """A non-negative integer setting from the environment (`default` when unset)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a whole number") from None
    if value < 0:
        raise ValueError(f"{name}={raw!r}: expected 0 or more")
    return value


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
                return f"{label}: no index"
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
        return f"{self.rows} rows; {vector}; {part('full-text', self.fts)}"

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


class _VersionRow(NamedTuple):
    """What the search filter looks at, per version (see `Index._where`)."""

    partition_key: str
    doc_id: str
    version: str
    status: str
    valid_from: dt.date | None
    valid_to: dt.date | None


_KINDS = {"IvfHnswSq": "IVF_HNSW_SQ", "IvfHnswPq": "IVF_HNSW_PQ", "IvfPq": "IVF_PQ"}


class Index:
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
    ) -> None:
        """`ann_min_rows`/`ann_ef` default to TRECHO_ANN_MIN_ROWS / TRECHO_ANN_EF, else
        ANN_MIN_ROWS / ANN_EF; `ann_min_rows=0` means exact vector search only.
        `vector_weight`: the vector retriever's weight in hybrid fusion (full text: 1)."""
        self.uri = str(uri)
        self.embedder = embedder
        self.fts_language = fts_language
        self.ann_min_rows = (
            env_int("TRECHO_ANN_MIN_ROWS", ANN_MIN_ROWS) if ann_min_rows is None else ann_min_rows
        )
        self.ann_ef = env_int("TRECHO_ANN_EF", ANN_EF) if ann_ef is None else ann_ef
        self.vector_weight = (
            default_vector_weight(embedder) if vector_weight is None else vector_weight
        )
        if self.vector_weight < 0:
            raise ValueError(f"vector_weight must be >= 0, got {self.vector_weight}")
        if self.ann_min_rows < 0 or self.ann_ef < 1:
            raise ValueError(f"ann_min_rows must be >= 0 and ann_ef >= 1, got {self!r}")
        self.db = lancedb.connect(self.uri)
        self._versions_cache: tuple[tuple[int, int], dict[str, _VersionRow]] = ((-1, -1), {})
        self.last_index_update: list[str] = []
        """What the last `update_indexes()` did, with timings (for logs)."""

    def __repr__(self) -> str:
        return (
            f"Index({self.uri!r}, table={self.table_name!r}, "
            f"ann_min_rows={self.ann_min_rows}, ann_ef={self.ann_ef})"
        )

    @property
    def table_name(self) -> str:
        """This model's table name."""
        return table_name(self.embedder.model_id)

    def _open(self) -> Any | None:
        """The table, or None when it does not exist yet."""
        return _open_table(self.db, self.table_name)

    def exists(self) -> bool:
        """Whether this model's table has been created."""
        return self._open() is not None

    # -- writing ----------------------------------------------------------------------

    def upsert_partition(
        self,
        partition_key: str,
        chunks: pa.Table | pl.DataFrame,
        vectors: np.ndarray,
        status: str,
        valid_from: dt.date | None,
        valid_to: dt.date | None,
        title: str,
        *,
        rebuild_fts: bool = True,
        still_live: Callable[[], str | None] | None = None,
        replaces: Sequence[str] = (),
    ) -> int:
        """Replace one version's rows (chunks + vectors + validity) in one commit.

        Rows of the version that are not in `chunks` are deleted, and so are the rows of
        the versions in `replaces` (the older versions this one supersedes: they leave
        in the commit that brings it in, never before); other versions are untouched.
        `still_live` is asked under the table's write lock, just before the commit: a
        reason it returns (the version was revoked, deleted... meanwhile) raises
        NoLongerLive and nothing is written, so a run never puts back a version removed
        while it ran (removals take the same lock). Then the indexes are kept current
        (`update_indexes()`: built when missing, updated once enough rows wait); set
        `rebuild_fts=False` in a bulk load and call `build_fts_index()` (fresh table) or
        `update_indexes()` once at the end.
        Rows not yet indexed are found all the same (flat search). Returns the number of
        rows now stored for the version.
        """
        split_key(partition_key)
        if status not in STATUSES:
            raise ValueError(f"status {status!r} must be one of {list(STATUSES)}")
        table = _as_chunk_table(chunks)
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
        data = self._with_store_columns(table, vectors, status, valid_from, valid_to, title)
        where = f"partition_key = '{partition_key}'"
        for old in replaces:
            split_key(old)
        gone = where + "".join(f" OR partition_key = '{old}'" for old in replaces)

        def merge() -> Any:
            tbl = self._open()  # a fresh handle: a retry must see the winner's commit
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
            tbl = _retry(merge, f"upsert {partition_key}")
            stored = int(tbl.count_rows(where))
        if rebuild_fts:
            self.update_indexes()
        return stored

    def _with_store_columns(
        self,
        table: pa.Table,
        vectors: np.ndarray,
        status: str,
        valid_from: dt.date | None,
        valid_to: dt.date | None,
        title: str,
    ) -> pa.Table:
        n, dim = vectors.shape
        flat = pa.array(vectors.reshape(-1), type=pa.float32())
        columns = [
            *table.columns,
            pa.FixedSizeListArray.from_arrays(flat, dim),
            pa.array([status] * n, pa.string()),
            pa.array([valid_from] * n, pa.date32()),
            pa.array([valid_to] * n, pa.date32()),
            pa.array([title] * n, pa.string()),
        ]
        return pa.Table.from_arrays(columns, schema=store_schema(dim))

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """Serialize this table's writes across processes and threads (local folders).

        Two things LanceDB 0.40 does not protect against on its own: two processes that
        both see no table both "create" it, the second silently overwriting the first
        one's rows; and two concurrent merges of the same partition both insert its new
        rows (duplicates). Writes take well under a second, so a lock costs nothing
        worth measuring. Object stores get no lock: there, never write one partition
        from two runs at once.
        """
        with _table_lock(self.uri, self.table_name):
            yield

    @staticmethod
    def _check_dimension(tbl: Any, dim: int) -> None:
        stored = tbl.schema.field("vector").type.list_size
        if stored != dim:
            raise ValueError(
                f"table {tbl.name!r} holds {stored}-d vectors, got {dim}-d: "
                "a different model needs its own table"
            )

    def _fts_config(self) -> FTS:
        return fts_config(self.fts_language)

    def build_fts_index(self) -> None:
        """(Re)build the full-text index on `text` from scratch (lowercase, ASCII-folded,
        stemmed): after a bulk load into a fresh table. Upserts use `update_indexes()`.

        Takes the write lock: two concurrent builds only fail each other's commit.
        """

        with self._write_lock():
            _retry(self._create_fts_index, f"fts index on {self.table_name}")

    def _create_fts_index(self) -> None:
        """Build the full-text index over every row now (the caller holds the lock)."""
        tbl = self._open()
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
            _retry(action, f"{what} on {self.table_name}")
            done.append(f"{what} ({time.perf_counter() - start:.2f}s)")

        with self._write_lock():
            tbl = self._open()
            if tbl is None:
                self.last_index_update = []
                return []
            stats = self._stats(tbl)
            if not self._fts_is_current(stats.fts, tbl):
                step("full-text index built", self._create_fts_index)
                stats = self._stats(self._open())
            pending = max(
                [s.unindexed_rows for s in (stats.vector, stats.fts) if s is not None] or [0]
            )
            if pending and pending >= lag:
                step("indexes updated incrementally", lambda: self._open().optimize())
                stats = self._stats(self._open())
            vector = stats.vector
            if self.ann_min_rows == 0:
                if vector is not None:
                    step("vector index dropped", lambda: self._open().drop_index(vector.name))
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
        self._open().create_index("vector", config=config, replace=True)

    def index_stats(self) -> IndexStats:
        """Which indexes the table has, and how many rows each covers or leaves flat."""
        tbl = self._open()
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
        return IndexStats(int(tbl.count_rows()), vector, fts, self.ann_min_rows, self.ann_ef)

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
                _retry(lambda: self.db.open_table(self.table_name).delete(where), "delete")
        return n

    def partition_counts(self) -> dict[str, int]:
        """Rows per partition key (empty when the table does not exist)."""
        tbl = self._open()
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

    # -- searching --------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        mode: Mode = "hybrid",
        doc_id: str | Sequence[str] | None = None,
        version: str | Sequence[str] | None = None,
        as_of: dt.date | None = None,
        include_revoked: bool = False,
        *,
        exact: bool = False,
    ) -> list[Hit]:
        """The `k` best chunks for a query, among active versions valid on `as_of`.

        `exact=True` scans every vector instead of using the vector index (evaluations:
        results that do not depend on the index); without an index it changes nothing.
        """
        return self.search_many(
            [query], k, mode, doc_id, version, as_of, include_revoked, exact=exact
        )[0]

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 5,
        mode: Mode = "hybrid",
        doc_id: str | Sequence[str] | None = None,
        version: str | Sequence[str] | None = None,
        as_of: dt.date | None = None,
        include_revoked: bool = False,
        *,
        exact: bool = False,
    ) -> list[list[Hit]]:
        """`search` for many queries, embedding them in one batch (for evaluations)."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} must be one of {list(MODES)}")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        queries = list(queries)
        tbl = self._open()
        if tbl is None or not queries:
            return [[] for _ in queries]
        where = self._where(tbl, doc_id, version, as_of or dt.date.today(), include_revoked)
        n = k if mode != "hybrid" else max(CANDIDATES_PER_K * k, MIN_CANDIDATES)
        if mode == "fts":
            return [self._fts(tbl, q, where, n, strict=True)[:k] for q in queries]
        # hybrid: the full-text queries run on another thread while the queries are
        # embedded and the vector queries run (LanceDB releases the GIL)
        fts = (
            [_RETRIEVERS.submit(self._fts, tbl, q, where, n, False) for q in queries]
            if mode == "hybrid"
            else []
        )
        vectors = self.embedder.embed_queries(queries)
        results: list[list[Hit]] = []
        for i in range(len(queries)):
            found = self._vector(tbl, vectors[i], where, n, exact)
            if mode == "hybrid":
                results.append(
                    _rrf(
                        {"vector": found, "fts": fts[i].result()},
                        k,
                        {"vector": self.vector_weight},
                    )
                )
            else:
                results.append(found[:k])
        return results

    def _versions(self, tbl: Any) -> dict[str, _VersionRow]:
        """Each version in the table with its doc id, version name, status and validity
        (the same on every row of a version: a version is written in one commit), read
        once per table state."""
        state = (int(tbl.version), int(tbl.count_rows()))
        if self._versions_cache[0] != state:
            rows = tbl.search().select(list(_VersionRow._fields)).limit(None).to_arrow()
            unique = rows.group_by(list(_VersionRow._fields)).aggregate([]).to_pylist()
            self._versions_cache = (
                state,
                {row["partition_key"]: _VersionRow(**row) for row in unique},
            )
        return self._versions_cache[1]

    def _where(
        self,
        tbl: Any,
        doc_id: str | Sequence[str] | None,
        version: str | Sequence[str] | None,
        day: dt.date,
        include_revoked: bool,
    ) -> str | None:
        """The filter of a search (`filter_sql`, minus the versions a newer version in
        force on `day` replaces), or None when it would keep every row of the table: a
        filter costs a pass over the table's filter columns at each query (~10 ms at
        100k rows), and the table of a live lake usually holds only what search serves.

        Versions replaced by a newer one in force that day are there only with the
        history setting: searched as of a date, a document answers from the version in
        force that day, never from two.
        """
        versions = self._versions(tbl)
        starts = {k: v.valid_from for k, v in versions.items() if v.status == "active"}
        replaced = set(superseded(starts, day))
        docs = {doc_id} if isinstance(doc_id, str) else set(doc_id or ())
        names = {version} if isinstance(version, str) else set(version or ())
        keeps_all = not replaced and all(
            (include_revoked or v.status == "active")
            and (v.valid_from is None or v.valid_from <= day)
            and (v.valid_to is None or v.valid_to >= day)
            and (doc_id is None or v.doc_id in docs)
            and (version is None or v.version in names)
            for v in versions.values()
        )
        if keeps_all:
            return None
        where = self.filter_sql(doc_id, version, day, include_revoked)
        if replaced:
            listed = ", ".join(f"'{key}'" for key in sorted(replaced))
            where += f" AND partition_key NOT IN ({listed})"
        return where

    @staticmethod
    def filter_sql(
        doc_id: str | Sequence[str] | None = None,
        version: str | Sequence[str] | None = None,
        as_of: dt.date | None = None,
        include_revoked: bool = False,
    ) -> str:
        """The SQL filter for status, validity on `as_of` (default today), doc and version
        (each one name or several: any of them)."""
        as_of = as_of or dt.date.today()
        day = _sql_date(as_of)
        parts = [
            f"(valid_from IS NULL OR valid_from <= {day})",
            f"(valid_to IS NULL OR valid_to >= {day})",
        ]
        if not include_revoked:
            parts.insert(0, "status = 'active'")
        for column, value in (("doc_id", doc_id), ("version", version)):
            if value is not None:
                values = [value] if isinstance(value, str) else sorted(set(value))
                listed = ", ".join(f"'{validate_key_part(v, column)}'" for v in values)
                parts.append(f"{column} IN ({listed})" if values else "false")
        return " AND ".join(parts)

    def _vector_query(
        self, tbl: Any, vector: np.ndarray, where: str | None, n: int, exact: bool
    ) -> Any:
        """Cosine top `n`: exact scan, or the HNSW index (when there is one) with `ef` and
        a re-ranking on the stored vectors; rows the index does not cover yet are
        scanned in both cases. The knobs are no-ops on a table without the index."""
        query = (
            tbl.search(vector, query_type="vector", vector_column_name="vector")
            .distance_type("cosine")
            .select([*HIT_COLUMNS, "_distance"])
            .limit(n)
        )
        if where is not None:
            query = query.where(where, prefilter=True)
        if exact or self.ann_min_rows == 0:
            return query.bypass_vector_index()
        # the index hands n x ANN_REFINE candidates to the re-ranking: ef must cover them
        return query.ef(max(self.ann_ef, n * ANN_REFINE)).refine_factor(ANN_REFINE)

    def _vector(
        self, tbl: Any, vector: np.ndarray, where: str | None, n: int, exact: bool
    ) -> list[Hit]:
        rows = self._vector_query(tbl, vector, where, n, exact).to_list()
        rows.sort(key=lambda r: _tie_order(1.0 - float(r["_distance"]), r))
        return [
            Hit.from_row(row, 1.0 - float(row["_distance"]), "vector", rank)
            for rank, row in enumerate(rows, start=1)
        ]

    @staticmethod
    def _fts(tbl: Any, query: str, where: str | None, n: int, strict: bool) -> list[Hit]:
        terms = fts_terms(query)
        if not terms:
            return []
        try:
            search = tbl.search(terms, query_type="fts", fts_columns="text")
            if where is not None:
                search = search.where(where, prefilter=True)
            rows = search.select([*HIT_COLUMNS, "_score"]).limit(n).to_list()
        except Exception as exc:  # no index yet, or being replaced by another writer
            if "index" not in str(exc).lower() and strict:
                raise
            log.warning("full-text search unavailable on %s: %s", tbl.name, exc)
            return []
        rows.sort(key=lambda r: _tie_order(float(r["_score"]), r))
        return [
            Hit.from_row(row, float(row["_score"]), "fts", rank)
            for rank, row in enumerate(rows, start=1)
        ]
