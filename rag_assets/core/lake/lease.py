"""A lease in the lake that every host honours: one holder at a time of a job no two
hosts may do at once (the removals: `orchestration/removals.carry_out_removals`, and a
run retiring the versions it superseded, `core/pipeline/indexing.py`).

The lease is a small JSON file, `<lake>/.leases/<name>.json` (`holder`, `token`,
`until`, UTC ISO), taken by a write that succeeds only when no such file exists: an
exclusive create on a disk (`O_CREAT | O_EXCL`, which NFS honours too), a conditional PUT
(`If-None-Match: *`) in an object store. An expired lease (its holder died) is taken
over by a write conditional on the file read (a rename on a disk, `If-Match: <ETag>` in
an object store), so two hosts never both take it over. The store must honour
conditional PUT (AWS S3 does, MinIO and Ceph RGW in their recent releases); the taker
reads its lease back, so a store that ignores the condition is caught in most races.

A live holder renews its lease every third of its term (a heartbeat thread, while the
block runs), each time only if the file is still its own (its token; an object store's
`If-Match`), so a removal longer than the term is never taken over: only a holder that
died, or stalled a whole term, loses it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag_assets.core.lake.keys import LakePath

PURGE = "purge"
"""The lease every removal of versions runs under (the plan's removals, a run retiring the
versions it superseded)."""

LEASE_S = 900.0
"""How long a lease lasts unless released: past it, a holder that died is replaced."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _read(path: LakePath) -> tuple[dict[str, Any], str] | None:
    """The lease file's record and its state (ETag in an object store, inode and mtime on a
    disk); None when there is none."""
    try:
        if isinstance(path, Path):
            stat = os.stat(path)
            text, state = path.read_text(encoding="utf-8"), f"{stat.st_ino}:{stat.st_mtime_ns}"
        else:
            state = str(path.fs.info(path.path).get("ETag", ""))
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        record = {}
    return (record if isinstance(record, dict) else {}), state


def _create(path: LakePath, data: bytes) -> bool:
    """Write `data` to `path` only if no file is there; whether it was written."""
    try:
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        else:
            path.fs.pipe_file(path.path, data, mode="create")
    except FileExistsError:
        return False
    return True


def _replace(path: LakePath, state: str, data: bytes) -> bool:
    """Write `data` over the file read in `state` only if it is still that file."""
    if isinstance(path, Path):
        found = _read(path)
        if found is None or found[1] != state:
            return False
        stale = path.with_name(f"{path.name}.stale-{uuid.uuid4().hex}")
        try:
            os.rename(path, stale)  # one taker renames it; the others find it gone
        except FileNotFoundError:
            return False
        stale.unlink(missing_ok=True)
        return _create(path, data)
    bucket, key, _ = path.fs.split_path(path.path)
    try:
        path.fs.call_s3("put_object", Bucket=bucket, Key=key, Body=data, IfMatch=state)
    except OSError:  # the precondition failed: another host took it first
        return False
    return True


def _record(holder: str, token: str, seconds: float) -> bytes:
    """A lease's file: who holds it, its token and until when (`seconds` from now)."""
    until = (_now() + dt.timedelta(seconds=seconds)).isoformat(timespec="seconds")
    return json.dumps({"holder": holder, "token": token, "until": until}).encode("utf-8")


def _renew(path: LakePath, token: str, holder: str, seconds: float) -> bool:
    """Push the lease's end `seconds` from now if it is still this holder's (`token`);
    whether it was. On a disk the new file replaces the old in one rename (the lease is
    never absent, so no taker's exclusive create gets in); in an object store the PUT
    holds only if the file is the one read (`If-Match`)."""
    found = _read(path)
    if found is None or found[0].get("token") != token:
        return False
    data = _record(holder, token, seconds)
    if isinstance(path, Path):
        fresh = path.with_name(f"{path.name}.renew-{uuid.uuid4().hex}")
        fresh.write_bytes(data)
        os.replace(fresh, path)
        return True
    return _replace(path, found[1], data)


def _holder_line(record: dict[str, Any]) -> str:
    return f"{record.get('holder', 'another process')} (until {record.get('until', '?')})"


@contextlib.contextmanager
def held_lease(
    folder: LakePath, name: str, holder: str, seconds: float = LEASE_S
) -> Iterator[str | None]:
    """Hold the lease `name` (in `folder`, the lake's `.leases`) while the block runs:
    yields None when this process holds it, else who does and until when (the block
    must then leave the job alone). Renewed every third of `seconds` while the block
    runs (`_renew`), released at the end when still this process's."""
    path = folder / f"{name}.json"
    token = uuid.uuid4().hex
    data = _record(holder, token, seconds)
    taken = _create(path, data)
    if not taken:
        found = _read(path)
        if found is None:
            taken = _create(path, data)
        else:
            record, state = found
            expired = str(record.get("until", "")) < _now().isoformat(timespec="seconds")
            if not expired:
                yield _holder_line(record)
                return
            taken = _replace(path, state, data)
    mine = _read(path) if taken else None
    if mine is None or mine[0].get("token") != token:  # lost a race the store let through
        yield _holder_line(mine[0]) if mine else "another process"
        return
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(seconds / 3) and _renew(path, token, holder, seconds):
            pass

    beat = threading.Thread(target=heartbeat, name=f"lease {name}", daemon=True)
    if seconds > 0:
        beat.start()
    try:
        yield None
    finally:
        stop.set()
        if beat.is_alive():
            beat.join()
        again = _read(path)
        if again is not None and again[0].get("token") == token:
            path.unlink()
