"""The trecho code location: assets, checks, jobs, sensor, schedules, resources and the
executor that runs each run's steps (chosen by configuration:
rag_assets/orchestration/executors.py)."""

import logging
import os
import warnings

from dagster import (
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    Definitions,
)

from rag_assets.assets import all_assets
from rag_assets.core.lake import Lake
from rag_assets.core.stages import FOLLOWERS
from rag_assets.orchestration.concurrency import (
    AUTOMATION_SENSOR,
    IndexChangedSinceReport,
    one_run_per_version,
    unconfigured_instance,
)
from rag_assets.orchestration.executors import select_executor
from rag_assets.orchestration.jobs import embed_job, eval_job, index_job, switch_job, upkeep_job
from rag_assets.orchestration.schedules import build_schedules
from rag_assets.orchestration.sensors import AUTOMATION_INTERVAL_S, build_raw_folder_sensor
from rag_assets.settings import Settings
from resources import configured_resources

FOLLOW = one_run_per_version(AutomationCondition.eager())
"""The automation of every stage below raw_pdf: Dagster's `eager()` (the stage before
re-materialized, none of its own runs or its parents' in progress), and no run of the
version in flight at all (`orchestration/concurrency.py`)."""

REPORT_FOLLOWS = (
    IndexChangedSinceReport()
    & ~AutomationCondition.newly_requested()
    & ~AutomationCondition.any_deps_in_progress()
    & ~AutomationCondition.in_progress()
).with_label(
    "the index changed since the report last started (or its run since failed, once), "
    "no version being embedded"
)
"""The eval report's one trigger: written again once the index changed and no embeddings
run is in flight (one report after a batch of new versions, not one per version), so it
is not left "Unsynced". The change is counted from the start of the report's last run
(`IndexChangedSinceReport`), so an index change that finished while a report ran asks
for another once that one ended, and a removal counts too; a report run that failed (or
was interrupted) without writing the report is asked again once. The daily schedule
asks for the report only while the automation sensor is stopped (`eval_on_cron`)."""

with warnings.catch_warnings():  # `use_user_code_server` is beta in Dagster 1.13: said here
    warnings.simplefilter("ignore")
    automation_sensor = AutomationConditionSensorDefinition(
        AUTOMATION_SENSOR,
        target=AssetSelection.keys(*FOLLOWERS, "eval_report"),
        default_status=DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=AUTOMATION_INTERVAL_S,
        # evaluated on the code server: `FOLLOW` runs Python of this code location
        use_user_code_server=True,
        # one run per version, never a backfill: the backfill daemon would wait its 30 s loop
        emit_backfills=False,
        description=(
            "Declarative automation: a stage re-runs for a version when its upstream stage was "
            "re-materialized (e.g. page_text by hand in the UI), down to embeddings, never for "
            "a version with a run in flight; the eval report once the index changed and no "
            "version is being embedded."
        ),
    )


def build_definitions(
    lake_root: str | None = None,
    model: str | None = None,
    query_prefix: str | None = None,
    passage_prefix: str | None = None,
    db_uri: str = "",
    max_concurrent: int | None = None,
    executor: str | None = None,
    settings: Settings | None = None,
) -> Definitions:
    """Definitions with resources from the arguments, else the settings (default: the
    environment, read here once); an empty `db_uri` means `<lake>/lancedb`. The model is
    `model` when named, else the lake's (`Settings.lake_embedder`: the model it switches
    to, else the one search uses; TRECHO_MODEL only for a lake with neither), so a reload
    after a switch gives assets, descriptions and code versions of the lake's model. The code
    versions of chunks (cut to the model's tokenizer and token limit) and embeddings carry
    the model id (and chunks its token limit), so a model change shows both stale for
    every partition in the UI. The raw-folder sensor ticks every TRECHO_SENSOR_INTERVAL
    seconds. `executor` and `max_concurrent` default to
    TRECHO_EXECUTOR and TRECHO_MAX_CONCURRENT; the index schedule's cron to
    TRECHO_INDEX_CRON, the eval report's to TRECHO_EVAL_CRON, the table upkeep's to
    TRECHO_UPKEEP_CRON."""
    settings = settings or Settings.from_env()
    db = db_uri or str(Lake(lake_root or settings.lake).lancedb_dir)
    embedder = settings.lake_embedder(db, model, query_prefix, passage_prefix)
    assets = all_assets(embedder.model_id, embedder.max_tokens)
    conditions = dict.fromkeys(FOLLOWERS, FOLLOW) | {"eval_report": REPORT_FOLLOWS}
    assets = [
        a.with_attributes(automation_condition=conditions[a.key.to_user_string()])
        if a.key.to_user_string() in conditions
        else a
        for a in assets
    ]
    return Definitions(
        assets=assets,
        jobs=[index_job, embed_job, eval_job, upkeep_job, switch_job],
        sensors=[build_raw_folder_sensor(settings.sensor_interval), automation_sensor],
        schedules=build_schedules(settings.index_cron, settings.eval_cron, settings.upkeep_cron),
        executor=select_executor(settings, executor, max_concurrent),
        resources=configured_resources(settings, lake_root, embedder, db_uri),
    )


if (_unconfigured := unconfigured_instance(os.environ)) is not None:
    logging.getLogger("trecho").warning(_unconfigured)  # `dg dev` by hand: say how to start
defs = build_definitions()
