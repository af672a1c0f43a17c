"""File locks across processes on one host, for read-modify-write of shared lake files."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes and threads on one host (flock on `path`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def waited_lock(path: Path, holder: str, waiting: Callable[[str], None]) -> Iterator[None]:
    """`file_lock` for a whole command: when another process holds `path`, one line to
    `waiting` names the lock and what holds it (the `holder` text it wrote, such as
    `trecho materialize (pid 123)`), then this one waits its turn; once held, `holder`
    is written into the lock file for the next one to name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            other = fh.read().strip() or "another process"
            waiting(f"waiting for the lock {path}: held by {other}")
            fcntl.flock(fh, fcntl.LOCK_EX)
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
