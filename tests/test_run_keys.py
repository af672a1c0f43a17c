"""Run keys never collide with a past run that did other work (issue 56): after a model
switch there and back, through each route a user has (`trecho ui --model X`, then
`trecho ui --model` the first again; a backfill from the UI with the model in
its run config, there and back), the raw-folder sensor still indexes what needs it, and
a PDF dropped afterwards is asked for, run and searchable.

A real Dagster instance; the sensor's run requests are run as its daemon runs them:
a request whose run key a run of the sensor already carries is skipped (Dagster's
`Skipping N runs for sensor ... already completed with run keys`).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance, Definitions, RunsFilter

from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import Index, committed_keys, read_active
from rag_assets.core.lake.layout import Lake
from rag_assets.definitions import build_definitions

from .conftest import SAMPLE_LAKE, copy_lake

# slow: indexes versions through Dagster runs, twice per model switch
pytestmark = pytest.mark.slow

OPS, V7 = "manual-operacao@v1", "manual-beneficiario@v7"
SENSOR = "raw_folder_sensor"
RUN_KEY_TAG, SENSOR_TAG = "dagster/run_key", "dagster/sensor_name"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def as_the_daemon(defs: Definitions, instance: DagsterInstance, result: Any) -> dict[str, Any]:
    """Each run request of a sensor result, as Dagster's sensor daemon carries it out: skipped
    when a run of this sensor already carries its run key, else run (its asset selection,
    tagged with its run key and the sensor). The run results by partition key, None for a
    skipped request."""
    job = defs.resolve_job_def("index_documents")
    out: dict[str, Any] = {}
    for request in getattr(result, "run_requests", None) or []:
        tags = {RUN_KEY_TAG: request.run_key, SENSOR_TAG: SENSOR}
        if instance.get_runs(RunsFilter(tags=tags)):
            out[request.partition_key] = None
            continue
        out[request.partition_key] = job.execute_in_process(
            partition_key=request.partition_key,
            instance=instance,
            tags={**request.tags, **tags},
            asset_selection=request.asset_selection,
            run_config=QUIET,
            raise_on_error=False,
        )
    return out


def backfill(defs: Definitions, instance: DagsterInstance, model: str) -> None:
    """The UI's backfill of `embed_documents` over every partition, the model given in its
    run config (`resources: {embedder: {config: {model: ...}}}`)."""
    job = defs.resolve_job_def("embed_documents")
    config = {**QUIET, "resources": {"embedder": {"config": {"model": model}}}}
    for key in instance.get_dynamic_partitions("doc_versions"):
        assert job.execute_in_process(
            partition_key=key, instance=instance, run_config=config, tags={"dagster/backfill": "b"}
        ).success


class Sensor:
    """The raw-folder sensor ticking on one instance, its cursor kept across ticks (and
    across code location reloads, as the daemon keeps it)."""

    def __init__(self, evaluate_sensor: Any, instance: DagsterInstance, lake: Lake) -> None:
        self.evaluate, self.instance, self.lake = evaluate_sensor, instance, lake
        self.cursor: str | None = None

    def tick_and_run(self, defs: Definitions) -> dict[str, Any]:
        """One tick (with its second look) and its requests carried out as the daemon does."""
        result = self.evaluate(defs, self.instance, self.lake, self.cursor)
        self.cursor = result.cursor
        return as_the_daemon(defs, self.instance, result)


def ops_indexed(evaluate_sensor: Any, tmp_path: Path) -> tuple[Sensor, Definitions]:
    """A lake of the operations manual on a new instance, indexed by one tick of the
    sensor: the start of every there-and-back test."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    sensor = Sensor(evaluate_sensor, DagsterInstance.ephemeral(), lake)
    defs = build_definitions(str(lake.root))
    assert sensor.tick_and_run(defs)[OPS].success
    return sensor, defs


def ui_with_model(lake: Lake, model: str) -> Definitions:
    """What `trecho ui --model <model>` loads: the model made the lake's (as the command
    does before it starts the UI), then the code location's definitions."""
    from rag_assets.cli.common import switch_named
    from rag_assets.settings import Settings

    settings = Settings.from_env()
    args = argparse.Namespace(model=model, query_prefix=None, passage_prefix=None, db=None)
    args.settings = settings
    switch_named(args, lake)
    return build_definitions(str(lake.root))


def drop_new_pdf(lake: Lake) -> None:
    """A new version dropped into raw/: the beneficiary manual's v7 (PDF and sidecar)."""
    folder = lake.raw_dir / "manual-beneficiario"
    folder.mkdir(parents=True)
    for suffix in (".pdf", ".yaml"):
        shutil.copy(SAMPLE_LAKE / "raw" / "manual-beneficiario" / f"v7{suffix}", folder)


def assert_new_pdf_indexed(sensor: Sensor, defs: Definitions, embedder: Embedder) -> None:
    """A PDF dropped now is asked for by the sensor, run, and in the table search uses."""
    drop_new_pdf(sensor.lake)
    runs = sensor.tick_and_run(defs)
    assert V7 in runs and runs[V7] is not None and runs[V7].success, runs
    db = sensor.lake.lancedb_dir
    assert read_active(db).model_id == embedder.model_id
    assert committed_keys(db) == {OPS, V7}


def test_back_to_the_configured_model_the_sensor_indexes_again(
    evaluate_sensor, tmp_path: Path, embedder: Embedder, twin: str
) -> None:
    sensor, first = ops_indexed(evaluate_sensor, tmp_path)
    lake = sensor.lake

    # `trecho ui --model <twin>`: the sensor fills the twin's table, search switches to it
    runs = sensor.tick_and_run(ui_with_model(lake, twin))
    assert runs[OPS] is not None and runs[OPS].success
    assert read_active(lake.lancedb_dir).model_id == Embedder(model=twin).model_id

    # `trecho ui --model <first>` again: the sensor fills the first model's table again
    # (its inputs are those of the first run; the work is not: the index moved since)
    first = ui_with_model(lake, "all-MiniLM-L6-v2")
    runs = sensor.tick_and_run(first)
    assert runs[OPS] is not None and runs[OPS].success, "the run was skipped as done"
    assert read_active(lake.lancedb_dir).model_id == embedder.model_id
    assert_new_pdf_indexed(sensor, first, embedder)


def test_after_a_backfill_there_and_back_the_sensor_indexes_a_new_pdf(
    evaluate_sensor, tmp_path: Path, embedder: Embedder, twin: str
) -> None:
    sensor, defs = ops_indexed(evaluate_sensor, tmp_path)
    lake, instance = sensor.lake, sensor.instance

    backfill(defs, instance, twin)  # the sensor stopped, as docs/models.md says
    assert read_active(lake.lancedb_dir).model_id == Embedder(model=twin).model_id
    backfill(defs, instance, "all-MiniLM-L6-v2")
    assert read_active(lake.lancedb_dir).model_id == embedder.model_id
    assert_new_pdf_indexed(sensor, defs, embedder)


def test_a_failed_run_is_not_asked_again_with_the_same_inputs(
    evaluate_sensor, tmp_path: Path
) -> None:
    lake = Lake(tmp_path / "lake")
    broken = lake.raw_dir / "relatorio" / "v1.pdf"
    broken.parent.mkdir(parents=True)
    broken.write_text("this is not a pdf", encoding="utf-8")
    instance = DagsterInstance.ephemeral()
    sensor = Sensor(evaluate_sensor, instance, lake)
    defs = build_definitions(str(lake.root))
    assert not sensor.tick_and_run(defs)["relatorio@v1"].success
    assert sensor.tick_and_run(defs) == {}  # the cursor: asked for already, same inputs
    sensor.cursor = None  # lost (a daemon reset): asked again, with the key of the failed run
    assert sensor.tick_and_run(defs) == {"relatorio@v1": None}


def test_after_a_backfill_with_the_sensor_off_a_new_pdf_is_searchable(
    evaluate_sensor, tmp_path: Path, twin: str
) -> None:
    """The sensor's cursor held the first run's request; a backfill between two ticks
    (the sensor off) made it stale: the version was never asked again, and a new PDF went
    into a table search does not use. The backfill made its model the lake's: the code
    location, once reloaded, indexes the new PDF into that model's table."""
    sensor, defs = ops_indexed(evaluate_sensor, tmp_path)
    lake, instance = sensor.lake, sensor.instance
    backfill(defs, instance, twin)  # the sensor stopped, then started again
    drop_new_pdf(lake)
    assert sensor.tick_and_run(defs) == {}  # built for the model the lake left: reload first
    runs = sensor.tick_and_run(build_definitions(str(lake.root)))  # Deployment -> Reload
    # OPS again too: the backfill's runs recorded the code versions of the definitions'
    # model, not of the one their run config named (what the switch_model job avoids)
    assert set(runs) == {OPS, V7} and all(r is not None and r.success for r in runs.values())
    assert committed_keys(lake.lancedb_dir) == {OPS, V7}  # both in the table search uses
    assert read_active(lake.lancedb_dir).model_id == Embedder(model=twin).model_id


def test_a_run_that_left_its_version_short_is_not_asked_again_every_tick(
    evaluate_sensor, tmp_path: Path, embedder: Embedder
) -> None:
    sensor, defs = ops_indexed(evaluate_sensor, tmp_path)
    lake = sensor.lake
    assert sensor.tick_and_run(defs) == {}
    # rows gone outside any run: the version needs a run, with the inputs of the one that
    # indexed it and nothing indexed since: that run's key (Dagster has run it), once
    table = Index(lake.lancedb_dir, embedder)
    table.db.open_table(table.table_name).delete(f"partition_key = '{OPS}'")
    assert sensor.tick_and_run(defs) == {OPS: None}
    assert sensor.tick_and_run(defs) == {}


def test_own_records_are_read_in_batches(tmp_path: Path) -> None:
    """A model switch of thousands of versions plans as many runs: their index records
    are read back in batches (SQLite caps the parameters of one query)."""
    from types import SimpleNamespace

    from dagster import AssetKey, AssetMaterialization, DagsterEventType

    from rag_assets.core.lifecycle.reconcile import Run
    from rag_assets.orchestration.plans import RECORDS_PER_FETCH, keep_own_records

    instance = DagsterInstance.ephemeral()
    keys = [f"doc{i}@v1" for i in range(RECORDS_PER_FETCH + 5)]
    for key in keys:
        instance.report_runless_asset_event(AssetMaterialization("embeddings", partition=key))
    latest = instance.get_latest_storage_id_by_partition(
        AssetKey("embeddings"), DagsterEventType.ASSET_MATERIALIZATION
    )
    plan = SimpleNamespace(
        run={k: Run(k, "new", "0" * 64, "f" * 64, indexed=latest[k]) for k in keys}
    )
    keep_own_records(instance, plan)  # type: ignore[arg-type]
    assert {k: r.indexed for k, r in plan.run.items()} == latest  # no run made them: kept
