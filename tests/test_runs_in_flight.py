"""Status and `trecho materialize` during a fill (issue 56, item 5): a version with a run
queued or running on the lake's Dagster instance is listed with that run's id, never
sent to `trecho materialize`, and `trecho materialize` leaves it to that run, saying so
(it started a second run of each before).

A real persistent instance (the lake's `.dagster`, as `trecho ui` and the commands open
it): one run really running (held at its first step by the version's lock, as a run of
another process holds it) and one queued, as the run queue holds it while the daemon
waits for a slot.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from dagster import DagsterEvent, DagsterEventType, DagsterRunStatus, RunsFilter

from rag_assets.cli import main
from rag_assets.core.lake import file_lock
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.materialize import QUIET, open_instance
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import copy_lake, sensor_tick

pytestmark = pytest.mark.slow  # runs the index job, then `trecho materialize`

OPS, V7 = "manual-operacao@v1", "manual-beneficiario@v7"
SENSOR_TAGS = {"dagster/sensor_name": "raw_folder_sensor"}


def origin_of(job_name: str):
    """Where a queued run's job comes from: this code location, as the UI's workspace
    loads it (the run queue requires it)."""
    from dagster._core.remote_origin import (
        InProcessCodeLocationOrigin,
        RemoteJobOrigin,
        RemoteRepositoryOrigin,
    )
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    location = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(module_name="rag_assets.definitions"), location_name="trecho"
    )
    return RemoteJobOrigin(RemoteRepositoryOrigin(location, "__repository__"), job_name)


def wait_for(check, what: str, timeout: float = 120.0) -> None:
    """Poll `check` until true (a run thread reaching its first step)."""
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_a_fill_in_flight_is_shown_with_its_runs_and_left_to_them(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-operacao", "manual-beneficiario"], [])
    monkeypatch.setenv("DAGSTER_HOME", str(lake.dagster_home))
    instance = open_instance(lake.dagster_home)
    defs = build_definitions(str(lake.root))
    instance.add_dynamic_partitions(DOC_VERSIONS, [OPS, V7])
    job = defs.resolve_job_def("index_documents")
    queued = instance.create_run_for_job(
        job,
        status=DagsterRunStatus.NOT_STARTED,
        tags={"dagster/partition": V7, **SENSOR_TAGS},
        remote_job_origin=origin_of(job.name),
    )
    enqueued = DagsterEvent(DagsterEventType.RUN_ENQUEUED.value, job_name=job.name)
    instance.report_dagster_event(enqueued, run_id=queued.run_id)  # as the run queue does
    assert instance.get_run_by_id(queued.run_id).status == DagsterRunStatus.QUEUED
    runs: list = []

    def started() -> bool:
        return bool(
            instance.get_runs(
                RunsFilter(statuses=[DagsterRunStatus.STARTED], tags={"dagster/partition": OPS})
            )
        )

    with file_lock(lake.lock_path(f".locks/{OPS}.lock")):  # another process's run holds it
        worker = threading.Thread(
            target=lambda: runs.append(
                job.execute_in_process(
                    partition_key=OPS, instance=instance, run_config=QUIET, tags=SENSOR_TAGS
                )
            )
        )
        worker.start()
        wait_for(started, "the run of OPS to start")
        running = instance.get_runs(RunsFilter(tags={"dagster/partition": OPS}))[0].run_id

        capsys.readouterr()
        assert main(["status", "--lake", str(lake.root)]) == 0
        out = capsys.readouterr().out
        lines = {k: line for line in out.splitlines() for k in (OPS, V7) if f" {k} " in line}
        assert lines[OPS].endswith(
            f"PENDING: running in run {running} (sensor raw_folder_sensor)"
        ), out
        assert lines[V7].endswith(
            f"PENDING: queued in run {queued.run_id} (sensor raw_folder_sensor)"
        ), out
        assert "trecho materialize" not in out and "2 with a run in flight" in out

        tick = sensor_tick(defs, instance, looks=1)  # the UI's sensor meanwhile
        assert not tick.run_requests
        said = tick.skip_reason.skip_message
        assert "2 version(s) with a run in flight" in said and f"run {running[:8]}" in said
        assert "nothing new or changed" not in said

        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
        out = capsys.readouterr().out
        assert f"skipped  {OPS}: running in run {running}" in out, out
        assert f"skipped  {V7}: queued in run {queued.run_id}" in out, out
        assert "left to it" in out and "[1/" not in out  # no run of its own
    worker.join(timeout=300)
    assert runs and runs[0].success  # the run that held it went on and indexed it
    partition_runs = instance.get_runs(RunsFilter(tags={"dagster/partition": OPS}))
    assert len(partition_runs) == 1  # and no second run of it was started
    instance.report_run_canceled(queued)
