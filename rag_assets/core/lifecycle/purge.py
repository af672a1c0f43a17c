"""Removing a version from every store: its rows from every model's table and its text
from disk (through the index's `Catalogue`), its Parquet files and its last runs'
outcome, with the removal recorded in `removed_versions.json`."""

from __future__ import annotations

import os
from collections.abc import Mapping

from rag_assets.core.index import Catalogue, Removal
from rag_assets.core.lake import Lake, remove_stage_files
from rag_assets.core.lifecycle.outcomes import forget_outcome

__all__ = ["Removal", "delete_unused_cached", "purge_version", "purge_versions"]


def purge_version(
    lake: Lake, db_uri: str | os.PathLike[str], key: str, reason: str = "not live"
) -> Removal:
    """Remove a version from every store, its text from disk included: its rows in every
    model's table (compacted, older table versions deleted), the cached vectors of texts
    no remaining row uses, its Parquet files; and record the removal and why in
    `removed_versions.json`.

    Used for revoked, expired, superseded and deleted versions, so that they can never be
    retrieved again. A key with nothing left costs one filtered read per table and a read of
    each model's text hashes (and its cache's).
    """
    lake.add_tombstone(key, reason)
    removal = Catalogue(db_uri).delete_version(key)
    removal.files = len(remove_stage_files(lake, key))
    forget_outcome(lake, key)
    return removal


def purge_versions(
    lake: Lake, db_uri: str | os.PathLike[str], reasons: Mapping[str, str]
) -> tuple[dict[str, Removal], int]:
    """`purge_version` for several versions at once, at the cost of one: their removals
    recorded in one write of `removed_versions.json`, then in each model's table their
    rows deleted in one commit and the table purged from disk once (not once per
    version: each purge rewrites the table and rebuilds its full-text index), each
    model's cache swept once, their Parquet files deleted. Returns each key's Removal
    (rows and files) and the cached vectors deleted, which no longer belong to one key.
    """
    keys = list(reasons)
    if not keys:
        return {}, 0
    lake.add_tombstones(dict(reasons))
    out, swept = Catalogue(db_uri).delete_versions(keys)
    for key in keys:
        out[key].files = len(remove_stage_files(lake, key))
        forget_outcome(lake, key)
    return out, swept.cache_entries


def delete_unused_cached(uri: str | os.PathLike[str]) -> int:
    """Delete (from disk) every model's cached vectors of texts no row of that model's
    table uses (a model without a table keeps its cache); returns how many. What a
    removal does, for when nothing is removed but the reconcile plan found such vectors
    (`Plan.unused_cache`)."""
    return Catalogue(uri).delete_unused_cached()
