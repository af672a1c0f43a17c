"""Jobs: index document versions (partitioned), write the eval report, keep the
LanceDB tables compact, switch the lake's model."""

from enum import Enum

from dagster import (
    AssetSelection,
    Config,
    Failure,
    OpExecutionContext,
    define_asset_job,
    job,
    op,
)
from pydantic import Field

from rag_assets.core.embedding import DEFAULT_MODEL, MINILM
from rag_assets.core.errors import UserError
from rag_assets.core.index import upkeep_tables
from rag_assets.core.pipeline import switch_model
from rag_assets.core.stages import EMBED_STAGES, PIPELINE
from rag_assets.orchestration.partitions import doc_versions
from resources import EmbedderResource, LakeResource, LanceDBResource

index_job = define_asset_job(
    "index_documents",
    selection=AssetSelection.assets(*PIPELINE),
    partitions_def=doc_versions,
    description="Extract, structure, chunk and embed one document version.",
)

eval_job = define_asset_job(
    "eval_report_job",
    selection=AssetSelection.assets("eval_report"),
    description="Evaluate every strategy on the lake's question files.",
)

embed_job = define_asset_job(
    "embed_documents",
    selection=AssetSelection.assets(*EMBED_STAGES),
    partitions_def=doc_versions,
    description=(
        "Re-cut (token budgets come from the model's tokenizer) and embed one version with "
        "the configured model: what a model backfill runs. Extraction is not repeated."
    ),
)


@op(
    description=(
        "Compact the LanceDB tables whose fragments piled up and delete their versions "
        "older than KEEP_VERSIONS (core/index/upkeep.py)."
    )
)
def table_upkeep(context: OpExecutionContext, lake: LakeResource, lancedb: LanceDBResource) -> int:
    """`upkeep_tables` on the lake's database, one log line per table it changed;
    returns how many it changed."""
    done = upkeep_tables(lancedb.uri_for(lake.lake))
    for result in done:
        context.log.info(str(result))
    if not done:
        context.log.info("every table is compact, no old version to delete")
    return len(done)


@job(
    name="table_upkeep_job",
    description="Keep every LanceDB table of the lake compact and its old versions deleted.",
)
def upkeep_job() -> None:
    """One `table_upkeep` op."""
    table_upkeep()


class BundledModel(Enum):
    """The models that come with trecho (docs/models.md): the Launchpad offers these."""

    multilingual_e5_small = DEFAULT_MODEL
    multilingual_e5_small_enpt = f"{DEFAULT_MODEL}-enpt"
    multilingual_e5_small_int8 = f"{DEFAULT_MODEL}-int8"
    multilingual_e5_small_enpt_int8 = f"{DEFAULT_MODEL}-enpt-int8"
    all_MiniLM_L6_v2 = MINILM


class SwitchConfig(Config):
    """Which model the lake switches to: a bundled one, or a sentence-transformers folder."""

    model: BundledModel = Field(
        default=BundledModel.multilingual_e5_small,
        description="A bundled model (docs/models.md)",
    )
    path: str = Field(
        default="",
        description="A local sentence-transformers folder instead of a bundled model",
    )


@op(
    description=(
        "Make the chosen model the lake's (recorded beside the pointer search follows); "
        "search switches once its table holds every live version."
    )
)
def switch_lake_model(
    context: OpExecutionContext,
    config: SwitchConfig,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: EmbedderResource,
) -> str:
    """`core.pipeline.switch_model` for the model chosen; logs what happens next (the
    code location must reload to build its assets for the new model)."""
    name = config.path or config.model.value
    try:
        chosen = embedder.as_settings().embedder(name)
        said = switch_model(lake.lake, lancedb.uri_for(lake.lake), chosen, lake.keep_history)
    except UserError as exc:  # a model that does not load: the reason, the lake unchanged
        raise Failure(description=f"{name}: {exc}", allow_retries=False) from exc
    context.log.info(said)
    context.log.info(
        "Reload the code location (Deployment -> Reload, or restart `trecho ui`): its assets, "
        "code versions and sensor then follow the lake's model"
    )
    return said


@job(
    name="switch_model",
    description=(
        "Switch the lake's embedding model: choose it in the Launchpad (model: a bundled "
        "one, or path), launch, then reload the code location; the raw-folder sensor "
        "re-cuts and re-embeds every version, and search switches when all are in."
    ),
)
def switch_job() -> None:
    """One `switch_lake_model` op."""
    switch_lake_model()
