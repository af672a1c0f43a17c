"""Switching models: how far a model's table has come, promoting it once complete, dropping it."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.core.embedding import Embedder
from rag_assets.core.index import (
    CACHE_PREFIX,
    Index,
    ModelRef,
    drop_cache,
    read_active,
    read_target,
    table_lock_path,
    table_name,
    write_active,
    write_target,
)
from rag_assets.core.lake import Derived, Lake, LakeError, remove_lock
from rag_assets.core.lifecycle import scan_versions
from rag_assets.core.stages import CHUNKS, FOLDERS, NEXT_CHUNKS, chunks_folder

DROP_GRACE_S = 2.0
"""How long a switch waits, once search points at the new model's table, before it drops
the old one: a server sees the new pointer at its next request, so the searches still
reading the old table are those that started before the switch, and they end well within
this (a search takes milliseconds to a few hundred). One that outlives it is asked again
of the new table (`TableDropped`, `serve.engine.Engine`): no search fails at a switch."""


@dataclass
class ModelProgress:
    """How far the configured model's table is from serving every live version."""

    active: str | None
    """The model id search uses now (None before anything was indexed)."""
    configured: str
    done: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether the configured model's table holds every version search serves."""
        return not self.missing


def adopt_chunks(lake: Lake, model_id: str) -> int:
    """Move a backfilled model's chunks (`chunks-next/<model_id>/`) over `derived/chunks/`
    once search uses its table; returns how many files moved."""
    staged = lake.root / "derived" / chunks_folder(model_id)
    if not staged.exists():
        return 0
    moved = 0
    for path in sorted(staged.iterdir()):
        if path.suffix == ".parquet":
            target = lake.stage_path(FOLDERS[CHUNKS], path.stem)
            if isinstance(path, Path):
                path.replace(target)  # atomic, per file
            else:  # an object store: a new object, then the staged one deleted
                target.write_bytes(path.read_bytes())
                path.unlink()
            moved += 1
    for leftover in staged.iterdir():  # a write's temporary file a killed run left
        leftover.unlink()
    with contextlib.suppress(OSError):  # (an object store has no folder to remove)
        staged.rmdir()
    return moved


def model_progress(
    lake: Lake,
    db_uri: str | os.PathLike[str],
    embedder: Embedder,
    history: bool = False,
    live: list[str] | None = None,
) -> ModelProgress:
    """Which live versions the configured model's table holds in full, and which it lacks.

    Required are the live versions the active table serves (a version that never got
    indexed, e.g. a bad PDF, cannot hold a switch back); a version counts as done when its
    row count equals its chunks file. `live`: the live versions, when the caller has
    just scanned the lake (default: scanned now).
    """
    active = read_active(db_uri)
    progress = ModelProgress(active.model_id if active else None, embedder.model_id)
    new_counts = Index(db_uri, embedder).partition_counts()
    old_counts = Index(db_uri, active.embedder(embedder)).partition_counts() if active else {}
    derived = Derived(lake)
    backfilling = active is not None and active.model_id != embedder.model_id
    folder = chunks_folder(embedder.model_id if backfilling else None)
    for key in scan_versions(lake, history).live if live is None else live:
        if backfilling and key not in old_counts:
            continue
        rows = derived.rows(folder, key)
        expected = -1 if rows is None else rows
        have = new_counts.get(key, 0)
        ok = have == expected or (expected == -1 and have > 0)
        (progress.done if ok else progress.missing).append(key)
    return progress


def promote_if_complete(
    lake: Lake,
    db_uri: str | os.PathLike[str],
    embedder: Embedder,
    drop_old: bool = True,
    history: bool = False,
) -> str:
    """Switch search to the configured model once its table serves every live version
    (and then drop the old model's table, unless `drop_old` is off); says what happened.

    Until then search keeps using the previous model's table: never a mix of both, never
    a half-filled table. The new model's chunks (`chunks-next/<model_id>/`) then replace
    `derived/chunks/`; the old table is dropped DROP_GRACE_S after the switch, when the
    searches that were reading it have ended.
    """
    mine = ModelRef.of(embedder)
    active = read_active(db_uri)
    if active is not None and active.model_id == mine.model_id:
        return f"search uses {table_name(mine.model_id)}"
    if active is None:
        write_active(db_uri, mine)
        return f"search uses {table_name(mine.model_id)} (first model indexed)"
    target = read_target(db_uri)
    if target is None or target.model_id == active.model_id:  # a fill of another model:
        write_target(db_uri, mine)  # the lake's model from now on (status, the code location)
    progress = model_progress(lake, db_uri, embedder, history)
    if not progress.complete:
        return (
            f"{len(progress.done)}/{len(progress.done) + len(progress.missing)} live versions "
            f"in {table_name(mine.model_id)}; search stays on {table_name(active.model_id)} "
            "until all are in"
        )
    write_active(db_uri, mine)
    adopt_chunks(lake, mine.model_id)  # its chunks, cut beside the old model's, now serve
    message = f"search switched from {table_name(active.model_id)} to {table_name(mine.model_id)}"
    old = Index(db_uri, active.embedder(embedder))
    if drop_old and old.exists():
        time.sleep(DROP_GRACE_S)  # the searches in flight on the old table end first
    if drop_old and old.drop():
        message += f"; {table_name(active.model_id)} dropped"
    return message


def switch_model(
    lake: Lake, db_uri: str | os.PathLike[str], embedder: Embedder, history: bool = False
) -> str:
    """Make `embedder`'s model the lake's (`write_target`): what the code location, the
    sensor and `trecho status` follow from then on; search moves to it once its table
    holds every live version. Naming the model search uses cancels a pending switch.
    Says what it did and what happens next. A model that does not load is a user error."""
    mine = ModelRef.of(embedder)
    embedder.max_tokens  # noqa: B018  (loads the model's tokenizer: a bad name fails here)
    active, before = read_active(db_uri), read_target(db_uri)
    write_target(db_uri, mine)
    table = table_name(mine.model_id)
    if active is None:
        return f"the lake's model is now {mine.model}: the first index goes to {table}"
    if active.model_id == mine.model_id:
        cancelled = before is not None and before.model_id != mine.model_id
        return f"search uses {table}" + (
            f"; the switch to {before.model} is cancelled" if cancelled else ": nothing to do"
        )
    progress = model_progress(lake, db_uri, embedder, history)
    return (
        f"the lake's model is now {mine.model}: {len(progress.done)}/"
        f"{len(progress.done) + len(progress.missing)} live versions in {table}; search "
        f"stays on {table_name(active.model_id)} until all are in"
    )


def drop_model(
    db_uri: str | os.PathLike[str], embedder: Embedder, lake: Lake | None = None
) -> list[str]:
    """Drop a model's index table and embedding cache (e.g. the old model after a switch,
    when `drop_old_tables` was off), and with `lake` the chunks a backfill of it left
    beside the active ones (`chunks-next/<model_id>/`: a backfill given up, and
    `chunks-next/` once empty); refused for the model search uses. The lock files of its
    table and cache go too. Returns what was dropped."""
    active = read_active(db_uri)
    if active is not None and active.model_id == embedder.model_id:
        raise LakeError(
            f"{table_name(embedder.model_id)} is the table search uses; switch to another "
            "model first (`trecho backfill` with the new model)"
        )
    dropped = []
    if Index(db_uri, embedder).drop():
        dropped.append(table_name(embedder.model_id))
    cache = drop_cache(db_uri, embedder.model_id)
    if cache is not None:
        dropped.append(cache)
    staged = lake.root / "derived" / chunks_folder(embedder.model_id) if lake else None
    if staged is not None and staged.exists():
        files = list(staged.iterdir())
        for path in files:
            path.unlink()
        with contextlib.suppress(OSError):  # (an object store has no folder to remove)
            staged.rmdir()
        dropped.append(f"derived/{chunks_folder(embedder.model_id)} ({len(files)} files)")
    if lake is not None:  # `chunks-next/` itself, once no backfill has a folder in it
        with contextlib.suppress(OSError):
            (lake.root / "derived" / NEXT_CHUNKS).rmdir()
    for name in (table_name(embedder.model_id), CACHE_PREFIX + embedder.model_id):
        remove_lock(table_lock_path(str(db_uri), name))  # their writers': never again
    return dropped
