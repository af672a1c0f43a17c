"""Jobs: index document versions (partitioned) and write the eval report."""

from __future__ import annotations

from dagster import AssetSelection, define_asset_job

from rag_assets.core.stages import EMBED_STAGES, PIPELINE
from rag_assets.orchestration.partitions import doc_versions

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
