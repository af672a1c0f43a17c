"""The raw-folder sensor: carries out the reconcile plan (`rag_assets.orchestration.plans`)
every tick:
registers new document versions, runs changed ones, and removes revoked, expired,
superseded or deleted ones from every store."""

import json
from typing import Any

from dagster import (
    DefaultSensorStatus,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from rag_assets.orchestration.jobs import index_job
from rag_assets.orchestration.partitions import doc_versions
from rag_assets.orchestration.plans import carry_out_removals, plan_lake, run_requests
from resources import EmbedderResource, LakeResource, LanceDBResource


def read_cursor(cursor: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The cursor's file states (mtime, size, sha256 per key) and the run key last
    requested per key; a cursor of the older form held file states only."""
    data = json.loads(cursor) if cursor else {}
    if "files" not in data:
        return data, {}
    return data["files"], data["requested"]


@sensor(
    job=index_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Watches raw/: new or changed versions (file, sidecar, code, model) are indexed, "
        "versions no longer live removed."
    ),
)
def raw_folder_sensor(
    context: SensorEvaluationContext,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: EmbedderResource,
) -> SensorResult | SkipReason:
    """One reconcile plan turned into partition changes, removals and run requests.

    The cursor keeps each live file's (mtime, size, sha256), so an unchanged file is not
    re-read, and the run key last requested for each version: a version whose inputs did
    not change since (same run key) is not asked again, so a failed run is not retried
    every tick. The run key carries the fingerprint of the inputs (and the removal date of
    a restored version), so a request repeated after a lost cursor never runs twice.
    """
    known, requested = read_cursor(context.cursor)
    plan = plan_lake(context.instance, lake, lancedb, embedder.embedder(), known, sweep_cache=False)
    for problem in plan.scan.problems:
        context.log.warning(problem)
    gone = carry_out_removals(context.instance, lake, lancedb, plan, context.log.info)
    for key in [k for k, run in plan.run.items() if requested.get(k) == run.run_key]:
        del plan.run[key]  # asked for already, with the same inputs
    requested = {key: requested[key] for key in plan.scan.live if key in requested} | {
        key: run.run_key for key, run in plan.run.items()
    }
    cursor = json.dumps({"files": plan.files, "requested": requested}, sort_keys=True)
    requests = []
    if plan.add:
        requests.append(doc_versions.build_add_request(plan.add))
    if gone:
        requests.append(doc_versions.build_delete_request(gone))
    if not plan.run and not requests:
        context.update_cursor(cursor)
        return SkipReason(f"nothing new or changed under {lake.lake.raw_dir}")
    return SensorResult(
        run_requests=run_requests(plan), dynamic_partitions_requests=requests, cursor=cursor
    )
