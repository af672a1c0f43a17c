"""Schedules: a cron that carries out the reconcile plan (what the sensor does, for
deployments that prefer a cron), the eval report on its own cron while the automation
sensor (its one trigger otherwise) is stopped, and the
LanceDB tables' upkeep. The crons are settings (TRECHO_INDEX_CRON, TRECHO_EVAL_CRON,
TRECHO_UPKEEP_CRON), given to `build_schedules`."""

from dagster import (
    DefaultScheduleStatus,
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from rag_assets.core.index import committed_keys
from rag_assets.orchestration.concurrency import (
    AUTOMATION_SENSOR,
    automation_running,
    keys_in_flight,
)
from rag_assets.orchestration.jobs import eval_job, index_job, upkeep_job
from rag_assets.orchestration.partitions import DOC_VERSIONS
from rag_assets.orchestration.plans import plan_lake, run_requests, settled
from rag_assets.orchestration.removals import carry_out_removals
from resources import EmbedderResource, LakeResource, LanceDBResource

SETTLE_S = 2.0
"""Seconds between the schedule's two looks at a file it would run (`plans.settled`)."""


def scan_and_index(
    context: ScheduleEvaluationContext,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: EmbedderResource,
) -> list[RunRequest] | SkipReason:
    """The reconcile plan, carried out on a cron: partitions deleted and added here, one
    run request per version to run (a failed one is asked again at the next tick; none
    for a version with a run in flight, nor for one whose file changed between two looks
    `SETTLE_S` apart: still being copied)."""
    plan = plan_lake(context.instance, lake, lancedb, embedder.embedder())
    for problem in plan.scan.problems:
        context.log.warning(problem)
    for key in carry_out_removals(context.instance, lake, lancedb, plan, context.log.info):
        context.instance.delete_dynamic_partition(DOC_VERSIONS, key)
    if plan.add:
        context.instance.add_dynamic_partitions(DOC_VERSIONS, plan.add)
    for key in keys_in_flight(context.instance, plan.run):
        del plan.run[key]  # a run of it is queued or running: the next tick plans it again
    for key in settled(plan, SETTLE_S):  # a file still being copied: the next tick
        context.log.info(f"{key}: its file changed while looked at; asked for at a later tick")
    return run_requests(plan) or SkipReason(f"nothing new or changed under {lake.lake.raw_dir}")


def eval_on_cron(
    context: ScheduleEvaluationContext, lake: LakeResource, lancedb: LanceDBResource
) -> RunRequest | SkipReason:
    """The eval report's cron: skipped on a lake with nothing indexed (the report would
    fail: no version to measure), and while the automation sensor runs (it asks for the
    report once the index changed, and again once after a failed run: one trigger, never
    two evals at once); else one run."""
    if not committed_keys(lancedb.uri_for(lake.lake)):
        return SkipReason(f"nothing is indexed yet under {lake.lake.root}: no report to write")
    if automation_running(context.instance):
        return SkipReason(
            f"the automation sensor {AUTOMATION_SENSOR} writes the report once the index "
            "changed (one trigger); this schedule asks for it only while that sensor is stopped"
        )
    return RunRequest()


def build_schedules(
    index_cron: str, eval_cron: str, upkeep_cron: str = "40 * * * *"
) -> list[ScheduleDefinition]:
    """The `scan_and_index` schedule (stopped by default), the `daily_eval_report`
    schedule (`eval_on_cron`) and the `table_upkeep` schedule (both running), on the
    given crons."""
    index = schedule(
        cron_schedule=index_cron,
        job=index_job,
        name="scan_and_index",
        default_status=DefaultScheduleStatus.STOPPED,
        description=(
            f"Scan raw/ on a cron ({index_cron}, TRECHO_INDEX_CRON): index new or changed "
            "versions (file, sidecar, code, model), remove the ones no longer live. For "
            "deployments that prefer a cron to the sensor."
        ),
    )(scan_and_index)
    report = schedule(
        cron_schedule=eval_cron,
        job=eval_job,
        name="daily_eval_report",
        default_status=DefaultScheduleStatus.RUNNING,
        description=(
            f"The eval report on a cron ({eval_cron}, TRECHO_EVAL_CRON), only while the "
            f"automation sensor {AUTOMATION_SENSOR} is stopped: that sensor is the report's one "
            "trigger (once the index changed). Skipped, with why, on a lake with nothing indexed."
        ),
    )(eval_on_cron)
    upkeep = ScheduleDefinition(
        name="table_upkeep",
        job=upkeep_job,
        cron_schedule=upkeep_cron,
        default_status=DefaultScheduleStatus.RUNNING,
        description=(
            f"Compact the LanceDB tables and delete their old versions ({upkeep_cron}, "
            "TRECHO_UPKEEP_CRON): reads stay fast and disk bounded between commands."
        ),
    )
    return [index, report, upkeep]
