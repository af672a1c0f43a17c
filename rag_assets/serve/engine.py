"""What `trecho serve` and the MCP server answer, independent of the protocol.

One `Engine` per process: the embedding model is loaded once, and every request reads
the lake's current state, so a long-running server follows the pipeline without a
restart:

- the active model is read at each request (`read_active`): when a backfill completes and
  search switches to the new model's table, the next request embeds with the new model
  and reads its table (the model is loaded on first use, then kept);
- the table is opened afresh at each request (`Index` never keeps a handle), so new
  versions and revocations written by other processes are seen at once; a version is
  written in one LanceDB commit, so no request ever sees half of one;
- the catalog of versions (for `/documents` and the document/version checks) is read from
  the table and cached per table version, so it is re-read only after a write.

Every check of a request lives here, and fails with a `RequestError` whose message says
what is wrong, so HTTP and MCP refuse the same requests with the same words.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from rag_assets.core.embedding import Embedder
from rag_assets.core.lake import Lake
from rag_assets.core.search import MODES, Index, active_embedder, read_active
from rag_assets.core.service import hit_rows
from rag_assets.core.tokens import TokenCounter

CATALOG_COLUMNS = ["partition_key", "doc_id", "version", "title", "status", "valid_from"]


class RequestError(ValueError):
    """A request the server refuses; the message says what is wrong.

    `status` is the HTTP status it maps to: 422 for a malformed or out-of-range value,
    404 for a document or version the index does not hold.
    """

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (`trecho serve --max-k/--max-query-chars/--max-body`)."""

    max_k: int = 50
    max_query_chars: int = 2000
    max_body_bytes: int = 64 * 1024


@dataclass(frozen=True)
class Catalog:
    """The versions one table holds: one row each, with title, status, validity, chunks."""

    versions: list[dict[str, Any]]

    @property
    def doc_ids(self) -> set[str]:
        """Every document id with at least one version in the table."""
        return {v["doc_id"] for v in self.versions}


class Engine:
    """Searches and lists a lake's index for a long-running server (see the module doc)."""

    def __init__(
        self, lake: Lake, db_uri: str | os.PathLike[str], configured: Embedder, limits: Limits
    ) -> None:
        self.lake = lake
        self.db_uri = str(db_uri)
        self.configured = configured
        self.limits = limits
        self._indexes: dict[str, Index] = {}
        self._catalogs: dict[str, tuple[int, Catalog]] = {}
        self._lock = threading.Lock()

    # -- the lake's current state ------------------------------------------------------

    def index(self) -> Index:
        """The index search uses now: the active model's table (the configured model's
        before anything was indexed). One `Index` (and model) per model id, kept."""
        embedder = active_embedder(self.db_uri, self.configured)
        with self._lock:
            if embedder.model_id not in self._indexes:
                self._indexes[embedder.model_id] = Index(self.db_uri, embedder)
            return self._indexes[embedder.model_id]

    def warm_up(self) -> Index:
        """Load the active model and run one query, so the first request is not slow."""
        index = self.index()
        index.embedder.embed_queries(["warm-up"])
        if index.exists():
            index.search("warm-up", k=1)
        return index

    def catalog(self, index: Index) -> Catalog:
        """The versions the table holds, read again only after the table changed."""
        tbl = index._open()
        if tbl is None:
            return Catalog([])
        version = int(tbl.version)
        cached = self._catalogs.get(index.table_name)
        if cached is not None and cached[0] == version:
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
        today = dt.date.today()
        versions = []
        for row in grouped.iter_rows(named=True):
            start, end = row["valid_from"], row["valid_to"]
            row["in_force"] = (
                row["status"] == "active"
                and (start is None or start <= today)
                and (end is None or end >= today)
            )
            for key in ("valid_from", "valid_to"):
                row[key] = row[key].isoformat() if row[key] is not None else None
            versions.append(row)
        catalog = Catalog(versions)
        self._catalogs[index.table_name] = (version, catalog)
        return catalog

    # -- requests ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        mode: str = "hybrid",
        documents: Sequence[str] | None = None,
        versions: Sequence[str] | None = None,
        as_of: str | dt.date | None = None,
        expand: bool = False,
    ) -> dict[str, Any]:
        """The `k` best chunks for `query`, each as `trecho search --json` gives it, with
        the model and date the search used. Raises RequestError for a bad request."""
        query = self._check_query(query)
        if not isinstance(k, int) or not 1 <= k <= self.limits.max_k:
            raise RequestError(f"k must be between 1 and {self.limits.max_k}, got {k!r}")
        if mode not in MODES:
            raise RequestError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        day = self._check_date(as_of)
        index = self.index()
        catalog = self.catalog(index)
        docs = self._check_documents(catalog, documents)
        wanted = self._check_versions(catalog, docs, versions)
        if mode != "fts":
            self._check_tokens(index.embedder, query)
        hits = index.search(query, k=k, mode=mode, doc_id=docs, version=wanted, as_of=day)  # type: ignore[arg-type]
        return {
            "query": query,
            "mode": mode,
            "k": k,
            "as_of": (day or dt.date.today()).isoformat(),
            "model": index.embedder.model_id,
            "hits": hit_rows(self.lake, hits, expand),
        }

    def documents(self) -> dict[str, Any]:
        """Every version search can answer from, with status, validity and chunk count."""
        index = self.index()
        return {"model": index.embedder.model_id, "versions": self.catalog(index).versions}

    def health(self) -> dict[str, Any]:
        """The active model, its table's rows and index state, and the lake."""
        index = self.index()
        ref = read_active(self.db_uri)
        exists = index.exists()
        stats = index.index_stats() if exists else None
        return {
            "status": "ok" if exists else "empty",
            "lake": str(self.lake.root),
            "model": index.embedder.model,
            "model_id": index.embedder.model_id,
            "active_since": ref.switched_at if ref is not None else None,
            "table": index.table_name,
            "rows": stats.rows if stats is not None else 0,
            "versions": len(self.catalog(index).versions) if exists else 0,
            "index": stats.summary() if stats is not None else "no table yet",
        }

    # -- checks -------------------------------------------------------------------------

    def _check_query(self, query: object) -> str:
        if not isinstance(query, str) or not query.strip():
            raise RequestError("query is empty: give the question to search for")
        if len(query) > self.limits.max_query_chars:
            raise RequestError(
                f"query is {len(query)} characters long; the limit is "
                f"{self.limits.max_query_chars}",
                status=413,
            )
        return query.strip()

    @staticmethod
    def _check_date(as_of: str | dt.date | None) -> dt.date | None:
        if as_of is None or isinstance(as_of, dt.date):
            return as_of
        try:
            return dt.date.fromisoformat(as_of)
        except (TypeError, ValueError):
            raise RequestError(f"as_of {as_of!r} is not a date (YYYY-MM-DD)") from None

    @staticmethod
    def _check_documents(catalog: Catalog, documents: Sequence[str] | None) -> list[str] | None:
        if documents is None:
            return None
        known = catalog.doc_ids
        unknown = [d for d in documents if d not in known]
        if unknown:
            raise RequestError(
                f"unknown document {', '.join(map(repr, unknown))}; the index holds "
                f"{', '.join(sorted(known)) or 'nothing yet'} (GET /documents)",
                status=404,
            )
        return list(documents)

    @staticmethod
    def _check_versions(
        catalog: Catalog, docs: list[str] | None, versions: Sequence[str] | None
    ) -> list[str] | None:
        if versions is None:
            return None
        held = {v["version"] for v in catalog.versions if docs is None or v["doc_id"] in docs}
        unknown = [v for v in versions if v not in held]
        if unknown:
            scope = f" of {', '.join(docs)}" if docs else ""
            raise RequestError(
                f"unknown version {', '.join(map(repr, unknown))}{scope}; the index holds "
                f"{', '.join(sorted(held)) or 'none'}",
                status=404,
            )
        return list(versions)

    @staticmethod
    def _check_tokens(embedder: Embedder, query: str) -> None:
        counter = TokenCounter(
            embedder.info.tokenizer, embedder.max_tokens, embedder.effective_query_prefix
        )
        tokens = counter.count(query)
        if tokens > embedder.max_tokens:
            raise RequestError(
                f"query is {tokens} tokens long; model {embedder.model_id} reads at most "
                f"{embedder.max_tokens} (the rest would be ignored): shorten it, or use "
                "mode fts"
            )
