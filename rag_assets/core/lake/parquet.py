"""One Parquet file per partition per stage: atomic writes, reads, footers, removal.

Each function takes the stage's folder under `derived/` (`stages.FOLDERS[stage]`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.core.lake.layout import Lake, LakeError, LakePath, write_atomically
from rag_assets.core.lake.listing import folder_names, folder_states
from rag_assets.core.stages import CHUNKS, LAKE_FOLDERS, NEXT_CHUNKS, STAGE_OF


def write_stage(
    lake: Lake, folder: str, key: str, rows: list[dict[str, Any]], schema: pa.Schema
) -> LakePath:
    """Write one partition's rows of a stage as Parquet in its `folder`, atomically.

    A reader sees the previous file or the new one, never a half-written file.
    """
    path = lake.stage_path(folder, key)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    write_atomically(path, sink.getvalue().to_pybytes())
    return path


def read_stage(
    lake: Lake, folder: str, key: str, columns: Sequence[str] | None = None
) -> pl.DataFrame:
    """One partition's rows of a stage (its `folder`) as a polars DataFrame, only its
    `columns` when named; a clear error if missing, naming the stage to materialize."""
    path = lake.stage_path(folder, key)
    if not path.exists():
        stage = STAGE_OF.get(folder, CHUNKS)  # or a backfill's chunks (`NEXT_CHUNKS`)
        raise LakeError(f"{path}: missing; materialize the '{stage}' stage for {key} first")
    wanted = list(columns) if columns is not None else None
    if isinstance(path, Path):
        return pl.read_parquet(path, columns=wanted)
    with path.open("rb") as fh:
        return pl.read_parquet(fh, columns=wanted)


def read_stages(lake: Lake, folders: Sequence[str], key: str) -> list[pl.DataFrame]:
    """One partition's rows of several stages (`read_stage` of each folder), read in one
    call, all files at once (a thread each: an object-store lake waits for one round
    trip, not one per stage in turn); a missing file raises as `read_stage` does, the
    first of `folders` missing."""
    with ThreadPoolExecutor(max_workers=max(1, len(folders))) as pool:
        return list(pool.map(lambda folder: read_stage(lake, folder, key), folders))


def first_rows(lake: Lake, folder: str, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The first row of each key's Parquet file in a stage's `folder`, for the keys whose
    file exists: local files in one multi-file read (a reconcile over many versions opens
    no file one at a time), object-store files one by one."""
    paths = {key: lake.stage_path(folder, key) for key in keys}
    paths = {key: path for key, path in paths.items() if path.exists()}
    if not paths or not all(isinstance(path, Path) for path in paths.values()):
        return {key: read_stage(lake, folder, key).row(0, named=True) for key in paths}
    by_path = {str(path): key for key, path in paths.items()}
    frame = pl.read_parquet(list(by_path), include_file_paths="_file")
    return {
        by_path[row.pop("_file")]: row
        for row in frame.unique("_file", keep="first", maintain_order=True).iter_rows(named=True)
    }


def stage_rows(lake: Lake, folder: str, key: str) -> int | None:
    """How many rows one partition's Parquet file in a stage's `folder` holds (read from
    its footer, not its data); None when the file does not exist."""
    path = lake.stage_path(folder, key)
    if not path.exists():
        return None
    if isinstance(path, Path):
        return pq.ParquetFile(path).metadata.num_rows
    with path.open("rb") as fh:
        return pq.ParquetFile(fh).metadata.num_rows


def remove_stage_files(lake: Lake, key: str) -> list[LakePath]:
    """Delete every stage's Parquet file of one partition, those a backfill cut beside
    the active chunks included (`NEXT_CHUNKS`); returns what was removed."""
    removed: list[LakePath] = []
    for folder in (*LAKE_FOLDERS, *staged_folders(lake)):
        path = lake.stage_path(folder, key)
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed


def staged_folders(lake: Lake) -> list[str]:
    """The chunks folders of the models being backfilled (`chunks-next/<model_id>`)."""
    parent = lake.root / "derived" / NEXT_CHUNKS
    if not parent.exists():
        return []
    return sorted(f"{NEXT_CHUNKS}/{p.name}" for p in parent.iterdir() if p.is_dir())


DOCUMENT_FIELDS = (
    "partition_key",
    "doc_id",
    "sha256",
    "title",
    "valid_from",
    "valid_to",
    "status",
    "doc_type",
    "metadata_json",
)
"""The `derived/documents` columns the change rule compares (`Derived.documents`)."""
_DATES = ("valid_from", "valid_to")


class Derived:
    """The lake's `derived/` folders, each listed once (names and file states) on first
    use, and what is read from their files kept in the lake's memo (`Lake.memo`) until
    a file changes: a reconcile plan or `trecho status` over a large lake opens only the
    files written since the last one. A listing is taken once: make another `Derived`
    to see files written since."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self._states: dict[str, dict[str, str]] = {}
        self._names: dict[str, set[str]] = {}

    def states(self, folder: str) -> dict[str, str]:
        """Partition key -> state of each Parquet file in a stage's folder."""
        if folder not in self._states:
            path = self.lake.root / "derived" / folder
            self._states[folder] = folder_states(path, ".parquet")
        return self._states[folder]

    def exists(self, folder: str, key: str) -> bool:
        """Whether the listing found `key`'s file in a stage's folder (its names only:
        no stat)."""
        if folder in self._states:
            return key in self._states[folder]
        if folder not in self._names:
            self._names[folder] = folder_names(self.lake.root / "derived" / folder, ".parquet")
        return key in self._names[folder]

    def any_file(self, key: str) -> bool:
        """Whether any stage's Parquet file of `key` exists."""
        return any(self.exists(folder, key) for folder in LAKE_FOLDERS)

    def rows(self, folder: str, key: str) -> int | None:
        """Rows of `key`'s file in a stage's folder (its footer, read again only when the
        file changed); None when there is no file."""
        state = self.states(folder).get(key)
        if state is None:
            return None
        kind = f"rows:{folder}"
        rows = self.lake.memo.get(kind, key, state)
        if not isinstance(rows, int):
            rows = stage_rows(self.lake, folder, key)
            if rows is None:  # deleted since the listing
                return None
            self.lake.memo.put(kind, key, state, rows)
        return rows

    def documents(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The `DOCUMENT_FIELDS` of each key's `derived/documents` row, for the keys that
        have one: kept rows as they are, the files written since in one read
        (`first_rows`)."""
        folder = "documents"
        states = self.states(folder)
        memo = self.lake.memo
        out: dict[str, dict[str, Any]] = {}
        missing = []
        for key in keys:
            if key not in states:
                continue
            kept = memo.get(folder, key, states[key])
            if isinstance(kept, dict):
                out[key] = {**kept, **{f: _date(kept[f]) for f in _DATES}}
            else:
                missing.append(key)
        for key, row in first_rows(self.lake, folder, missing).items():
            fields = {name: row.get(name) for name in DOCUMENT_FIELDS}
            out[key] = fields
            memo.put(folder, key, states[key], {**fields, **{f: _iso(fields[f]) for f in _DATES}})
        return out


def _iso(day: dt.date | None) -> str | None:
    return day.isoformat() if day else None


def _date(text: str | None) -> dt.date | None:
    return dt.date.fromisoformat(text) if text else None
