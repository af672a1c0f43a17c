"""A LanceDB table kept open across requests and moved to its latest committed version
cheaply (`FollowedTable`), and the index that reads its table so (`FollowedIndex`): how
`trecho serve` follows the tables other processes write (`serve.engine`'s module doc
tells the whole story)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_assets.core.embedding import Embedder
from rag_assets.core.index.index import Index
from rag_assets.core.index.store import table_or_none

SETTLED_NS = 2_000_000_000
"""How long (2 s) after the last change of a table's `_versions` folder an unchanged
look at the folder is trusted to mean an unchanged table. A change within the same tick
of the file system's clock as the last one (coarse clocks, network file systems) leaves
the folder's times as they were: until its last change is this old, every request asks
LanceDB for the latest version as well."""


class FollowedTable:
    """One table of a LanceDB database, kept open across requests and moved to its latest
    committed version cheaply (see the module doc).

    `current()` gives a handle on the latest version, or None while the table does not
    exist. A second handle (the probe) is the one moved with `checkout_latest` to learn
    the latest version number; handles given out are never moved.

    Moving the probe reads the table's latest manifest through LanceDB (a fraction of a
    millisecond to a few, per table), so for a table in a local folder it is done only
    when the table may have changed: a commit adds a
    manifest to the table's `_versions` folder, a cleanup removes some, a drop removes the
    folder and a re-create makes a new one, and each changes the folder's inode, times
    or size (`os.stat`, a few microseconds). Until that look has seen the folder settled
    (SETTLED_NS) the probe is moved at every request; on an object store, always.
    """

    def __init__(self, db: Any, name: str) -> None:
        self.db = db
        self.name = name
        self._probe: Any | None = None
        self._table: Any | None = None
        self._version = -1
        self._lock = threading.Lock()
        self._folder: Path | None = None
        """The table's `_versions` folder (local tables, once the table was opened)."""
        self._seen: tuple[int, int, int, int] | None = None
        """The folder as it was (`_look`) when the handle was last found current."""
        self._settled = False
        """Whether the folder's last change was SETTLED_NS old then."""

    def current(self) -> Any | None:
        """A handle on the table's latest committed version (None: no such table)."""
        return self.snapshot()[0]

    def snapshot(self) -> tuple[Any | None, int]:
        """`current()` and the version its handle reads (-1: no table)."""
        with self._lock:
            now = time.time_ns()
            look = self._look()  # before LanceDB is asked: never newer than what it says
            if self._folder is not None and look != self._seen:
                # a local table changed, was dropped or re-created (its version numbers
                # then start again, so only a new handle is sure to read the new table)
                self._probe = None
                self._table = self._open()
                self._version = int(self._table.version) if self._table is not None else -1
            elif look is None or not self._settled:  # remote, unknown, or just changed
                latest = self._latest()
                if latest is None:
                    self._table, self._version = None, -1
                elif self._table is None or latest != self._version:
                    self._table = self._open()
                    self._version = int(self._table.version) if self._table is not None else -1
            self._seen = look
            self._settled = look is not None and now - max(look[1], look[2]) > SETTLED_NS
            return self._table, self._version

    def refresh(self) -> tuple[Any | None, int]:
        """`snapshot()` on a handle opened now, whatever the folder says: after a read of
        the handle given out found its version's files deleted (a purge)."""
        with self._lock:
            self._probe = None
            self._table = self._open()
            self._version = int(self._table.version) if self._table is not None else -1
            self._seen, self._settled = self._look(), False
            return self._table, self._version

    def _look(self) -> tuple[int, int, int, int] | None:
        """The `_versions` folder's (inode, mtime, ctime, size); None when it is not a
        local folder, not known yet or not there."""
        if self._folder is None:
            return None
        try:
            st = os.stat(self._folder)
        except OSError:  # dropped (or not readable): LanceDB says what there is
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)

    def _latest(self) -> int | None:
        if self._probe is not None:
            try:
                self._probe.checkout_latest()
                return int(self._probe.version)
            except Exception:  # dropped (and maybe re-created): open it again below
                self._probe = None
        self._probe = self._open()
        if self._probe is None:
            return None
        if self._folder is None:
            self._folder = _versions_folder(self._probe.uri)
        return int(self._probe.version)

    def _open(self) -> Any | None:
        return table_or_none(self.db, self.name)


class FollowedIndex(Index):
    """An `Index` that reads its table through a `FollowedTable` (kept open, following
    new versions) instead of opening it at each call; within `pinned()`, every read of
    the calling thread uses the one version pinned (one version check per request).
    What a long-running server searches (`serve.engine.Engine`)."""

    def __init__(self, uri: str, embedder: Embedder, **options: Any) -> None:
        """`options`: `Index`'s keyword arguments (ANN settings, vector weight)."""
        super().__init__(uri, embedder, **options)
        self.followed = FollowedTable(self.db, self.table_name)
        self._local = threading.local()

    @contextmanager
    def pinned(self) -> Iterator[tuple[Any | None, int]]:
        """The table's latest version and its number, used by every read of this thread
        until the block ends: the checks of a request and its retrievers read the same
        version."""
        snapshot = self.followed.snapshot()
        self._local.snapshot = snapshot
        try:
            yield snapshot
        finally:
            del self._local.snapshot

    def current_table(self) -> Any | None:
        snapshot = getattr(self._local, "snapshot", None)
        return snapshot[0] if snapshot is not None else self.followed.current()

    def refresh(self) -> tuple[Any | None, int]:
        """The table's latest version on a new handle, pinned for the rest of the block
        when one is pinned: after a read found its version's files purged."""
        snapshot = self.followed.refresh()
        if getattr(self._local, "snapshot", None) is not None:
            self._local.snapshot = snapshot
        return snapshot

    def reopen_table(self) -> Any | None:
        return self.refresh()[0]


def _versions_folder(uri: str) -> Path | None:
    """The `_versions` folder of the table at `uri` (LanceDB's layout: one manifest per
    version), or None for a table on an object store or laid out otherwise."""
    if "://" in uri and not uri.startswith("file://"):
        return None
    folder = Path(uri.removeprefix("file://")) / "_versions"
    return folder if folder.is_dir() else None
