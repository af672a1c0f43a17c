"""Writes to a table serialized by a file lock, and commit conflicts retried with backoff."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from rag_assets.core.lake import file_lock, local_lock_path

log = logging.getLogger(__name__)

_T = TypeVar("_T")


def _is_conflict(exc: Exception) -> bool:
    """Whether a LanceDB error is a lost commit race (worth retrying) and nothing else."""
    text = str(exc).lower()
    return any(
        word in text
        for word in ("commit conflict", "preempted", "contention", "incompatible transaction")
    )


def table_lock_path(uri: str, name: str) -> Path:
    """The local file `table_lock` locks for the table `name` (what a drop removes)."""
    return local_lock_path(uri, f".{name}.lock")


@contextmanager
def table_lock(uri: str, name: str) -> Iterator[None]:
    """Serialize writes to one table: across processes for a local database, across the
    processes of one host for an object store (hosts race through LanceDB's commit retry)."""
    with file_lock(table_lock_path(uri, name)):
        yield


def retry_commit(action: Callable[[], _T], what: str, attempts: int = 8) -> _T:
    """Run a LanceDB write, retrying commit conflicts with another writer (with backoff)."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except Exception as exc:  # LanceDB raises plain OSError/RuntimeError/ValueError
            if attempt == attempts or not _is_conflict(exc):
                raise
            delay = min(5.0, 0.1 * 2**attempt) * (0.5 + random.random())
            log.warning("%s: commit conflict (attempt %d), retrying in %.2fs", what, attempt, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")
