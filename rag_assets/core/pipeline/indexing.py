"""One version into the index, with its lifecycle: `Indexing.index_version`.

What the `embeddings` stage does, free of Dagster: a version no longer live (revoked,
deleted, out of force, superseded) is not written and its derived files are removed;
otherwise its chunks are embedded (the cache first) and its rows replaced in one commit,
checked live again under the table's lock; then the older versions it supersedes leave
every store (only when its table is the one search uses), the raw file is noted indexed,
and search switches to the model's table once that table serves every live version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rag_assets.core.corpus import load_document
from rag_assets.core.index import (
    EmbeddingCache,
    Index,
    NoLongerLive,
    Stamp,
    chunks_folder_for,
    committed_keys,
    embed_cached,
    read_active,
)
from rag_assets.core.lake import (
    PURGE,
    Lake,
    held_lease,
    read_stage,
    remove_stage_files,
    split_key,
    this_process,
)
from rag_assets.core.lifecycle import (
    Removal,
    not_live_reason,
    note_indexed,
    purge_version,
    replaced_once_committed,
)
from rag_assets.core.pipeline.models import promote_if_complete
from rag_assets.core.rules import is_active


def _quiet(_: str) -> None:
    """No warning lines."""


@dataclass
class Indexed:
    """What `index_version` did to one version: either `not_written` (why, with the
    derived files removed) or `rows` stored of `expected` chunks, the cache's `hits`
    and `misses`, the older versions `retired` (key -> why, what left each store), what
    became of search (`switch`) and whether the version came back (`indexed_again`)."""

    key: str
    table: str
    not_written: str | None = None
    files_removed: int = 0
    status: str = "active"
    rows: int = 0
    expected: int = 0
    hits: int = 0
    misses: int = 0
    retired: dict[str, tuple[str, Removal]] = field(default_factory=dict)
    switch: str = ""
    indexed_again: bool = False


@dataclass(frozen=True)
class Indexing:
    """Where and how versions are indexed: the `lake` (keeping removed versions' history
    with `history`), the `index` (its model's table), the embedding `cache` (None: off),
    whether a switch drops the old model's table (`drop_old`), and where a warning goes
    (`warn`: a lost cache write)."""

    lake: Lake
    index: Index
    cache: EmbeddingCache | None = None
    history: bool = False
    drop_old: bool = True
    warn: Callable[[str], None] = _quiet

    def index_version(self, key: str) -> Indexed:
        """Index one version with its lifecycle (see the module doc)."""
        lake, index, history = self.lake, self.index, self.history
        model, uri = index.embedder, index.uri
        indexed: set[str] = set()  # what the last check read, reused after the commit
        doc_id, _ = split_key(key)

        def still_live() -> str | None:
            indexed.clear()  # this document's indexed versions: all the rule needs
            indexed.update(committed_keys(uri, doc_id))
            return not_live_reason(lake, key, uri, history, indexed=indexed)

        reason = still_live()
        if reason is None:
            info, status, valid_to, sha = load_document(lake, key)
            reason = None if is_active(status) else f"{status} when its run read it"
        if reason is not None:
            return self._not_written(key, reason)
        table = read_stage(lake, chunks_folder_for(uri, model.model_id), key)
        cache = self.cache
        # new vectors enter the cache in the commit of the rows that use them (under the
        # table's lock): a version revoked meanwhile leaves none (`Index.upsert_partition`)
        vectors, stats = embed_cached(model, cache, table["text"].to_list(), store=False)
        if stats.misses:  # the passage path ran: what `trecho status` says it runs on
            model.record_runtime(lake.runtime_dir, "passages")

        def cache_fresh() -> None:
            try:
                if cache is not None:
                    cache.add_fresh(stats)
            except Exception as exc:  # a lost cache write costs a re-embedding, no more
                self.warn(f"{key}: new vectors not cached: {exc}")

        stamp = Stamp(status, info.valid_from, valid_to, info.title)
        try:
            stored = index.upsert_partition(
                key, table, vectors, stamp, still_live=still_live, on_commit=cache_fresh
            )
        except NoLongerLive as exc:
            return self._not_written(key, str(exc))
        done = Indexed(key, index.table_name, status=status, rows=stored, expected=table.height)
        done.hits, done.misses = stats.hits, stats.misses
        active = read_active(uri)
        serving = active is None or active.model_id == model.model_id
        # only a version in the table search uses replaces an older one (not during a
        # model backfill: search still answers from the old table)
        replaced = replaced_once_committed(lake, key, uri, history, indexed=indexed)
        if replaced and serving:
            self._retire(key, replaced, done)
        done.indexed_again = lake.note_indexed_again(key, sha)
        note_indexed(lake, key, sha)  # what `trecho status` compares the file with
        done.switch = promote_if_complete(lake, uri, model, self.drop_old, history)
        return done

    def _retire(self, key: str, replaced: dict[str, str], done: Indexed) -> None:
        """Remove the versions `key` superseded (old key -> why) under the lake's purge
        lease, which every host honours: while another process holds it, they are left
        (said in the log) to the next reconcile plan, which removes what is not live."""
        holder = this_process(f"the run of {key}")
        with held_lease(self.lake.leases_dir, PURGE, holder) as other:
            if other is not None:
                self.warn(
                    f"{key}: {', '.join(replaced)} not retired yet: {other} holds the lake's "
                    "purge lease (the next plan removes them)"
                )
                return
            for old, why in replaced.items():
                removal = purge_version(self.lake, self.index.uri, old, why)
                if removal.rows or removal.files:  # else gone before (a re-run)
                    done.retired[old] = (why, removal)

    def _not_written(self, key: str, reason: str) -> Indexed:
        """A version not live (any more): nothing written, the derived files its run
        wrote deleted, and why."""
        files = remove_stage_files(self.lake, key)
        reason = reason.removeprefix(f"{key}: not written: ")
        return Indexed(key, self.index.table_name, not_written=reason, files_removed=len(files))
