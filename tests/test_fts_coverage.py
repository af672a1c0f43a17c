"""The full-text index keeps up with runs that are not `trecho materialize`'s (issue 56,
item 6): the last run of a sensor's batch leaves every row of the table in the full-text
index, the hourly table upkeep folds in rows any run left searched flat, and `trecho
status` says how many rows the full-text index covers. Before, rows written by the UI's
runs stayed searched flat (`FTS (0 indexed, 218 searched flat)`) until a `trecho
materialize`.

A real Dagster instance, the sensor's requests run one after the other as its daemon
launches them, real PDFs, the bundled MiniLM.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance

from rag_assets.cli import main
from rag_assets.core.embedding import Embedder
from rag_assets.core.index import Index
from rag_assets.definitions import build_definitions

from .conftest import DOCS, copy_lake

pytestmark = pytest.mark.slow  # indexes versions through Dagster runs

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def full_text_line(lake_root: Path, capsys) -> str:
    """The `indexes:` line of `trecho status`."""
    capsys.readouterr()
    assert main(["status", "--lake", str(lake_root)]) == 0
    return next(x for x in capsys.readouterr().out.splitlines() if x.startswith("indexes:"))


def test_the_sensors_runs_leave_every_row_in_the_full_text_index(
    small_lake, evaluate_sensor, embedder: Embedder, capsys
) -> None:
    lake = small_lake
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    job = defs.resolve_job_def("index_documents")
    result = evaluate_sensor(defs, instance, lake)
    assert len(result.run_requests) == 2
    for request in result.run_requests:  # one after the other, as the daemon starts them
        assert job.execute_in_process(
            partition_key=request.partition_key,
            instance=instance,
            tags={**request.tags, "dagster/sensor_name": "raw_folder_sensor"},
            run_config=QUIET,
        ).success
    stats = Index(lake.lancedb_dir, embedder).index_stats()
    assert stats.fts is not None and stats.fts.unindexed_rows == 0, stats.summary()
    line = full_text_line(lake.root, capsys)
    assert f"0 searched flat, 1 segment, covers {stats.rows} of {stats.rows} rows)" in line


def test_the_table_upkeep_folds_in_rows_left_searched_flat(
    tmp_path: Path, upsert, embedder: Embedder, capsys
) -> None:
    lake = copy_lake(tmp_path / "lake", [], [])
    index = Index(lake.lancedb_dir, embedder)
    first, second = sorted(DOCS)[:2]
    upsert(index, first)  # the full-text index built with the table
    upsert(index, second)  # a few rows more: searched flat (under INDEX_LAG_ROWS)
    from rag_assets.core.index import ModelRef, write_active

    write_active(lake.lancedb_dir, ModelRef.of(embedder))
    flat = index.index_stats().fts.unindexed_rows
    assert flat > 0
    assert f"{flat} searched flat" in full_text_line(lake.root, capsys)

    defs = build_definitions(str(lake.root))
    upkeep = defs.resolve_job_def("table_upkeep_job")
    assert upkeep.execute_in_process(instance=DagsterInstance.ephemeral()).success
    rows = index.index_stats().rows
    assert f"0 searched flat, 1 segment, covers {rows} of {rows} rows)" in full_text_line(
        lake.root, capsys
    )
