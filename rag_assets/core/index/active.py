"""The active-model pointer: which model's table search uses, and the model the lake is
switching to (its target): together the one record of the lake's model, which the code
location, `trecho status` and every command read (the environment names the model of a
lake that has none yet)."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import asdict, dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rag_assets.core.embedding import Embedder
from rag_assets.core.index.connection import connect
from rag_assets.core.index.locking import retry_commit, table_lock
from rag_assets.core.index.store import model_tables, table_name, table_or_none
from rag_assets.core.lake import validate_key_part
from rag_assets.core.stages import chunks_folder

ACTIVE_TABLE = "trecho_active_model"
TARGET_TABLE = "trecho_target_model"
"""The model the lake was asked to switch to (one row, as `ACTIVE_TABLE`): written by a
switch (the `switch_model` job, `trecho ui --model`, a fill of another model); search
stays on the active model until the target's table holds every live version."""


@dataclass(frozen=True)
class ModelRef:
    """The model whose table search uses: enough to embed queries the same way."""

    model: str
    query_prefix: str = ""
    passage_prefix: str = ""
    switched_at: str = ""

    @classmethod
    def of(cls, embedder: Embedder) -> ModelRef:
        """The reference of a configured embedder, stamped now."""
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        return cls(embedder.model, embedder.query_prefix, embedder.passage_prefix, now)

    def embedder(self, run: Embedder | None = None) -> Embedder:
        """An embedder of the model that filled the table: its identity (model, prompts)
        from this reference, how it runs (device, backend, threads, batch, query path)
        from `run`, the configured embedder (those give the same vectors, so they are
        the caller's choice); the defaults without `run`."""
        identity = {
            "model": self.model,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
        }
        return Embedder(**identity) if run is None else replace(run, **identity)

    @property
    def model_id(self) -> str:
        """The model id (and so the table) this reference points at."""
        return self.embedder().model_id


def read_active(uri: str | os.PathLike[str]) -> ModelRef | None:
    """The model search uses in this database, or None before anything was indexed."""
    return ref_in(table_or_none(connect(str(uri)), ACTIVE_TABLE))


def ref_in(pointer: Any | None) -> ModelRef | None:
    """The model a handle on the pointer table (`ACTIVE_TABLE`) names, or None when there
    is no such table or it is empty (a server keeps the handle, see `serve.engine`)."""
    if pointer is None:
        return None
    rows = pointer.to_arrow().to_pylist()
    return ModelRef(**rows[-1]) if rows else None


def write_active(uri: str | os.PathLike[str], ref: ModelRef) -> None:
    """Point search at `ref`'s table (one atomic overwrite of a one-row table)."""
    _write_ref(uri, ACTIVE_TABLE, ref, "switch active model")


def _write_ref(uri: str | os.PathLike[str], name: str, ref: ModelRef, what: str) -> None:
    """`ref` as the one row of the table `name` (created, else overwritten atomically)."""
    db = connect(str(uri))
    data = pa.Table.from_pylist(
        [asdict(ref)],
        schema=pa.schema([(field, pa.string()) for field in asdict(ref)]),
    )
    with table_lock(str(uri), name):
        mode = "overwrite" if name in model_tables(uri, prefix="") else "create"
        retry_commit(lambda: db.create_table(name, data, mode=mode), what)


def read_target(uri: str | os.PathLike[str]) -> ModelRef | None:
    """The model the lake was last asked to switch to (None: never asked)."""
    if _absent(uri):
        return None
    return ref_in(table_or_none(connect(str(uri)), TARGET_TABLE))


def write_target(uri: str | os.PathLike[str], ref: ModelRef) -> None:
    """Record `ref` as the model the lake switches to (search moves to it once its table
    holds every live version); the active model itself cancels a pending switch."""
    _write_ref(uri, TARGET_TABLE, ref, "record the model to switch to")


def lake_model(uri: str | os.PathLike[str]) -> ModelRef | None:
    """The lake's model: the one it is switching to, else the one search uses; None on a
    lake where nothing was indexed nor asked for (the configured model then decides)."""
    if _absent(uri):
        return None
    return read_target(uri) or read_active(uri)


def pending_switch(uri: str | os.PathLike[str]) -> ModelRef | None:
    """The model the lake is switching to while search still uses another (None: no
    switch pending, or nothing indexed yet)."""
    target, active = read_target(uri), read_active(uri)
    if target is None or active is None or target.model_id == active.model_id:
        return None
    return target


def _absent(uri: str | os.PathLike[str]) -> bool:
    """Whether `uri` is a local database folder not created yet (opening it would create
    nothing to read, and a code location must not create folders where it loads)."""
    text = str(uri)
    return "://" not in text and not os.path.isdir(text)


def committed_keys(uri: str | os.PathLike[str], doc_id: str | None = None) -> set[str]:
    """The versions the table search uses holds (its active model's); empty before
    anything was indexed. What counts as indexed when a newer version supersedes.
    `doc_id`: only that document's versions (what a version's run asks: its rows
    filtered in LanceDB, not every key of the table read back)."""
    active = read_active(uri)
    if active is None:
        return set()
    tbl = table_or_none(connect(str(uri)), table_name(active.model_id))
    if tbl is None:
        return set()
    query = tbl.search()
    if doc_id is not None:  # '~' sorts after every character a key may hold
        validate_key_part(doc_id, "doc_id")
        query = query.where(f"partition_key >= '{doc_id}@' AND partition_key < '{doc_id}@~'")
    keys = query.select(["partition_key"]).limit(None).to_arrow()
    return set(pc.unique(keys.column("partition_key")).to_pylist())


def active_embedder(uri: str | os.PathLike[str], configured: Embedder) -> Embedder:
    """The embedder search must use: the active model's (see `write_active`), else the
    configured one (nothing indexed yet, or a database from before the switch existed)."""
    return embedder_for(read_active(uri), configured)


def embedder_for(ref: ModelRef | None, configured: Embedder) -> Embedder:
    """The embedder of the active model `ref` run the way `configured` runs (device,
    backend, threads, query path), or `configured` itself when nothing is active yet."""
    return configured if ref is None else ref.embedder(configured)


def chunks_folder_for(db_uri: str | os.PathLike[str], model_id: str) -> str:
    """Where a model's chunks are under `derived/`: `chunks` for the model search uses
    (or the first model indexed), `chunks-next/<model_id>` for one being backfilled,
    beside the active model's chunks until search switches to it (`stages.NEXT_CHUNKS`)."""
    active = read_active(db_uri)
    backfilling = active is not None and active.model_id != model_id
    return chunks_folder(model_id if backfilling else None)
