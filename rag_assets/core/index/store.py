"""The store's layout: one LanceDB table per embedding model, its schema, and opening it."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa

from rag_assets.core.embedding import Embedder
from rag_assets.core.index.connection import connect
from rag_assets.core.index.locking import table_lock
from rag_assets.core.lake import CHUNKS

log = logging.getLogger(__name__)
S = TypeVar("S")
T = TypeVar("T")

EXTRA_COLUMNS: tuple[str, ...] = ("status", "valid_from", "valid_to", "title")
"""Columns the store adds to the chunk columns, besides `vector`."""
NOT_IN_HITS: tuple[str, ...] = ("ordinal", "truncated", "content_hash")
"""Chunk columns a search hit does not carry (each column read costs, per hit)."""
HIT_COLUMNS: list[str] = [c for c in (*CHUNKS.names, *EXTRA_COLUMNS) if c not in NOT_IN_HITS]
"""What a search reads back for each hit: the columns of `Hit`."""
KEY_COLUMNS: list[str] = ["partition_key", "chunk_id"]
"""What hybrid search reads of each candidate (with its score and row id): the key that
fusion joins the retrievers' lists on, and the tie order of equal scores."""


def table_name(model_id: str) -> str:
    """The LanceDB table holding one embedding model's vectors."""
    return f"chunks__{model_id}"


def store_schema(dimension: int) -> pa.Schema:
    """Chunk columns plus the vector and the validity columns of a version."""
    return pa.schema(
        [
            *CHUNKS,
            pa.field("vector", pa.list_(pa.float32(), dimension)),
            pa.field("status", pa.string()),
            pa.field("valid_from", pa.date32()),
            pa.field("valid_to", pa.date32()),
            pa.field("title", pa.string()),
        ]
    )


def as_chunk_table(chunks: pa.Table | pl.DataFrame) -> pa.Table:
    table = chunks.to_arrow() if isinstance(chunks, pl.DataFrame) else chunks
    missing = [name for name in CHUNKS.names if name not in table.column_names]
    if missing:
        raise ValueError(f"chunks lack the columns {missing} (see schemas.CHUNKS)")
    return table.select(CHUNKS.names).cast(CHUNKS)


def table_or_none(db: Any, name: str) -> Any | None:
    """A table of `db`, or None when it does not exist (yet)."""
    try:
        return db.open_table(name)
    except ValueError as exc:
        if "not found" in str(exc).lower() or "does not exist" in str(exc).lower():
            return None
        raise


def model_tables(uri: str | os.PathLike[str], prefix: str = "chunks__") -> list[str]:
    """Every model's index table in a database (`chunks__<model_id>`), or every table
    whose name starts with `prefix`."""
    db = connect(str(uri))
    names: list[str] = []
    token = None
    while True:
        page = db.list_tables(page_token=token)
        names += [n for n in page.tables if n.startswith(prefix)]
        token = page.page_token
        if not token:
            return sorted(names)


READ_DEADLINE_S = 5.0
"""How long a read keeps starting again on the latest table version while writes keep
deleting the files of the version it read (`read_latest`): each attempt reads a newer
version, so it ends as soon as the writes pause."""


class TableMoved(RuntimeError):
    """Rows a search ranked could not be read back from the table version it read."""


class TableDropped(RuntimeError):
    """The table a read started on was dropped under it (a model switch drops the old
    model's table once search points at the new one): the read has no latest version to
    go on with, and is to be asked again of the active model's table (`serve.engine`)."""


def vanished(exc: BaseException, tbl: Any) -> bool:
    """Whether a read of the table version `tbl` reads failed because a file of that
    version is gone: a purge (`core.lifecycle.purge`) or a cleanup deleted it once a
    newer version was committed. Reading again from the latest version answers it. A
    file missing with no newer version (a broken table) is no such case."""
    text = str(exc).lower()
    if not isinstance(exc, TableMoved) and not ("not found" in text and ".lance" in text):
        return False
    try:
        latest = max(int(v["version"]) for v in tbl.list_versions())
    except Exception:  # its versions cannot even be listed: dropped, read afresh
        return True
    return latest > int(tbl.version)


def read_latest(
    state: S,
    read: Callable[[S], T],
    reopen: Callable[[], S],
    table: Callable[[S], Any] = lambda state: state,
) -> T:
    """`read(state)`, started again on the latest table version (`reopen`) as long as the
    version it read lost files to a newer commit (`vanished`: a purge keeps only the
    latest version), for at most READ_DEADLINE_S: a read may see an older version, never
    fail because a newer one removed a file under it. `table` gives the handle in
    `state` (the state itself by default). Raises TableDropped when the table itself is
    gone (no latest version: a model switch dropped it), never reads None."""
    deadline = time.monotonic() + READ_DEADLINE_S
    while True:
        try:
            return read(state)
        except Exception as exc:  # LanceDB raises plain OSError/RuntimeError/ValueError
            tbl = table(state)
            if tbl is None or time.monotonic() > deadline or not vanished(exc, tbl):
                raise
            log.info("%s: read again from the latest version: %s", tbl.name, exc)
            state = reopen()
            if table(state) is None:
                raise TableDropped(f"{tbl.name} was dropped during the read") from exc


class NoLongerLive(Exception):
    """A version found not live at commit time (revoked, deleted, superseded, expired
    while its run was under way): nothing of it was written."""


class ModelTable:
    """One embedding model's LanceDB table, opened afresh at each call, and its write
    lock: what an `Index`'s writing, upkeep and retrieval share."""

    uri: str
    embedder: Embedder
    db: Any

    @property
    def table_name(self) -> str:
        """This model's table name."""
        return table_name(self.embedder.model_id)

    def current_table(self) -> Any | None:
        """The table, or None when it does not exist yet."""
        return table_or_none(self.db, self.table_name)

    def reopen_table(self) -> Any | None:
        """The table at its latest version, after a read of an older one found files
        gone (`vanished`)."""
        return self.current_table()

    def exists(self) -> bool:
        """Whether this model's table has been created."""
        return self.current_table() is not None

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """Serialize this table's writes across processes and threads (local folders).

        Two things LanceDB 0.40 does not protect against on its own: two processes that
        both see no table both "create" it, the second silently overwriting the first
        one's rows; and two concurrent merges of the same partition both insert its new
        rows (duplicates). Writes take well under a second, so a lock costs nothing
        worth measuring. Object stores get no lock: there, never write one partition
        from two runs at once.
        """
        with table_lock(self.uri, self.table_name):
            yield
