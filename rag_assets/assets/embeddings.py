"""embeddings: one version's chunks and vectors in the model's LanceDB table.

The asset's code version carries the configured model id (model + prompts): configuring
another model marks every partition's embeddings as changed ("unsynced") in the UI, and a
backfill fills the new model's table. Search switches to it once it serves every live
version.
"""

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    AssetsDefinition,
    MaterializeResult,
    asset,
)

from rag_assets.assets.chunks import chunks
from rag_assets.checks import INDEX_MATCHES_CHUNKS, embedding_checks
from rag_assets.core.corpus import load_info
from rag_assets.core.lake import read_stage
from rag_assets.core.search import EmbeddingCache, embed_cached
from rag_assets.core.service import promote_if_complete
from rag_assets.partitions import doc_versions
from resources import EmbedderResource, LakeResource, LanceDBResource, configured_model_id

CODE_VERSION = "2"


def build_embeddings(model_id: str) -> AssetsDefinition:
    """The embeddings asset for a configured model id (part of its code version)."""

    @asset(
        name="embeddings",
        partitions_def=doc_versions,
        deps=[chunks],
        group_name="index",
        code_version=f"{CODE_VERSION}+{model_id}",
        check_specs=embedding_checks,
        description=(
            f"Chunk vectors in LanceDB, table chunks__{model_id}; a version's rows are "
            "replaced in one commit, texts already embedded come from the cache."
        ),
    )
    def embeddings(
        context: AssetExecutionContext,
        lake: LakeResource,
        embedder: EmbedderResource,
        lancedb: LanceDBResource,
    ) -> MaterializeResult:
        """Embed one version's chunks (cache first) and replace its rows in the index."""
        key = context.partition_key
        model = embedder.embedder()
        uri = lancedb.uri_for(lake.lake)
        index = lancedb.index(lake.lake, model)
        info, status, valid_to = load_info(lake.lake, key)
        table = read_stage(lake.lake, "chunks", key)
        hits = misses = 0
        if status != "active":
            removed = index.delete_partition(key)
            context.log.warning(f"{key} is {status}: not indexed, {removed} old rows removed")
            stored, expected = 0, 0
        else:
            cache = EmbeddingCache(uri, model) if embedder.cache else None
            vectors, stats = embed_cached(model, cache, table["text"].to_list())
            hits, misses = stats.hits, stats.misses
            stored = index.upsert_partition(
                key, table, vectors, status, info.valid_from, valid_to, info.title
            )
            expected = table.height
        switch = promote_if_complete(lake.lake, uri, model, lancedb.drop_old_tables)
        context.log.info(f"{key}: {misses} texts embedded, {hits} from the cache; {switch}")
        return MaterializeResult(
            metadata={
                "rows": stored,
                "model": model.model,
                "model_id": model.model_id,
                "table": index.table_name,
                "status": status,
                "texts_embedded": misses,
                "cache_hits": hits,
                "cache_hit_rate": round(hits / (hits + misses), 3) if hits + misses else 0.0,
                "search": switch,
                **index.index_stats().as_metadata(),
                "index_update": "; ".join(index.last_index_update) or "none",
            },
            check_results=[
                AssetCheckResult(
                    check_name=INDEX_MATCHES_CHUNKS,
                    passed=stored == expected,
                    metadata={"stored": stored, "expected": expected},
                )
            ],
        )

    return embeddings


embeddings = build_embeddings(configured_model_id())
