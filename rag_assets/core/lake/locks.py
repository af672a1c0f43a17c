"""File locks across processes on one host, for read-modify-write of shared lake files."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes and threads on one host (flock on `path`).
    The file locked is the one `path` names once held: one `remove_lock` deleted while
    this waited is opened anew."""
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            if not _names(path, fh):
                fcntl.flock(fh, fcntl.LOCK_UN)
                continue
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
            return


def _names(path: Path, fh: Any) -> bool:
    """Whether `path` still names the file `fh` holds open (not deleted or replaced)."""
    try:
        return os.stat(path).st_ino == os.fstat(fh.fileno()).st_ino
    except FileNotFoundError:
        return False


def remove_lock(path: Path) -> bool:
    """Delete the lock file `path` if no process holds it (else leave it, and False): it
    is taken without waiting and deleted while held, so a process that opened it
    meanwhile finds it gone once it holds it, and locks the path anew (`file_lock`,
    `waited_lock`). For the lock of what no longer exists (a dropped table, a removed
    version), which would otherwise stay for ever."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    with os.fdopen(fd) as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            if not _names(path, fh):
                return False
            path.unlink()
            return True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def waited_lock(path: Path, holder: str, waiting: Callable[[str], None]) -> Iterator[None]:
    """`file_lock` for a whole command: when another process holds `path`, one line to
    `waiting` names the lock and what holds it (the `holder` text it wrote, such as
    `trecho materialize (pid 123)`), then this one waits its turn; once held, `holder`
    is written into the lock file for the next one to name."""
    said = False
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = path.open("a+")
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                other = fh.read().strip() or "another process"
                if not said:
                    waiting(f"waiting for the lock {path}: held by {other}")
                    said = True
                fcntl.flock(fh, fcntl.LOCK_EX)
        except BaseException:
            fh.close()
            raise
        if _names(path, fh):  # else deleted while this waited (`remove_lock`): anew
            break
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()
    with fh:
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{holder}\n")
            fh.flush()
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)


def this_process(command: str) -> str:
    """How a lock holder names itself: the command and its process id."""
    return f"{command} (pid {os.getpid()})"
