"""The LanceDB store and the search API: vector, full-text and hybrid, with filters.

One LanceDB table per embedding model (`chunks__<model_id>`), holding the chunk columns
(schemas.CHUNKS) plus `vector`, `status`, `valid_from`, `valid_to` and `title`
(docs/design.md). A document version (partition) is replaced in one commit with
`merge_insert`, so a reader never sees half of a version.

The package, one module per job: `store` (table per model, schema, opening), `locking`
(write lock, commit retries), `active` (the active-model pointer), `upkeep` (full-text and
vector index upkeep), `retrieval` (vector / full-text / hybrid search), `fusion` (rank
fusion of the retrievers' lists), `hits` (hits as rows,
parent text), `citations` (cited articles) and `index` (`Index`, which writes a model's
table and inherits upkeep and retrieval).
Names are re-exported here; a tunable constant (`INDEX_LAG_ROWS`...) is read from the
module that defines it. A search is asked as a `SearchRequest` (`rag_assets.core.request`,
re-exported here), built and checked once at the edge, and run as it is.

`Index` is the one class of the project assembled from mixins, and the documented
exception to composition: `ModelTable` (store: the table, its handle, opening it again)
is the base of `IndexUpkeep` (upkeep) and `Retrieval` (retrieval), which `Index` joins.
The three share one table handle, its cached state and the write lock, which a
composition would pass between three objects at every call; the mixins keep each job in
its own module, and none is used alone.

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
- Hybrid search is reciprocal rank fusion computed here, not LanceDB's reranker, so
  each hit says which retriever found it and at what rank; the fusion constant and the
  vector list's weight depend on the model (`default_rrf_k`, `default_vector_weight`:
  k = 10 and weight 2 for the bundled e5, k = 60 and weight 1 otherwise). A query that
  cites articles (`art. 37`) adds a third list, the chunks under those articles by
  cosine, weighed like the vector list (`rag_assets.core.index.citations`).
  The fused score is a rank score (the best answer to any question gets about the same),
  so each hit also carries its real similarities, `cosine` (in hybrid also for a chunk
  only full text found, from its stored vector) and `bm25`; a served search drops hits
  whose cosine is below `min_score` (by model, `default_min_score`; TRECHO_MIN_SCORE), so
  a question the documents do not answer gets no hit (docs/eval.md, abstention).
- Vector search is exact below `ann_min_rows` rows (default 50k; `TRECHO_ANN_MIN_ROWS`,
  0 disables): there the scan costs tens of ms. From there on the table gets an
  IVF_HNSW_SQ index (one partition, cosine), searched with `ef` = `ann_ef` (default
  200, growing with the table past 100k rows to 2,000 at 1M, `ann_ef_for`; raised to
  cover the candidates) and the top `k x ANN_REFINE` candidates
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
- Hybrid search reads each retriever's candidates as keys (`KEY_COLUMNS`), scores and
  LanceDB row ids, fuses them, and only then reads the hit columns (`HIT_COLUMNS`) of
  the k fused hits, by row id on the handle the retrievers read (one table version: the
  same rows). A LanceDB read costs per column: at 100k rows the 40 vector candidates
  take 11 ms with keys against 20 with every column, full text 9 against 16, and the
  10 hits' columns 8 ms (bench/serve.py part 2). Vector and full-text modes read only k
  rows, where a second read would cost what it saves, so they read the columns at once.
  LanceDB's own hybrid query with this fusion as its reranker (one native call) measured
  slower: `Engine.search` ÷ it 0.71 at 100k rows (bench/serve.py part 1, `lancedb hybrid
  + trecho fusion`), since it embeds the question before either retriever starts and
  reads every hit column of 40 candidates a retriever; served search ÷ LanceDB's own
  hybrid query (k rows a retriever, its RRF) was 0.68 to 0.98 over three runs.
- Writes to a table (create, merge, delete, index build) are serialized by a file lock
  next to it, because LanceDB 0.40 alone loses rows when two processes create the table
  at once and duplicates rows when two runs merge the same partition at once. Commit
  conflicts that remain (object stores, other writers) are retried with backoff.
"""

from __future__ import annotations

from rag_assets.core.index.active import (
    ACTIVE_TABLE,
    ModelRef,
    active_embedder,
    chunks_folder_for,
    committed_keys,
    embedder_for,
    lake_model,
    pending_switch,
    read_active,
    read_target,
    ref_in,
    write_active,
    write_target,
)
from rag_assets.core.index.cache import (
    CACHE_PREFIX,
    LOOKUP_BATCH,
    EmbeddingCache,
    drop_cache,
    embed_cached,
    hashes_of,
    unused_entries,
)
from rag_assets.core.index.catalogue import (
    Catalogue,
    Removal,
    delete_partition_everywhere,
    purge_old_versions,
)
from rag_assets.core.index.empty import no_results
from rag_assets.core.index.followed import FollowedIndex, FollowedTable
from rag_assets.core.index.fusion import RRF_K, rrf
from rag_assets.core.index.hits import Hit, hit_rows
from rag_assets.core.index.index import Index, Stamp
from rag_assets.core.index.locking import retry_commit, table_lock, table_lock_path
from rag_assets.core.index.retrieval import (
    ANN_REFINE,
    CANDIDATES_PER_K,
    MAX_QUERY_TERMS,
    MIN_CANDIDATES,
    fts_terms,
)
from rag_assets.core.index.scoring import (
    MIN_SCORE_E5,
    MIN_SCORE_MINILM,
    RRF_K_E5,
    VECTOR_WEIGHT_E5,
    default_min_score,
    default_rrf_k,
    default_vector_weight,
)
from rag_assets.core.index.store import (
    EXTRA_COLUMNS,
    HIT_COLUMNS,
    KEY_COLUMNS,
    NoLongerLive,
    TableDropped,
    model_tables,
    read_latest,
    store_schema,
    table_name,
    table_or_none,
)
from rag_assets.core.index.upkeep import (
    ANN_EF,
    ANN_MAX_SEGMENTS,
    ANN_MIN_ROWS,
    FTS_LANGUAGE,
    INDEX_LAG_ROWS,
    IndexState,
    IndexStats,
    fts_config,
    upkeep_tables,
)
from rag_assets.core.request import (
    MODES,
    Limits,
    Mode,
    RequestError,
    SearchRequest,
    check_in_index,
    search_request,
)

__all__ = [
    "Catalogue",
    "FollowedIndex",
    "FollowedTable",
    "Removal",
    "delete_partition_everywhere",
    "purge_old_versions",
    "Stamp",
    "ACTIVE_TABLE",
    "ANN_EF",
    "ANN_MAX_SEGMENTS",
    "ANN_MIN_ROWS",
    "ANN_REFINE",
    "CACHE_PREFIX",
    "CANDIDATES_PER_K",
    "EXTRA_COLUMNS",
    "EmbeddingCache",
    "FTS_LANGUAGE",
    "HIT_COLUMNS",
    "Hit",
    "INDEX_LAG_ROWS",
    "Index",
    "IndexState",
    "IndexStats",
    "KEY_COLUMNS",
    "LOOKUP_BATCH",
    "Limits",
    "MAX_QUERY_TERMS",
    "MIN_CANDIDATES",
    "MODES",
    "Mode",
    "ModelRef",
    "NoLongerLive",
    "RRF_K",
    "RRF_K_E5",
    "RequestError",
    "SearchRequest",
    "TableDropped",
    "VECTOR_WEIGHT_E5",
    "active_embedder",
    "check_in_index",
    "chunks_folder_for",
    "committed_keys",
    "default_min_score",
    "default_rrf_k",
    "default_vector_weight",
    "drop_cache",
    "embed_cached",
    "embedder_for",
    "fts_config",
    "fts_terms",
    "hashes_of",
    "hit_rows",
    "model_tables",
    "no_results",
    "read_active",
    "read_target",
    "lake_model",
    "pending_switch",
    "read_latest",
    "ref_in",
    "retry_commit",
    "rrf",
    "search_request",
    "store_schema",
    "table_lock",
    "table_lock_path",
    "table_name",
    "table_or_none",
    "unused_entries",
    "upkeep_tables",
    "write_active",
    "write_target",
    "MIN_SCORE_E5",
    "MIN_SCORE_MINILM",
]
