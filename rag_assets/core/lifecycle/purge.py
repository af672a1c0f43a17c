"""Removing a version from every model's table and its text from disk."""

from __future__ import annotations

import datetime as dt
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import lancedb

from rag_assets.core.index.cache import CACHE_PREFIX
from rag_assets.core.index.locking import _retry, _table_lock
from rag_assets.core.index.store import _open_table, model_tables
from rag_assets.core.index.upkeep import fts_config
from rag_assets.core.lake.layout import Lake, split_key
from rag_assets.core.lake.parquet import remove_stage_files


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


def purge_version(
    lake: Lake, db_uri: str | os.PathLike[str], key: str, reason: str = "not live"
) -> Removal:
    """Remove a version from every store, its text from disk included: its rows in every
    model's table (compacted, older table versions deleted), the cached vectors only it
    used, its Parquet files; and record the removal and why in `removed_versions.json`.

    Used for revoked, expired, superseded and deleted versions, so that they can never be
    retrieved again. A key with nothing left costs one count per table.
    """
    lake.add_tombstone(key, reason)
    removal = delete_partition_everywhere(db_uri, key)
    removal.files = len(remove_stage_files(lake, key))
    return removal
