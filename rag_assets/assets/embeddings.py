"""embeddings: one version's chunks and vectors in the model's LanceDB table."""

from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, asset

from rag_assets.assets.chunks import chunks
from rag_assets.checks import INDEX_MATCHES_CHUNKS, embedding_checks
from rag_assets.core.corpus import load_info
from rag_assets.core.lake import read_stage
from rag_assets.partitions import doc_versions
from resources import EmbedderResource, LakeResource, LanceDBResource


@asset(
    partitions_def=doc_versions,
    deps=[chunks],
    group_name="index",
    code_version="1",
    check_specs=embedding_checks,
    description="Chunk vectors in LanceDB (one table per model), replaced in one commit.",
)
def embeddings(
    context: AssetExecutionContext,
    lake: LakeResource,
    embedder: EmbedderResource,
    lancedb: LanceDBResource,
) -> MaterializeResult:
    """Embed one version's chunks and replace its rows in the index."""
    key = context.partition_key
    model = embedder.embedder()
    index = lancedb.index(lake.lake, model)
    info, status, valid_to = load_info(lake.lake, key)
    table = read_stage(lake.lake, "chunks", key)
    if status != "active":
        removed = index.delete_partition(key)
        context.log.warning(f"{key} is {status}: not indexed, {removed} old rows removed")
        stored, expected = 0, 0
    else:
        vectors = model.embed_passages(table["text"].to_list())
        stored = index.upsert_partition(
            key, table, vectors, status, info.valid_from, valid_to, info.title
        )
        expected = table.height
    return MaterializeResult(
        metadata={
            "rows": stored,
            "model": model.model,
            "table": index.table_name,
            "status": status,
        },
        check_results=[
            AssetCheckResult(
                check_name=INDEX_MATCHES_CHUNKS,
                passed=stored == expected,
                metadata={"stored": stored, "expected": expected},
            )
        ],
    )
