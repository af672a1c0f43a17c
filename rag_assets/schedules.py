"""Schedules: a cron that scans raw/ and indexes what changed, and the eval report on
its own cron after it. Both crons are configuration (environment variables)."""

import os

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DefaultScheduleStatus,
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from rag_assets.core.lake import sha256_file
from rag_assets.core.service import scan_versions
from rag_assets.jobs import eval_job, index_job
from rag_assets.partitions import DOC_VERSIONS
from rag_assets.sensors import remove_not_live, returning_removals, run_key
from resources import LakeResource, LanceDBResource

INDEX_CRON = os.environ.get("TRECHO_INDEX_CRON", "0 5 * * *")
EVAL_CRON = os.environ.get("TRECHO_EVAL_CRON", "0 6 * * *")


def _indexed_sha(context: ScheduleEvaluationContext, key: str) -> str | None:
    """The sha256 of the file the latest `raw_pdf` materialization of `key` read."""
    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey("raw_pdf"), asset_partitions=[key]), limit=1
    ).records
    if not records:
        return None
    sha = records[0].asset_materialization.metadata.get("sha256")
    return str(sha.value) if sha is not None else None


@schedule(
    cron_schedule=INDEX_CRON,
    job=index_job,
    default_status=DefaultScheduleStatus.STOPPED,
    description=(
        "Scan raw/ on a cron (TRECHO_INDEX_CRON): index new or changed versions, remove "
        "the ones no longer live. For deployments that prefer a cron to the sensor."
    ),
)
def scan_and_index(
    context: ScheduleEvaluationContext, lake: LakeResource, lancedb: LanceDBResource
) -> list[RunRequest] | SkipReason:
    """What the sensor does, on a cron: changes are found by comparing each file's
    sha256 with what its last `raw_pdf` materialization read."""
    scan = scan_versions(lake.lake, lake.keep_history, db_uri=lancedb.uri_for(lake.lake))
    for problem in scan.problems:
        context.log.warning(problem)
    for key in remove_not_live(context.instance, lake, lancedb, scan, context.log.info):
        context.instance.delete_dynamic_partition(DOC_VERSIONS, key)
    existing = set(context.instance.get_dynamic_partitions(DOC_VERSIONS))
    new = [k for k in scan.live if k not in existing]
    if new:
        context.instance.add_dynamic_partitions(DOC_VERSIONS, new)
    runs = []
    removed = returning_removals(lake.lake, scan)
    for key in scan.live:
        sha = sha256_file(lake.lake.raw_paths(key)[0])
        indexed = _indexed_sha(context, key)
        if indexed == sha and key not in removed:  # removed before, live again: run it
            continue
        runs.append(
            RunRequest(
                partition_key=key,
                run_key=run_key(key, sha, removed),
                tags={
                    "trecho/reason": "restored"
                    if key in removed
                    else "new"
                    if indexed is None
                    else "changed",
                    "trecho/sha256": sha[:16],
                },
            )
        )
    return runs or SkipReason(f"nothing new or changed under {lake.lake.raw_dir}")


eval_schedule = ScheduleDefinition(
    name="daily_eval_report",
    job=eval_job,
    cron_schedule=EVAL_CRON,
    default_status=DefaultScheduleStatus.RUNNING,
    description="Re-run the eval on the live index (cron from TRECHO_EVAL_CRON, after "
    "the index cron).",
)
