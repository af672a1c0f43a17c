"""One Parquet file per partition per stage: atomic writes, reads, footers, removal.

Each function takes the stage's folder under `derived/` (`stages.FOLDERS[stage]`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.core.lake.layout import Lake, LakeError, LakePath, _write_atomically
from rag_assets.core.stages import LAKE_FOLDERS, STAGE_OF


def write_stage(
    lake: Lake, folder: str, key: str, rows: list[dict[str, Any]], schema: pa.Schema
) -> LakePath:
    """Write one partition's rows of a stage as Parquet in its `folder`, atomically.

    A reader sees the previous file or the new one, never a half-written file.
    """
    path = lake.stage_path(folder, key)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink)
    _write_atomically(path, sink.getvalue().to_pybytes())
    return path


def read_stage(lake: Lake, folder: str, key: str) -> pl.DataFrame:
    """One partition's rows of a stage (its `folder`) as a polars DataFrame; a clear
    error if missing, naming the stage to materialize."""
    path = lake.stage_path(folder, key)
    if not path.exists():
        stage = STAGE_OF[folder]
        raise LakeError(f"{path}: missing; materialize the '{stage}' stage for {key} first")
    if isinstance(path, Path):
        return pl.read_parquet(path)
    with path.open("rb") as fh:
        return pl.read_parquet(fh)


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
    """Delete every stage's Parquet file of one partition; returns what was removed."""
    removed: list[LakePath] = []
    for folder in LAKE_FOLDERS:
        path = lake.stage_path(folder, key)
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed
