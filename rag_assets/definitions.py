"""The trecho code location: assets, checks, jobs, sensor, schedules, resources and the
executor that runs each run's steps (chosen by configuration: rag_assets/executors.py)."""

from dagster import (
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    Definitions,
)

from rag_assets.assets import ALL_ASSETS
from rag_assets.assets.embeddings import build_embeddings
from rag_assets.core.embedding import Embedder
from rag_assets.executors import select_executor
from rag_assets.jobs import embed_job, eval_job, index_job
from rag_assets.schedules import eval_schedule, scan_and_index
from rag_assets.sensors import raw_folder_sensor
from resources import (
    EmbedderResource,
    LakeResource,
    LanceDBResource,
    configured_embedder,
)

FOLLOWERS = ("page_text", "structure_tree", "linearized_tables", "chunks", "embeddings")
"""Assets kept up to date by declarative automation when their upstream changes."""

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
) -> Definitions:
    """Definitions with resources from the arguments, else the environment (TRECHO_LAKE,
    TRECHO_MODEL, TRECHO_QUERY_PREFIX, TRECHO_PASSAGE_PREFIX); an empty `db_uri` means
    `<lake>/lancedb`. The embeddings asset's code version carries the model id, so a
    model change shows every partition as changed in the UI. `executor` and
    `max_concurrent` default to TRECHO_EXECUTOR and TRECHO_MAX_CONCURRENT."""
    env = configured_embedder()
    embedder = Embedder(
        model=model or env.model,
        query_prefix=env.query_prefix if query_prefix is None else query_prefix,
        passage_prefix=env.passage_prefix if passage_prefix is None else passage_prefix,
    )
    assets = [a for a in ALL_ASSETS if a.key.to_user_string() != "embeddings"]
    assets.append(build_embeddings(embedder.model_id))
    assets = [
        a.with_attributes(automation_condition=AutomationCondition.eager())
        if a.key.to_user_string() in FOLLOWERS
        else a
        for a in assets
    ]
    lake = LakeResource(root=lake_root) if lake_root else LakeResource()
    executor_def = select_executor(executor, max_concurrent)
    return Definitions(
        assets=assets,
        jobs=[index_job, embed_job, eval_job],
        sensors=[raw_folder_sensor, automation_sensor],
        schedules=[scan_and_index, eval_schedule],
        executor=executor_def,
        resources={
            "lake": lake,
            "embedder": EmbedderResource(
                model=embedder.model,
                query_prefix=embedder.query_prefix,
                passage_prefix=embedder.passage_prefix,
            ),
            "lancedb": LanceDBResource(uri=db_uri),
        },
    )


defs = build_definitions()
