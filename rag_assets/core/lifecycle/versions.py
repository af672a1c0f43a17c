"""The raw folder sorted by the lifecycle rules: which versions are live, and why
the others are not."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Collection
from dataclasses import dataclass, field

from rag_assets.core.index import committed_keys
from rag_assets.core.lake import Lake, LakeError, RawVersion, Sidecar, gc_paused, split_key
from rag_assets.core.rules import superseded_by_indexed, why_not_live


@dataclass
class RawScan:
    """The raw folder sorted for the pipeline: what should be indexed, what should not
    (with why), and paths skipped (with why)."""

    live: list[str] = field(default_factory=list)
    dead: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    """Why each dead key is not live: revoked, expired, superseded by ..."""
    returning: list[str] = field(default_factory=list)
    """Live keys that were removed before (their file is live again): indexed again."""
    sidecars: dict[str, Sidecar | LakeError] = field(default_factory=dict)
    """Each scanned key's sidecar as read by the scan, or the error it raised (read once
    per scan: the change rule compares the same values)."""
    files: dict[str, RawVersion] = field(default_factory=dict)
    """Each scanned key's files as the listing found them (paths and states)."""


def scan_versions(
    lake: Lake,
    history: bool = False,
    today: dt.date | None = None,
    db_uri: str | os.PathLike[str] | None = None,
    *,
    indexed: Collection[str] | None = None,
    doc_id: str | None = None,
) -> RawScan:
    """Partition keys of the raw folder split into live and not live: the raw folder is
    the truth, whatever was removed before.

    Not live: revoked, expired (`valid_to` passed), or superseded (unless `history`, the
    `keep_history` setting): a newer version of the same document, in force and
    already in the index (`indexed`, default: what the table search uses holds in
    `db_uri`, default `<lake>/lancedb`), replaces the older ones. A newer version not
    indexed yet (or whose run failed) replaces nothing. A version whose sidecar does not
    parse counts as live: its run then fails with the sidecar's error, and what is
    already indexed for it is kept, never purged. A key removed before whose file is
    live again is live (`returning`), its removal kept in `removed_versions.json`.
    """
    today = today or dt.date.today()
    with gc_paused():  # tens of thousands of small objects on a large lake
        return _scan(lake, history, today, db_uri, indexed, doc_id)


def _scan(
    lake: Lake,
    history: bool,
    today: dt.date,
    db_uri: str | os.PathLike[str] | None,
    indexed: Collection[str] | None,
    doc_id: str | None,
) -> RawScan:
    """`scan_versions`' work."""
    found, problems = lake.scan_raw(doc_id)
    scan = RawScan(problems=problems)
    removed = lake.removed_keys()
    if indexed is None:
        indexed = committed_keys(db_uri or lake.lancedb_dir, doc_id) if found else set()
    candidates: dict[str, Sidecar] = {}
    for raw in found:
        scan.files[raw.key] = raw
        try:
            sidecar = scan.sidecars[raw.key] = read_sidecar(lake, raw)
        except LakeError as exc:
            scan.sidecars[raw.key] = exc
            sidecar = None  # live: its run fails with the sidecar's error
        reason = None if sidecar is None else why_not_live(sidecar, today)
        if reason is not None:
            scan.dead.append(raw.key)
            scan.reasons[raw.key] = reason
        elif sidecar is None:
            scan.live.append(raw.key)
        else:
            candidates[raw.key] = sidecar
    replaced = (
        {}
        if history
        else superseded_by_indexed(
            {key: sidecar.valid_from for key, sidecar in candidates.items()}, set(indexed), today
        )
    )
    for key in candidates:
        if key in replaced:
            scan.dead.append(key)
            scan.reasons[key] = f"superseded by {replaced[key]}"
        else:
            scan.live.append(key)
    scan.returning = [k for k in scan.live if k in removed]
    scan.live.sort()
    scan.dead.sort()
    return scan


def read_sidecar(lake: Lake, raw: RawVersion) -> Sidecar:
    """A version's sidecar (`Sidecar.read`), parsed again only when its file changed since
    a command last read it (`Lake.memo`, by the state its listing gave); its error too
    (a LakeError naming the file)."""
    state = raw.sidecar_state
    if state is None:  # no sidecar next to the PDF, or a listing without states
        return Sidecar.read(raw.sidecar_path)
    kept = lake.memo.get("sidecar", raw.key, state)
    if isinstance(kept, dict) and "error" in kept:
        raise LakeError(kept["error"])
    if isinstance(kept, dict):
        return Sidecar.from_json(kept)
    try:
        sidecar = Sidecar.read(raw.sidecar_path)
    except LakeError as exc:
        lake.memo.put("sidecar", raw.key, state, {"error": str(exc)})
        raise
    try:
        lake.memo.put("sidecar", raw.key, state, sidecar.to_json())
    except TypeError:  # metadata without a JSON form: read again each time
        pass
    return sidecar


def not_live_reason(
    lake: Lake,
    key: str,
    db_uri: str | os.PathLike[str],
    history: bool = False,
    *,
    indexed: Collection[str] | None = None,
) -> str | None:
    """Why `key` must not be in the index now (None when it is live), read from its
    document's folder: asked again at commit time, under the table's write lock."""
    doc_id, _ = split_key(key)
    pdf, sidecar_path = lake.raw_paths(key)
    if not pdf.is_file():
        return f"its file {lake.relative(pdf)} is gone"
    try:
        Sidecar.read(sidecar_path)
    except LakeError as exc:
        return f"its sidecar no longer parses ({exc})"
    scan = scan_versions(lake, history, None, db_uri, indexed=indexed, doc_id=doc_id)
    return None if key in scan.live else scan.reasons.get(key, "not found in raw/")


def replaced_once_committed(
    lake: Lake,
    key: str,
    db_uri: str | os.PathLike[str],
    history: bool = False,
    *,
    indexed: Collection[str] | None = None,
) -> dict[str, str]:
    """The older versions of `key`'s document that leave the index once `key` is in it
    (superseded by it), each with the reason to record. `indexed`: the versions the
    table search uses holds, when the caller has just read them (default: read now)."""
    doc_id, _ = split_key(key)
    indexed = set(committed_keys(db_uri, doc_id) if indexed is None else indexed) | {key}
    scan = scan_versions(lake, history, None, db_uri, indexed=indexed, doc_id=doc_id)
    wanted = f"superseded by {key}"
    return {k: reason for k, reason in scan.reasons.items() if reason == wanted}
