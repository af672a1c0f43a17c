"""The trecho code location: assets, checks, jobs, sensor, schedules, resources and the
executor that runs each run's steps (chosen by configuration:
rag_assets/orchestration/executors.py)."""

from dagster import (
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    Definitions,
)

from rag_assets.assets import ALL_ASSETS
from rag_assets.assets.embeddings import build_embeddings
from rag_assets.core.stages import EMBEDDINGS, FOLLOWERS
from rag_assets.orchestration.executors import select_executor
from rag_assets.orchestration.jobs import embed_job, eval_job, index_job, upkeep_job
from rag_assets.orchestration.schedules import build_schedules
from rag_assets.orchestration.sensors import raw_folder_sensor
from rag_assets.settings import Settings
from resources import configured_resources

automation_sensor = AutomationConditionSensorDefinition(
    "stages_follow_upstream",
    target=AssetSelection.keys(*FOLLOWERS),
    default_status=DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description=(
        "Declarative automation: a stage re-runs for a version when its upstream stage was "
        "re-materialized (e.g. page_text by hand in the UI), down to embeddings."
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
    environment, read here once); an empty `db_uri` means `<lake>/lancedb`. The
    embeddings asset's code version carries the model id, so a model change shows every
    partition as changed in the UI. `executor` and `max_concurrent` default to
    TRECHO_EXECUTOR and TRECHO_MAX_CONCURRENT; the index schedule's cron to
    TRECHO_INDEX_CRON, the eval report's to TRECHO_EVAL_CRON, the table upkeep's to
    TRECHO_UPKEEP_CRON."""
    settings = settings or Settings.from_env()
    embedder = settings.embedder(model, query_prefix, passage_prefix)
    assets = [a for a in ALL_ASSETS if a.key.to_user_string() != EMBEDDINGS]
    assets.append(build_embeddings(embedder.model_id))
    assets = [
        a.with_attributes(automation_condition=AutomationCondition.eager())
        if a.key.to_user_string() in FOLLOWERS
        else a
        for a in assets
    ]
    return Definitions(
        assets=assets,
        jobs=[index_job, embed_job, eval_job, upkeep_job],
        sensors=[raw_folder_sensor, automation_sensor],
        schedules=build_schedules(settings.index_cron, settings.eval_cron, settings.upkeep_cron),
        executor=select_executor(settings, executor, max_concurrent),
        resources=configured_resources(settings, lake_root, embedder, db_uri),
    )


defs = build_definitions()
