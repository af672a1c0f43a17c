"""Jobs: index document versions (partitioned), write the eval report, keep the
LanceDB tables compact."""

from dagster import AssetSelection, OpExecutionContext, define_asset_job, job, op

from rag_assets.core.index import upkeep_tables
from rag_assets.core.stages import EMBED_STAGES, PIPELINE
from rag_assets.orchestration.partitions import doc_versions
from resources import LakeResource, LanceDBResource

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
