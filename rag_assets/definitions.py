"""The trecho code location: assets, checks, jobs, sensor, schedule and resources."""

from dagster import Definitions

from rag_assets.assets import ALL_ASSETS
from rag_assets.jobs import eval_job, index_job
from rag_assets.schedules import eval_schedule
from rag_assets.sensors import raw_folder_sensor
from resources import EmbedderResource, LakeResource, LanceDBResource


def build_definitions(
    lake_root: str | None = None,
    model: str | None = None,
    query_prefix: str = "",
    passage_prefix: str = "",
    db_uri: str = "",
) -> Definitions:
    """Definitions with resources from the arguments, else the environment (TRECHO_LAKE,
    TRECHO_MODEL); an empty `db_uri` means `<lake>/lancedb`."""
    lake = LakeResource(root=lake_root) if lake_root else LakeResource()
    prompts = {"query_prefix": query_prefix, "passage_prefix": passage_prefix}
    embedder = EmbedderResource(model=model, **prompts) if model else EmbedderResource(**prompts)
    return Definitions(
        assets=ALL_ASSETS,
        jobs=[index_job, eval_job],
        sensors=[raw_folder_sensor],
        schedules=[eval_schedule],
        resources={
            "lake": lake,
            "embedder": embedder,
            "lancedb": LanceDBResource(uri=db_uri),
        },
    )


defs = build_definitions()
