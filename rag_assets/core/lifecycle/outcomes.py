"""What the last runs of each version ended with, for `trecho status` to tell the truth on
every host: the sha256 of the file whose rows the index holds (written when a version's
rows are committed), and why the last run of a file failed (written by the step that
failed, whatever started its run: the sensor, the UI, a backfill, a `trecho` command).

Kept in the lake itself, one small JSON file per version, `<lake>/outcomes/<key>.json`:
`{"indexed": sha256, "failed": {"sha256", "reason", "at"}}`. Every host that sees the lake
reads the same outcomes (an object-store lake too), and a version's file is written only
by its own run (one run per version at a time: `deploy/dagster.yaml`), as one whole PUT
or rename, so writers of different versions never meet. A record, not the truth of the
index: a lost file costs the reason of a past failure (status then says `PENDING`) and the
indexed hash (status then compares the `derived/documents` row's hash).

A lake written before kept every outcome in one local file,
`<Lake.local_cache_dir>/version-outcomes.json` (key -> the same entry): the first read or
write after the upgrade carries its entries of live versions into the per-version files
(a version's own file, when one is already there, is newer and wins) and deletes it, so
no second record is left to go stale (`carry_old_outcomes`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from rag_assets.core.lake import Lake, LakePath, folder_states, split_key, write_atomically

OUTCOMES_FOLDER = "outcomes"
OLD_OUTCOMES_NAME = "version-outcomes.json"
"""The one-file record of every outcome that lakes written before kept (local to a host)."""


def outcome_path(lake: Lake, key: str) -> LakePath:
    """Where one version's outcome is kept, in the lake (shared by every host)."""
    split_key(key)  # a key names a file: checked first
    return lake.root / OUTCOMES_FOLDER / f"{key}.json"


def _read_one(path: LakePath) -> dict[str, Any] | None:
    """One version's outcome (None when it is gone or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def carry_old_outcomes(lake: Lake) -> int:
    """Carry the old one-file record (`OLD_OUTCOMES_NAME`) into the per-version files, then
    delete it and its lock: after an upgrade, status still says why a past run failed.
    A version's own file, when there, wins (written since); a removed version's entry
    (no raw PDF left) or a bad key is dropped. How many entries were carried (0: none)."""
    old = lake.local_cache_dir / OLD_OUTCOMES_NAME
    if not old.exists():
        return 0
    try:
        data = json.loads(old.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    carried = 0
    for key, entry in data.items() if isinstance(data, dict) else ():
        try:
            path = outcome_path(lake, str(key))
            live = lake.raw_paths(str(key))[0].exists()
        except ValueError:  # not a version's key (LakeError is one)
            continue
        if isinstance(entry, dict) and live and not path.exists():
            _write(lake, str(key), entry)
            carried += 1
    old.unlink(missing_ok=True)
    old.with_name(f".{OLD_OUTCOMES_NAME}.lock").unlink(missing_ok=True)
    return carried


def read_outcomes(lake: Lake) -> dict[str, dict[str, Any]]:
    """Every version's outcome, from one listing of the lake's outcomes; a file is read
    only when it changed since a command last read it here (`Lake.memo`)."""
    carry_old_outcomes(lake)
    folder = lake.root / OUTCOMES_FOLDER
    out: dict[str, dict[str, Any]] = {}
    for key, state in folder_states(folder, ".json").items():
        kept = lake.memo.get(OUTCOMES_FOLDER, key, state)
        if not isinstance(kept, dict):
            kept = _read_one(folder / f"{key}.json")
            if kept is None:
                continue
            lake.memo.put(OUTCOMES_FOLDER, key, state, kept)
        out[key] = kept
    return out


def note_indexed(lake: Lake, key: str, sha256: str) -> None:
    """Record that the index holds `key`'s rows of the file `sha256` (its failure, if one
    was recorded, is over)."""
    carry_old_outcomes(lake)  # an old record's entry never lands over this one later
    _write(lake, key, {"indexed": sha256})


def note_failed(lake: Lake, failed: Mapping[str, str], hashes: Mapping[str, str]) -> None:
    """Record why the runs of `failed` (key -> one-line reason) failed, each with the
    sha256 of the file it ran on (`hashes`; a key without one is not recorded)."""
    carry_old_outcomes(lake)  # the old entry's indexed hash kept beside the failure
    at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    for key, reason in failed.items():
        if key not in hashes:
            continue
        entry = _read_one(outcome_path(lake, key)) or {}
        entry["failed"] = {"sha256": hashes[key], "reason": reason, "at": at}
        _write(lake, key, entry)


def forget_outcome(lake: Lake, key: str) -> None:
    """Delete a removed version's outcome (nothing when there is none)."""
    path = outcome_path(lake, key)
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _write(lake: Lake, key: str, entry: dict[str, Any]) -> None:
    """Replace one version's outcome whole (readers see the old or the new one)."""
    data = (json.dumps(entry, indent=1, sort_keys=True) + "\n").encode("utf-8")
    write_atomically(outcome_path(lake, key), data)


def failure_of(outcome: Mapping[str, Any], sha256: str) -> str | None:
    """Why the last run of the file `sha256` failed, from a version's outcome (None: it
    did not, or the failure was of another file)."""
    failed = outcome.get("failed")
    if isinstance(failed, dict) and failed.get("sha256") == sha256:
        return str(failed.get("reason") or "its run failed")
    return None
