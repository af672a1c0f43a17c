"""What the last runs of each version ended with, for `trecho status` to tell the truth:
the sha256 of the file whose rows the index holds (written when a version's rows are
committed), and why the last run of a file failed (written by the command that ran it).

Kept in `<Lake.local_cache_dir>/version-outcomes.json`, key -> `{"indexed": sha256,
"failed": {"sha256", "reason", "at"}}`. A record, not the truth of the index: a lost file
costs the reasons of past failures (status then says `PENDING`) and the indexed hashes
(status then compares the `derived/documents` row's hash, as before).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_assets.core.lake import Lake, file_lock, write_atomically

OUTCOMES_NAME = "version-outcomes.json"


def outcomes_path(lake: Lake) -> Path:
    """Where a lake's outcomes are kept (a local file, also for an object-store lake)."""
    return lake.local_cache_dir / OUTCOMES_NAME


def read_outcomes(lake: Lake) -> dict[str, dict[str, Any]]:
    """Every version's outcomes (empty when none were kept, or the file is unreadable)."""
    try:
        data = json.loads(outcomes_path(lake).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _update(lake: Lake, change: Any) -> None:
    """Apply `change(data)` to the outcomes under their lock and write them back."""
    path = outcomes_path(lake)
    with file_lock(path.with_name(f".{OUTCOMES_NAME}.lock")):
        data = read_outcomes(lake)
        change(data)
        write_atomically(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())


def note_indexed(lake: Lake, key: str, sha256: str) -> None:
    """Record that the index holds `key`'s rows of the file `sha256` (its failure, if one
    was recorded, is over)."""

    def change(data: dict[str, dict[str, Any]]) -> None:
        data[key] = {"indexed": sha256}

    _update(lake, change)


def note_failed(lake: Lake, failed: Mapping[str, str], hashes: Mapping[str, str]) -> None:
    """Record why the runs of `failed` (key -> one-line reason) failed, each with the
    sha256 of the file it ran on (`hashes`; a key without one is not recorded)."""
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

    def change(data: dict[str, dict[str, Any]]) -> None:
        for key, reason in failed.items():
            if key in hashes:
                entry = data.setdefault(key, {})
                entry["failed"] = {"sha256": hashes[key], "reason": reason, "at": at}

    if any(key in hashes for key in failed):
        _update(lake, change)


def failure_of(outcome: Mapping[str, Any], sha256: str) -> str | None:
    """Why the last run of the file `sha256` failed, from a version's outcome (None: it
    did not, or the failure was of another file)."""
    failed = outcome.get("failed")
    if isinstance(failed, dict) and failed.get("sha256") == sha256:
        return str(failed.get("reason") or "its run failed")
    return None
