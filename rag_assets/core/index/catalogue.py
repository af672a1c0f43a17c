"""The store as a whole, for the callers outside the index: the one door to LanceDB that
the lifecycle's removals (`lifecycle.purge`) and the server (the active-model pointer it
follows) go through. `Catalogue(uri)` lists nothing it does not need: it deletes
versions from every model's table, sweeps the caches, follows a table.

A removal deletes rows in one commit per table and then purges the table from disk
(compacted, older versions deleted, the full-text index rebuilt): what was deleted can
no longer be read back."""

from __future__ import annotations

import datetime as dt
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_assets.core.index.cache import CACHE_PREFIX, LOOKUP_BATCH, hashes_of
from rag_assets.core.index.connection import connect
from rag_assets.core.index.followed import FollowedTable
from rag_assets.core.index.locking import retry_commit, table_lock
from rag_assets.core.index.store import model_tables, table_name, table_or_none
from rag_assets.core.index.upkeep import fts_config
from rag_assets.core.lake import split_key


class Catalogue:
    """The tables of one LanceDB store (`uri`), changed as a whole: versions deleted
    from every model's table (`delete_versions`), caches swept (`delete_unused_cached`),
    a table followed across commits (`follow`)."""

    def __init__(self, uri: str | os.PathLike[str]) -> None:
        self.uri = str(uri)

    def follow(self, name: str) -> FollowedTable:
        """The table `name` kept open and moved to its latest version cheaply (it may
        not exist yet): what a server reads the active-model pointer through."""
        return FollowedTable(connect(self.uri), name)

    def delete_version(self, key: str) -> Removal:
        """One version's rows deleted from every model's table, the tables that held
        them purged from disk, the caches swept (`delete_partition_everywhere`)."""
        return delete_partition_everywhere(self.uri, key)

    def delete_versions(self, keys: list[str]) -> tuple[dict[str, Removal], Removal]:
        """The rows of `keys` deleted from every model's table, each table purged from
        disk once, each model's cache swept (`_delete_everywhere`); each key's Removal,
        and the sweep's."""
        return _delete_everywhere(self.uri, keys)

    def delete_unused_cached(self) -> int:
        """Every model's cached vectors no row of its table uses deleted from disk (a
        model without a table keeps its cache); how many."""
        return delete_unused_cached(self.uri)


HASH = re.compile(r"[0-9a-f]+")
"""What a text hash looks like (anything else never reaches a filter)."""


@dataclass
class Removal:
    """What removing one version from the database did."""

    rows: int = 0
    """Rows deleted, over every model's table."""
    cache_entries: int = 0
    """Cached vectors deleted: texts no remaining row of their model's table uses."""
    tables_purged: list[str] = field(default_factory=list)
    """Tables compacted with their older versions deleted (the text is gone from disk)."""
    files: int = 0
    """The version's Parquet files deleted (set by `purge_version`)."""

    def counts(self) -> dict[str, int]:
        """Rows, files and cached vectors deleted (for run metadata: `add`)."""
        return {"rows": self.rows, "files": self.files, "cache_entries": self.cache_entries}

    def record(self, version: str, reason: str) -> dict[str, Any]:
        """The removal as the observation of it on the embeddings asset records it: which
        version, why, and what left the index and the lake (the sensor's and a run's)."""
        return {
            "removed_version": version,
            "reason": reason,
            "index_rows_removed": self.rows,
            "files_removed": self.files,
        }

    def add(self, counts: Mapping[str, int]) -> Removal:
        """This removal plus what an earlier one of the same version deleted (`counts`):
        the removal of a superseded version that a run already emptied tells it all."""
        self.rows += int(counts.get("rows", 0))
        self.files += int(counts.get("files", 0))
        self.cache_entries += int(counts.get("cache_entries", 0))
        return self


def purge_old_versions(tbl: Any) -> None:
    """Rewrite the table's files without deleted rows and delete every older version of
    the table (and files no version uses): what was deleted can no longer be read back
    from disk, nor by checking out an older version. The caller holds the table's lock.

    The full-text index is rebuilt from the remaining rows, with the analyzer it had: an
    incremental update keeps the deleted rows' words in its posting lists."""
    with warnings.catch_warnings():  # "removes every version except the latest": wanted
        warnings.simplefilter("ignore", UserWarning)
        tbl.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)
        fts = next((c for c in tbl.list_indices() if c.columns == ["text"]), None)
        if fts is not None:  # rebuilt with the analyzer it had (its language)
            details = getattr(fts, "index_details", None)
            language = details.get("language") if isinstance(details, dict) else None
            config = fts_config(language) if language else fts_config()
            tbl.create_index("text", config=config, replace=True)
            tbl.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)


def delete_partition_everywhere(uri: str | os.PathLike[str], partition_key: str) -> Removal:
    """Remove one version's rows from every model's table and its text from disk: each
    table that held rows is compacted and its older versions deleted, and every model's
    cached vectors of texts no remaining row of that model uses are deleted too: the
    version's own, and any a run left before (the texts of a version revoked while it was
    embedded, by older code). The one-key case of `_delete_everywhere`."""
    split_key(partition_key)
    out, swept = _delete_everywhere(uri, [partition_key])
    removal = out[partition_key]
    removal.cache_entries = swept.cache_entries
    removal.tables_purged.extend(swept.tables_purged)
    return removal


def _delete_everywhere(
    uri: str | os.PathLike[str], keys: list[str]
) -> tuple[dict[str, Removal], Removal]:
    """Delete the rows of `keys` from every model's table in one commit per table, purge
    each table that held any, and sweep each model's cache of vectors no remaining row
    uses (the cache of a model without a table, switched away from, is kept whole: a
    switch back embeds nothing it held); returns each key's Removal (rows, tables) and
    the sweep's (cached vectors and cache tables, which belong to no one key).

    Each model's table is held under its write lock throughout, so a run committing rows
    (and the vectors they use) meanwhile lands before or after, never between."""
    db = connect(str(uri))
    out = {key: Removal() for key in keys}
    swept = Removal()
    tables = set(model_tables(uri))
    caches = set(model_tables(uri, prefix=CACHE_PREFIX))
    for model_id in _model_ids(tables, caches):
        name, cache = table_name(model_id), CACHE_PREFIX + model_id
        with table_lock(str(uri), name):
            for key in _delete_many(db, name, keys, out) if name in tables else ():
                out[key].tables_purged.append(name)
            if cache in caches and name in tables:  # no table: kept for a switch back
                used = hashes_of(table_or_none(db, name), "content_hash")
                _delete_cached(db, str(uri), cache, used, swept)
    return out, swept


def delete_unused_cached(uri: str | os.PathLike[str]) -> int:
    """Delete (from disk) every model's cached vectors of texts no row of that model's
    table uses (a model without a table keeps its cache); returns how many. What a
    removal does, for when nothing is removed but
    the reconcile plan found such vectors (`Plan.unused_cache`)."""
    db = connect(str(uri))
    out = Removal()
    caches = set(model_tables(uri, prefix=CACHE_PREFIX))
    tables = set(model_tables(uri))
    for model_id in _model_ids(set(), caches):
        name = table_name(model_id)
        if name not in tables:  # a model not indexed now (switched away): its cache stays
            continue
        with table_lock(str(uri), name):
            used = hashes_of(table_or_none(db, name), "content_hash")
            _delete_cached(db, str(uri), CACHE_PREFIX + model_id, used, out)
    return out.cache_entries


def _model_ids(tables: set[str], caches: set[str]) -> list[str]:
    """The model ids of index tables and cache tables."""
    ids = {n.removeprefix("chunks__") for n in tables}
    return sorted(ids | {n.removeprefix(CACHE_PREFIX) for n in caches})


def _delete_cached(db: Any, uri: str, name: str, used: set[str], out: Removal) -> None:
    """Delete the cached vectors of texts not in `used` from a cache table, then purge it
    from disk."""
    with table_lock(uri, name):
        tbl = table_or_none(db, name)
        unused = sorted(h for h in hashes_of(tbl, "text_hash") - used if HASH.fullmatch(h))
        if not unused:
            return
        for start in range(0, len(unused), LOOKUP_BATCH):
            listed = ", ".join(f"'{h}'" for h in unused[start : start + LOOKUP_BATCH])
            where = f"text_hash IN ({listed})"
            retry_commit(lambda where=where: db.open_table(name).delete(where), f"delete in {name}")
        retry_commit(lambda: purge_old_versions(db.open_table(name)), f"purge {name}")
        out.cache_entries += len(unused)
        out.tables_purged.append(name)


KEYS_PER_FILTER = 500
"""Keys per `partition_key IN (...)` filter of a batch removal."""


def _delete_many(db: Any, name: str, keys: list[str], out: dict[str, Removal]) -> list[str]:
    """Delete the rows of `keys` from one model's table in one commit, then purge it
    from disk, under the caller's lock; returns the keys it held."""
    held: dict[str, int] = {}
    for start in range(0, len(keys), KEYS_PER_FILTER):
        listed = ", ".join(f"'{k}'" for k in keys[start : start + KEYS_PER_FILTER])
        rows = (
            db.open_table(name)
            .search()
            .where(f"partition_key IN ({listed})")
            .select(["partition_key"])
            .limit(None)
            .to_arrow()
        )
        for key in rows.column("partition_key").to_pylist():
            held[key] = held.get(key, 0) + 1
    if not held:
        return []
    gone = sorted(held)
    for start in range(0, len(gone), KEYS_PER_FILTER):
        listed = ", ".join(f"'{k}'" for k in gone[start : start + KEYS_PER_FILTER])
        where = f"partition_key IN ({listed})"
        retry_commit(lambda where=where: db.open_table(name).delete(where), f"delete in {name}")
    for key, n in held.items():
        out[key].rows += n
    retry_commit(lambda: purge_old_versions(db.open_table(name)), f"purge {name}")
    return gone
