"""Retrieval: vector, full-text and hybrid search (reciprocal rank fusion), with filters."""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from rag_assets.core.index.citations import cited_articles, path_filter
from rag_assets.core.index.fusion import Fused, Ranked, rrf, tie_order
from rag_assets.core.index.hits import Hit, above_min_score, fetch_hits, ranked_hits
from rag_assets.core.index.store import (
    HIT_COLUMNS,
    KEY_COLUMNS,
    ModelTable,
    read_latest,
    vanished,
)
from rag_assets.core.index.upkeep import ann_ef_for
from rag_assets.core.lake import validate_key_part
from rag_assets.core.request import SearchRequest
from rag_assets.core.rules import is_active, searchable, searchable_sql, superseded

log = logging.getLogger(__name__)

CANDIDATES_PER_K = 4
"""Hybrid search fetches this many times `k` candidates from each retriever."""
MIN_CANDIDATES = 20
"""...and at least this many, so fusion has material even for k=1."""
MAX_QUERY_TERMS = 64
ANN_REFINE = 2
"""Candidates re-ranked on the stored vectors per hit wanted: exact scores and order.
At 100k rows 2 finds what 5 finds (the same recall of the exact scan's top 40 and top
10, bench/serve.py part 3) in less time: `ef` is what recall needs."""
_RETRIEVERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trecho-fts")
"""Runs hybrid search's full-text queries beside the embedding and vector queries."""


def fts_terms(query: str) -> str:
    """The words of a query, without punctuation or operators, for full-text search.

    LanceDB 0.40's native FTS does not parse query syntax, but stripping everything but
    word characters keeps `?`, `:`, quotes and the like from ever mattering.
    """
    return " ".join(re.findall(r"\w+", query)[:MAX_QUERY_TERMS])


class VersionRow(NamedTuple):
    """What the search filter looks at, per version (see `Index._where`)."""

    partition_key: str
    doc_id: str
    version: str
    status: str
    valid_from: dt.date | None
    valid_to: dt.date | None


class Retrieval(ModelTable):
    """The `Index` methods that search: vector, full-text and hybrid, with filters."""

    ann_min_rows: int
    ann_ef: int
    ann_ef_grows: bool
    vector_weight: float
    min_score: float
    _versions_cache: tuple[tuple[int, int], dict[str, VersionRow]]
    _versions_seen: tuple[Any, tuple[tuple[int, int], dict[str, VersionRow]]] | None
    _where_cache: dict[tuple[Any, ...], str | None]

    def search(
        self, request: SearchRequest, *, exact: bool = False, include_revoked: bool = False
    ) -> list[Hit]:
        """The `request.k` best chunks for a request (`rag_assets.core.request`, checked
        where it was built), among active versions valid on `request.as_of`.

        `exact=True` scans every vector instead of using the vector index (evaluations:
        results that do not depend on the index); without an index it changes nothing.
        `request.min_score` drops the hits whose cosine is below it (so fewer than `k`,
        or none, may come back); None keeps them all, as does mode fts (no cosine): the
        served default is resolved at the edge (`check_in_index`, `min_score_for`).
        `include_revoked` also searches revoked versions (the lifecycle's tests).
        """
        return self.search_many([request], exact=exact, include_revoked=include_revoked)[0]

    def search_many(
        self,
        requests: Sequence[SearchRequest],
        *,
        exact: bool = False,
        include_revoked: bool = False,
    ) -> list[list[Hit]]:
        """`search` for many requests; those that differ only in their query share one
        batch of embeddings and one filter (evaluations)."""
        groups: dict[str, list[int]] = {}
        for i, request in enumerate(requests):
            groups.setdefault(request.model_dump_json(exclude={"query", "expand"}), []).append(i)
        answers: list[list[Hit]] = [[] for _ in requests]
        for members in groups.values():
            batch = [requests[i] for i in members]
            found = self._search_many(batch, exact, include_revoked)
            for i, hits in zip(members, found, strict=True):
                answers[i] = above_min_score(hits, requests[i].min_score)
        return answers

    def min_score_for(self, mode: str, given: float | None = None) -> float | None:
        """The `min_score` a served search applies: `given`, else this index's
        (`self.min_score`: TRECHO_MIN_SCORE, else the model's `default_min_score`); None
        in mode fts, which has no cosine (`SearchRequest` refuses one given there)."""
        if mode == "fts":
            return None
        return self.min_score if given is None else given

    def _search_many(
        self, requests: list[SearchRequest], exact: bool, include_revoked: bool
    ) -> list[list[Hit]]:
        """`search_many` of requests that differ only in their query, before `min_score`.

        A read may start on a table version whose files a purge then deletes (the purge
        keeps only the latest version: a revoked text must leave the disk): it is read
        again from the latest version (`read_latest`), so a search never fails
        because a newer version removed a file under it."""
        tbl = self.current_table()
        if tbl is None:
            return [[] for _ in requests]
        return read_latest(
            tbl, lambda t: self._search_on(t, requests, exact, include_revoked), self.reopen_table
        )

    def _search_on(
        self, tbl: Any, requests: list[SearchRequest], exact: bool, include_revoked: bool
    ) -> list[list[Hit]]:
        """`_search_many` on one table handle (one table version)."""
        first = requests[0]
        k, mode, queries = first.k, first.mode, [r.query for r in requests]
        day = first.as_of or dt.date.today()
        where = self._where(tbl, first.documents, first.versions, day, include_revoked)
        if mode == "fts":  # k rows: the hit columns come with them
            return [ranked_hits(self._fts(tbl, q, where, k, strict=True), "fts") for q in queries]
        if mode == "vector":
            vectors = self.embedder.embed_queries(queries)
            return [ranked_hits(self._vector(tbl, v, where, k, exact), "vector") for v in vectors]
        # hybrid: each retriever's candidates are read as keys, scores and row ids only, and
        # the hit columns for the fused top k alone; the full-text queries run on another
        # thread while the queries are embedded and the vector queries run (LanceDB
        # releases the GIL)
        n = max(CANDIDATES_PER_K * k, MIN_CANDIDATES)
        fts = [_RETRIEVERS.submit(self._fts, tbl, q, where, n, False, True) for q in queries]
        vectors = self.embedder.embed_queries(queries)
        answers: list[list[Fused]] = []
        for i, query in enumerate(queries):
            lists = {"vector": self._vector(tbl, vectors[i], where, n, exact, light=True)}
            lists["fts"] = fts[i].result()
            cited = path_filter(cited_articles(query))
            if cited is not None:  # the cited articles' chunks, by cosine to the query
                within = cited if where is None else f"{where} AND {cited}"
                lists["citation"] = self._vector(tbl, vectors[i], within, n, exact, light=True)
            weight = self.vector_weight
            answers.append(rrf(lists, k, {"vector": weight, "citation": weight}, self.rrf_k))
        return fetch_hits(tbl, answers, vectors)

    def _versions(self, tbl: Any) -> dict[str, VersionRow]:
        """Each version in the table with its doc id, version name, status and validity
        (the same on every row of a version: a version is written in one commit), read
        once per table state."""
        return self._state(tbl)[1]

    def _state(self, tbl: Any) -> tuple[tuple[int, int], dict[str, VersionRow]]:
        """(version, rows) of the table `tbl` reads, and `_versions`; asked of LanceDB
        once per handle (a handle reads one version: a server keeps its handle)."""
        seen = self._versions_seen
        if seen is not None and seen[0] is tbl:
            return seen[1]
        state = (int(tbl.version), int(tbl.count_rows()))
        cached = self._versions_cache
        if cached[0] != state:
            rows = tbl.search().select(list(VersionRow._fields)).limit(None).to_arrow()
            unique = rows.group_by(list(VersionRow._fields)).aggregate([]).to_pylist()
            cached = (state, {row["partition_key"]: VersionRow(**row) for row in unique})
            self._versions_cache = cached
        self._versions_seen = (tbl, cached)
        return cached

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
        state, versions = self._state(tbl)
        key = (
            state,
            doc_id if doc_id is None or isinstance(doc_id, str) else tuple(doc_id),
            version if version is None or isinstance(version, str) else tuple(version),
            day,
            include_revoked,
        )
        try:
            return self._where_cache[key]
        except KeyError:  # (not `in` then get: another thread may clear it between)
            pass
        where = self._filter(versions, doc_id, version, day, include_revoked)
        if len(self._where_cache) >= 256:
            self._where_cache.clear()
        self._where_cache[key] = where
        return where

    def _filter(
        self,
        versions: dict[str, VersionRow],
        doc_id: str | Sequence[str] | None,
        version: str | Sequence[str] | None,
        day: dt.date,
        include_revoked: bool,
    ) -> str | None:
        """`_where`, computed (`_where` keeps it per table state and request filters)."""
        starts = {k: v.valid_from for k, v in versions.items() if is_active(v.status)}
        replaced = set(superseded(starts, day))
        docs = {doc_id} if isinstance(doc_id, str) else set(doc_id or ())
        names = {version} if isinstance(version, str) else set(version or ())
        keeps_all = not replaced and all(
            searchable(v.status, v.valid_from, v.valid_to, day, include_revoked)
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
        """The SQL filter for status and validity on `as_of` (default today: the lifecycle
        rule `searchable_sql`), doc and version (each one name or several: any of them)."""
        parts = [searchable_sql(as_of or dt.date.today(), include_revoked)]
        for column, value in (("doc_id", doc_id), ("version", version)):
            if value is not None:
                values = [value] if isinstance(value, str) else sorted(set(value))
                listed = ", ".join(f"'{validate_key_part(v, column)}'" for v in values)
                parts.append(f"{column} IN ({listed})" if values else "false")
        return " AND ".join(parts)

    def _vector_query(
        self,
        tbl: Any,
        vector: np.ndarray,
        where: str | None,
        n: int,
        exact: bool,
        columns: Sequence[str] = HIT_COLUMNS,
    ) -> Any:
        """Cosine top `n` with `columns`: exact scan, or the HNSW index (when there is
        one) with `ef` and a re-ranking on the stored vectors; rows the index does not
        cover yet are scanned in both cases. The knobs are no-ops on a table without the
        index."""
        query = (
            tbl.search(vector, query_type="vector", vector_column_name="vector")
            .distance_type("cosine")
            .select([*columns, "_distance"])
            .limit(n)
        )
        if where is not None:
            query = query.where(where, prefilter=True)
        if exact or self.ann_min_rows == 0:
            return query.bypass_vector_index()
        # the index hands n x ANN_REFINE candidates to the re-ranking: ef must cover them
        ef = self.ann_ef  # a set breadth needs no row count (a fresh Index has none kept)
        if self.ann_ef_grows:
            ef = ann_ef_for(ef, True, self._state(tbl)[0][1])
        return query.ef(max(ef, n * ANN_REFINE)).refine_factor(ANN_REFINE)

    def _vector(
        self,
        tbl: Any,
        vector: np.ndarray,
        where: str | None,
        n: int,
        exact: bool,
        light: bool = False,
    ) -> Ranked:
        """Vector top `n`, ranked: the hit columns, or when `light` only the key columns
        and the row id (what fusion needs)."""
        query = self._vector_query(tbl, vector, where, n, exact, _columns(light))
        rows = query.with_row_id(light).to_list()
        ranked = [(1.0 - float(row["_distance"]), row) for row in rows]
        return sorted(ranked, key=lambda pair: tie_order(*pair))

    @staticmethod
    def _fts(
        tbl: Any, query: str, where: str | None, n: int, strict: bool, light: bool = False
    ) -> Ranked:
        """Full-text top `n`, ranked (columns as `_vector`). A failure of the store (a
        broken or unreadable index) is raised when `strict` (full-text mode); in hybrid
        search it is logged as a warning and gives no full-text hits, so the fused hits
        name only `vector` as their retriever: the answer degrades visibly, never
        silently. (A table without the index is no failure: LanceDB scans `text` flat; nor
        is a table version whose files a purge deleted: `search_many` reads again.)"""
        terms = fts_terms(query)
        if not terms:
            return []
        try:
            search = tbl.search(terms, query_type="fts", fts_columns="text")
            if where is not None:
                search = search.where(where, prefilter=True)
            search = search.select([*_columns(light), "_score"]).with_row_id(light)
            rows = search.limit(n).to_list()
        except (OSError, RuntimeError, ValueError) as exc:  # what LanceDB raises
            if strict or vanished(exc, tbl):  # files gone: the whole search reads again
                raise
            log.warning(
                "full-text search failed on %s, hybrid hits come from vector search alone: %s",
                tbl.name,
                exc,
            )
            return []
        ranked = [(float(row["_score"]), row) for row in rows]
        return sorted(ranked, key=lambda pair: tie_order(*pair))


def _columns(light: bool) -> list[str]:
    """What a retriever reads of each row: the key columns (light) or the hit columns."""
    return KEY_COLUMNS if light else HIT_COLUMNS
