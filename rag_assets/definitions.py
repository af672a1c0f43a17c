"""The trecho code location: assets, checks, jobs, sensor, schedule and resources."""


from dagster import Definitions

from rag_assets.assets import ALL_ASSETS
from rag_assets.jobs import eval_job, index_job
from rag_assets.schedules import eval_schedule
from rag_assets.sensors import raw_folder_sensor
from resources import EmbedderResource, LakeResource, LanceDBResource


def build_definitions() -> Definitions:
    """Definitions with resources read from the environment (TRECHO_LAKE, TRECHO_MODEL)."""
    return Definitions(
        assets=ALL_ASSETS,
        jobs=[index_job, eval_job],
        sensors=[raw_folder_sensor],
        schedules=[eval_schedule],
        resources={
            "lake": LakeResource(),
            "embedder": EmbedderResource(),
            "lancedb": LanceDBResource(),
        },
    )


defs = build_definitions()
