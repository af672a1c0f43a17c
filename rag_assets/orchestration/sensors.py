"""The raw-folder sensor: carries out the reconcile plan (`rag_assets.orchestration.plans`)
every tick:
registers new document versions, runs changed ones, and removes revoked, expired,
superseded or deleted ones from every store; never asks for a run of a version that has
one in flight (`orchestration/concurrency.py`)."""

import json

from dagster import (
    DefaultSensorStatus,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from rag_assets.core.index import lake_model
from rag_assets.orchestration.concurrency import keys_in_flight, mirror_automation_switch
from rag_assets.orchestration.jobs import index_job
from rag_assets.orchestration.partitions import doc_versions
from rag_assets.orchestration.plans import (
    hold_unsettled,
    plan_lake,
    run_requests,
)
from rag_assets.orchestration.removals import carry_out_removals
from resources import EmbedderResource, LakeResource, LanceDBResource


def read_cursor(cursor: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """The run key last requested per key, and the file states of the versions held at
    the last look (`hold_unsettled`), from the cursor (a cursor of the oldest form held
    file states only: nothing requested, nothing looked at)."""
    data = json.loads(cursor) if cursor else {}
    if "files" not in data:
        return {}, {}
    return dict(data.get("requested", {})), dict(data.get("looked", {}))


def stale_model(
    lake: LakeResource, lancedb: LanceDBResource, embedder: EmbedderResource
) -> str | None:
    """Why this code location must not plan: the lake's model changed (the `switch_model`
    job) since its definitions were built for another (their code versions would record
    the old model's); None when they agree."""
    built = embedder.embedder()
    wanted = lake_model(lancedb.uri_for(lake.lake))
    if wanted is None or wanted.model_id == built.model_id:
        return None
    return (
        f"the lake's model is now {wanted.model} ({wanted.model_id}); this code location "
        f"was built for {built.model_id}: reload it (Deployment -> Reload, or restart "
        "`trecho ui`) and the sensor re-cuts and re-embeds every version for the lake's model"
    )


def said_before(cursor: str | None) -> set[str]:
    """The lines the last tick logged (the cursor's `said`): said again only once they
    changed."""
    return set(json.loads(cursor).get("said", [])) if cursor else set()


SENSOR_INTERVAL_S = 5
"""Seconds between the raw-folder sensor's ticks (TRECHO_SENSOR_INTERVAL): a tick of an
unchanged lake lists it and reads nothing (the lake's memo), so a new file waits seconds,
not half a minute, for its run (`bench/ui_latency.py`)."""
AUTOMATION_INTERVAL_S = 30
"""Seconds between the automation's ticks: it only follows re-materializations by hand."""


def watch_raw_folder(
    context: SensorEvaluationContext,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: EmbedderResource,
) -> SensorResult | SkipReason:
    """One reconcile plan turned into partition changes, removals and run requests.

    An unchanged file is not read again (the lake's memo, `core.lake.listing`). The
    cursor keeps the run key last requested for each version the plan still wants to
    run: a version whose inputs and index did not change since (same run key) is not
    asked again, so a failed run is not retried every tick (a version with a run in
    flight is not asked for: planned again once that run ended); a version once up to
    date leaves the cursor, which so stays as small as what is pending. The run key
    carries the fingerprint of the inputs (and the removal date of a restored version)
    and the instance's latest record of the version's index (`Run.run_key`,
    `plans.keep_own_records`): a request repeated after a lost cursor never runs twice,
    and a model used before, switched back to (or a backfill's run between two ticks),
    gives keys no past run or cursor entry carries (Dagster skips a run key it has seen).

    A run is asked for only for files left the same (size, mtime...) across two looks:
    a version whose files are new or changed since the last tick waits for the next one
    (the cursor's `looked`), so a file still being copied is not read half.
    """
    requested, looked = read_cursor(context.cursor)
    before = said_before(context.cursor)
    said: list[str] = []

    def say_once(line: str, warning: bool = False) -> None:
        """Log `line` unless the last tick logged it too: a tick that has nothing new to
        say logs nothing, and Dagster keeps no log file for it (one a tick otherwise)."""
        said.append(line)
        if line not in before:
            (context.log.warning if warning else context.log.info)(line)

    mirror_automation_switch(context.instance)  # what job pages say of the automation
    if (behind := stale_model(lake, lancedb, embedder)) is not None:
        return SkipReason(behind)
    plan = plan_lake(context.instance, lake, lancedb, embedder.embedder(), sweep_cache=False)
    for problem in plan.scan.problems:
        say_once(problem, warning=True)
    gone = carry_out_removals(context.instance, lake, lancedb, plan, context.log.info)
    pending = {key: requested[key] for key in plan.run if key in requested}
    flying = keys_in_flight(context.instance, plan.run)
    for key, run_id in flying.items():
        # a run of it is queued or running: what it leaves is planned again once it ended
        say_once(f"{key}: run {run_id[:8]} in flight; planned again once it ends")
        del plan.run[key]
    for key in [k for k, run in plan.run.items() if requested.get(k) == run.run_key]:
        del plan.run[key]  # asked for already, with the same inputs
    held = hold_unsettled(plan, looked)  # a file not the same as at the last look waits
    for key in held:
        context.log.info(
            f"{key}: its file is new or changed since the last look; asked for "
            "once it is the same at two looks (no run of a half-copied file)"
        )
    requested = pending | {key: run.run_key for key, run in plan.run.items()}
    state = {"files": {}, "requested": requested, "looked": held, "said": said}
    cursor = json.dumps(state, sort_keys=True)
    requests = []
    if plan.add:
        requests.append(doc_versions.build_add_request(plan.add))
    if gone:
        requests.append(doc_versions.build_delete_request(gone))
    if not plan.run and not requests:
        context.update_cursor(cursor)
        if held:
            return SkipReason(
                f"waiting for {len(held)} file(s) to stay the same: {', '.join(held)}"
            )
        if flying:
            runs = ", ".join(f"{key} (run {run_id[:8]})" for key, run_id in flying.items())
            return SkipReason(
                f"{len(flying)} version(s) with a run in flight, asked for again once it "
                f"ended if still needed: {runs}; nothing else new or changed"
            )
        return SkipReason(f"nothing new or changed under {lake.lake.raw_dir}")
    return SensorResult(
        run_requests=run_requests(plan), dynamic_partitions_requests=requests, cursor=cursor
    )


def build_raw_folder_sensor(interval: int = SENSOR_INTERVAL_S) -> SensorDefinition:
    """The `raw_folder_sensor`, ticking at most every `interval` seconds."""
    return sensor(
        name="raw_folder_sensor",
        job=index_job,
        minimum_interval_seconds=interval,
        default_status=DefaultSensorStatus.RUNNING,
        description=(
            f"Watches raw/ every {interval} s: new or changed versions (file, sidecar, code, "
            "model) are indexed, versions no longer live removed; a version with a run in "
            "flight waits for it."
        ),
    )(watch_raw_folder)


raw_folder_sensor = build_raw_folder_sensor()
