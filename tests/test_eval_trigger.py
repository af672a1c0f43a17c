"""The eval report after failures (issue 56): one trigger (the automation condition; the
daily schedule only while the automation sensor is stopped), asked again once after a
failed run, and skipped with a reason on a lake with nothing indexed.

A real Dagster instance: the automation conditions evaluated as the automation sensor
evaluates them, the schedule ticked through its context, eval runs that really fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dagster import (
    AssetKey,
    AssetMaterialization,
    DagsterInstance,
    RunRequest,
    SkipReason,
    build_schedule_context,
    evaluate_automation_conditions,
)

from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import Index, ModelRef, write_active
from rag_assets.core.lake.layout import Lake
from rag_assets.definitions import build_definitions

REPORT = AssetKey("eval_report")
KEY = "doc-a@v1"


def report_asked(defs: Any, instance: DagsterInstance) -> int:
    """How many eval reports the automation asks for at a tick now."""
    return evaluate_automation_conditions(defs, instance).get_num_requested(REPORT)


def index_changed(instance: DagsterInstance) -> None:
    """A version indexed (an `embeddings` materialization), as a run's would be recorded."""
    instance.report_runless_asset_event(AssetMaterialization("embeddings", partition="doc@v1"))


def failed_report(defs: Any, instance: DagsterInstance) -> None:
    """An eval report run that fails (a strategy no eval knows)."""
    config = {"ops": {"eval_report": {"config": {"strategies": ["no-such-strategy"]}}}}
    result = defs.resolve_job_def("eval_report_job").execute_in_process(
        instance=instance, run_config=config, raise_on_error=False
    )
    assert not result.success


def test_a_failed_report_is_asked_again_once(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    assert report_asked(defs, instance) == 0  # nothing indexed: no report
    index_changed(instance)
    assert report_asked(defs, instance) == 1
    failed_report(defs, instance)
    assert report_asked(defs, instance) == 1  # the failed run is retried (it was not)
    failed_report(defs, instance)
    assert report_asked(defs, instance) == 0  # failed again: not every tick
    index_changed(instance)
    assert report_asked(defs, instance) == 1  # the next index change asks again


def cron_tick(defs: Any, instance: DagsterInstance) -> RunRequest | SkipReason:
    """The daily eval schedule's evaluation at its cron time."""
    schedule = defs.resolve_schedule_def("daily_eval_report")
    with build_schedule_context(instance=instance, resources=defs.resources) as context:
        data = schedule.evaluate_tick(context)  # as the daemon evaluates it
    if data.skip_message is not None:
        return SkipReason(data.skip_message)
    (only,) = data.run_requests or []
    return only


@pytest.fixture
def home_instance(tmp_path: Path) -> Any:
    """A persistent instance (a schedule's context reopens it from its reference)."""
    (tmp_path / "dagster_home").mkdir()
    instance = DagsterInstance.local_temp(str(tmp_path / "dagster_home"))
    yield instance
    instance.dispose()


def test_the_daily_schedule_skips_an_empty_lake_saying_why(tmp_path: Path, home_instance) -> None:
    lake = Lake(tmp_path / "lake")
    result = cron_tick(build_definitions(str(lake.root)), home_instance)
    assert isinstance(result, SkipReason), result  # it ran the eval, which failed, every day
    assert result.skip_message == f"nothing is indexed yet under {lake.root}: no report to write"


def test_the_daily_schedule_leaves_the_report_to_the_automation_while_it_runs(
    tmp_path: Path, home_instance, embedder: Embedder, upsert, monkeypatch
) -> None:
    lake = Lake(tmp_path / "lake")
    upsert(Index(lake.lancedb_dir, embedder), KEY)
    write_active(lake.lancedb_dir, ModelRef.of(embedder))
    defs = build_definitions(str(lake.root))
    result = cron_tick(defs, home_instance)
    assert isinstance(result, SkipReason), result  # both fired at once: two full evals
    assert "stages_follow_upstream writes the report" in (result.skip_message or "")
    monkeypatch.setattr("rag_assets.orchestration.schedules.automation_running", lambda _i: False)
    assert isinstance(cron_tick(defs, home_instance), RunRequest)  # the automation stopped
