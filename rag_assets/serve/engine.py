"""What `trecho serve` and the MCP server answer, independent of the protocol.

One `Engine` per process: the embedding model is loaded once, and every request reads
the lake's current state, so a long-running server follows the pipeline without a
restart:

- the tables are kept open (`FollowedTable`, core/index/followed.py): each request first
  checks whether a table changed (for a local table an `os.stat` of its `_versions`
  folder, microseconds; after a change, and on an object store always, LanceDB is asked
  for the latest committed version), and only when it changed opens a handle on the new
  version. A handle stays on the version it was opened at and is replaced, never moved,
  so a request that is running keeps reading one version while the next one reads the
  newer: new versions and revocations written by other processes are seen by the next
  request, and since a version is written in one LanceDB commit, no request ever sees
  half of one;
- the active model is followed the same way: when a backfill completes and search
  switches to the new model's table, the next request embeds with the new model and
  reads its table (the model is loaded on first use, then kept). The switch drops the
  old table a grace period later (`DROP_GRACE_S`); a request still reading it then is
  asked again, once, of the new active table (`TableDropped`): no request fails at a
  switch;
- the catalog of versions (for `/documents` and the document/version checks) is read from
  the table and cached per table version and day (which versions are in force depends
  on the day), so it is re-read only after a write or when the day changes;
- the vectors of recent queries are remembered (`query_cache`, an LRU per model), so a
  repeated question skips the embedding (the model's cost, most of a search).

A request comes checked (`rag_assets.core.request.search_request`, at each edge: HTTP,
MCP, the CLI, the client); what only the index can refuse (`check_in_index`) fails with a
`RequestError` whose message says what is wrong, so the CLI, HTTP and MCP refuse the same
requests with the same words.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl

from rag_assets.core.embedding import Embedder, RememberingEmbedder
from rag_assets.core.index import (
    ACTIVE_TABLE,
    Catalogue,
    FollowedIndex,
    Index,
    ModelRef,
    TableDropped,
    embedder_for,
    hit_rows,
    read_latest,
    ref_in,
)
from rag_assets.core.lake import Lake
from rag_assets.core.request import Limits, RequestError, SearchRequest, check_in_index
from rag_assets.core.rules import searchable

T = TypeVar("T")
CATALOG_COLUMNS = ["partition_key", "doc_id", "version", "title", "status", "valid_from"]


@dataclass(frozen=True)
class Catalog:
    """The versions one table holds: one row each, with title, status, validity, chunks."""

    versions: list[dict[str, Any]]

    @property
    def doc_ids(self) -> set[str]:
        """Every document id with at least one version in the table."""
        return {v["doc_id"] for v in self.versions}


@dataclass(eq=False)
class Engine:
    """Searches and lists a lake's index for a long-running server (see the module doc)."""

    def __init__(
        self,
        lake: Lake,
        db_uri: str | os.PathLike[str],
        configured: Embedder,
        limits: Limits,
        query_cache: int = 1024,
        index_options: Mapping[str, Any] | None = None,
    ) -> None:
        """`query_cache`: how many distinct queries' vectors to remember per model (0:
        none); `index_options`: `Index`'s keyword arguments (the configured ANN settings
        and vector weight)."""
        self.lake = lake
        self.index_options = dict(index_options or {})
        self.db_uri = str(db_uri)
        self.configured = configured
        self.limits = limits
        self.query_cache = query_cache
        self._embedders: dict[str, RememberingEmbedder] = {}
        self._indexes: dict[str, FollowedIndex] = {}
        self._catalogs: dict[str, tuple[tuple[int, dt.date], Catalog]] = {}
        self._lock = threading.Lock()
        self._pointer = Catalogue(self.db_uri).follow(ACTIVE_TABLE)
        self._active: tuple[int, ModelRef | None] = (-2, None)

    # -- the lake's current state ------------------------------------------------------

    def active(self) -> ModelRef | None:
        """The active model (`core.index.read_active`), re-read only when its pointer
        table changed; None before anything was indexed.

        When the pointer changes, the tables are followed afresh: a model's table may
        have been dropped and rebuilt meanwhile (a switch drops the old model's table;
        switching back re-creates it), and a rebuilt table's version numbers start again,
        so its version alone cannot tell it from the table a kept handle reads."""
        tbl, version = self._pointer.snapshot()
        with self._lock:
            if self._active[0] != version:
                self._active = (version, ref_in(tbl))
                self._indexes.clear()
                self._catalogs.clear()
            return self._active[1]

    def index(self) -> FollowedIndex:
        """The index search uses now: the active model's table (the configured model's
        before anything was indexed). Each model is loaded once and kept."""
        ref = self.active()
        model_id = ref.model_id if ref is not None else self.configured.model_id
        with self._lock:
            if model_id not in self._indexes:
                embedder = self._embedders.get(model_id)
                if embedder is None:
                    base = embedder_for(ref, self.configured)
                    embedder = RememberingEmbedder.of(base, self.query_cache)
                    self._embedders[model_id] = embedder
                self._indexes[model_id] = FollowedIndex(self.db_uri, embedder, **self.index_options)
            return self._indexes[model_id]

    def warm_up(self) -> Index:
        """Load the active model and run one query, so the first request is not slow."""
        index = self.index()
        index.embedder.embed_queries(["warm-up"])
        index.embedder.record_runtime(self.lake.runtime_dir, "queries")
        if index.exists():
            index.search(SearchRequest(query="warm-up", k=1))
        return index

    def catalog(self, index: FollowedIndex) -> Catalog:
        """The versions the table holds, read again only after the table changed (or the
        day did: `in_force` is as of today)."""
        with index.pinned() as (tbl, version):
            return self._catalog(index, tbl, version)

    def _catalog(self, index: FollowedIndex, tbl: Any | None, version: int) -> Catalog:
        """`catalog` of the pinned version, read again from the latest one when a purge
        deleted its files meanwhile (as a search is, `Index.search_many`)."""
        return read_latest(
            (tbl, version),
            lambda pinned: self._read_catalog(index, *pinned),
            index.refresh,
            table=lambda pinned: pinned[0],
        )

    def _read_catalog(self, index: FollowedIndex, tbl: Any | None, version: int) -> Catalog:
        if tbl is None:
            return Catalog([])
        today = dt.date.today()  # `in_force` depends on it: a server outlives a day
        cached = self._catalogs.get(index.table_name)
        if cached is not None and cached[0] == (version, today):
            return cached[1]
        rows = pl.from_arrow(
            tbl.search().select([*CATALOG_COLUMNS, "valid_to"]).limit(None).to_arrow()
        )
        assert isinstance(rows, pl.DataFrame)
        grouped = (
            rows.group_by(CATALOG_COLUMNS + ["valid_to"])
            .agg(pl.len().alias("chunks"))
            .sort("partition_key")
        )
        versions = []
        for row in grouped.iter_rows(named=True):
            row["in_force"] = searchable(row["status"], row["valid_from"], row["valid_to"], today)
            for key in ("valid_from", "valid_to"):
                row[key] = row[key].isoformat() if row[key] is not None else None
            versions.append(row)
        catalog = Catalog(versions)
        self._catalogs[index.table_name] = ((version, today), catalog)
        return catalog

    # -- requests ----------------------------------------------------------------------

    def search(self, request: SearchRequest) -> dict[str, Any]:
        """The hits of a request (built and checked at the edge by `search_request`),
        each as `trecho search --json` gives it, with the model, date and min_score the
        search used (`min_score` None: the index's, `Index.min_score_for`). Raises
        RequestError for what only the index can refuse (`check_in_index`), or for a
        request naming a model this server does not answer from."""
        return self._on_active(lambda index: self._search(index, request))

    def _search(self, index: FollowedIndex, request: SearchRequest) -> dict[str, Any]:
        """`search` on one model's index."""
        model_id = index.embedder.model_id
        if request.model is not None and request.model not in (model_id, index.embedder.model):
            raise RequestError(
                f"model {request.model!r}: this server answers from {model_id} (the model "
                "search uses); leave model out, or ask a server of that model"
            )
        with index.pinned() as (tbl, version):
            self._check_held(index, tbl)
            catalog = self._catalog(index, tbl, version)
            held = [(v["doc_id"], v["version"]) for v in catalog.versions]
            floor = index.min_score_for(request.mode, request.min_score)
            request = check_in_index(request, held, index.embedder, floor)
            hits = index.search(request)
        return {
            "query": request.query,
            "mode": request.mode,
            "k": request.k,
            "as_of": (request.as_of or dt.date.today()).isoformat(),
            "model": model_id,
            "min_score": request.min_score,
            "hits": hit_rows(self.lake, hits, request.expand),
        }

    def _on_active(self, answer: Callable[[FollowedIndex], T]) -> T:
        """`answer` from the active model's index, asked once more of the index active
        then when the table it read was dropped under it (`TableDropped`: a switch drops
        the old model's table), so a request that spans a switch is answered from the
        new table instead of failing."""
        try:
            return answer(self.index())
        except TableDropped:
            return answer(self.index())

    def _check_held(self, index: FollowedIndex, tbl: Any | None) -> None:
        """Raise TableDropped when the table pinned for a request is gone because search
        moved to another model's meanwhile (not: nothing indexed yet)."""
        if tbl is None and self._moved_on(index):
            raise TableDropped(f"{index.table_name} was dropped: search moved on")

    def _moved_on(self, index: FollowedIndex) -> bool:
        """Whether search now uses another model's table than `index`'s."""
        ref = self.active()
        return ref is not None and ref.model_id != index.embedder.model_id

    def documents(self) -> dict[str, Any]:
        """Every version search can answer from, with status, validity and chunk count."""
        return self._on_active(
            lambda index: {"model": index.embedder.model_id, "versions": self._listed(index)}
        )

    def _listed(self, index: FollowedIndex) -> list[dict[str, Any]]:
        """The catalog's versions of one model's index (`documents`)."""
        with index.pinned() as (tbl, version):
            self._check_held(index, tbl)
            return self._catalog(index, tbl, version).versions

    def health(self) -> dict[str, Any]:
        """The active model, its table's rows and index state, and the lake."""
        return self._on_active(self._health)

    def _health(self, index: FollowedIndex) -> dict[str, Any]:
        """`health` of one model's index, on one pinned version of its table."""
        ref = self.active()
        with index.pinned() as (tbl, version):
            self._check_held(index, tbl)
            exists = tbl is not None
            try:
                stats = index.index_stats() if exists else None
                versions = len(self._catalog(index, tbl, version).versions) if exists else 0
            except Exception as exc:  # the table dropped under the read: a switch
                if self._moved_on(index):
                    raise TableDropped(f"{index.table_name} was dropped: search moved on") from exc
                raise
        return {
            "status": "ok" if exists else "empty",
            "lake": str(self.lake.root),
            "model": index.embedder.model,
            "model_id": index.embedder.model_id,
            "query_engine": index.embedder.query_engine,
            "query_fallback": index.embedder.query_path().reason,
            "active_since": ref.switched_at if ref is not None else None,
            "table": index.table_name,
            "rows": stats.rows if stats is not None else 0,
            "versions": versions,
            "index": stats.summary() if stats is not None else "no table yet",
            "query_cache": index.embedder.stats(),
        }
