"""embeddings: one version's chunks and vectors in the model's LanceDB table.

The asset's code version carries the configured model id (model + prompts): configuring
another model marks every partition's embeddings as changed ("unsynced") in the UI, and a
backfill fills the new model's table. Search switches to it once it serves every live
version.
"""

from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
    AssetObservation,
    AssetsDefinition,
    MaterializeResult,
    asset,
)

from rag_assets.assets._common import GROUP, one_writer, reads
from rag_assets.assets.conventions import standard_metadata
from rag_assets.core.index import EmbeddingCache
from rag_assets.core.pipeline import Indexed, Indexing, embeddings_code_version
from rag_assets.core.stages import EMBEDDINGS
from rag_assets.orchestration.checks import INDEX_MATCHES_CHUNKS, embedding_checks, per_version
from rag_assets.orchestration.concurrency import last_of_a_batch
from rag_assets.orchestration.partitions import doc_versions
from resources import EmbedderResource, LakeResource, LanceDBResource


def build_embeddings(model_id: str) -> AssetsDefinition:
    """The embeddings asset for a configured model id (part of its code version)."""

    @asset(
        name=EMBEDDINGS,
        partitions_def=doc_versions,
        deps=reads(EMBEDDINGS),
        group_name=GROUP,
        code_version=embeddings_code_version(model_id),
        check_specs=embedding_checks,
        description=(
            f"Chunk vectors in LanceDB, table chunks__{model_id}; a version's rows are "
            "replaced in one commit, texts already embedded come from the cache."
        ),
    )
    @one_writer
    def embeddings(
        context: AssetExecutionContext,
        lake: LakeResource,
        embedder: EmbedderResource,
        lancedb: LanceDBResource,
    ) -> MaterializeResult:
        """Embed one version's chunks (cache first) and replace its rows in the index,
        unless the version stopped being live meanwhile; then retire the older versions
        it supersedes (`Indexing.index_version`)."""
        key = context.partition_key
        model = embedder.embedder()
        index = lancedb.index(lake.lake, model)
        cache = EmbeddingCache(index.uri, model) if embedder.cache else None
        indexing = Indexing(
            lake.lake,
            index,
            cache,
            history=lake.keep_history,
            drop_old=lancedb.drop_old_tables,
            warn=context.log.warning,
        )
        done = indexing.index_version(key)
        if done.not_written is not None:
            return not_written(context, done)
        for old, (why, removal) in done.retired.items():
            context.log.info(f"{old}: {why}; {removal.rows} index rows removed")
            # the removal's record, with what left each store; the sensor that later
            # deletes the partition adds none (`carry_out_removals`)
            context.log_event(
                AssetObservation(
                    asset_key=EMBEDDINGS,
                    metadata={
                        **removal.record(old, why),
                        "cached_vectors_removed": removal.cache_entries,
                        "removed_by": key,
                    },
                )
            )
        if last_of_a_batch(context.instance, context.run_id, context.run.tags):
            # no run follows to fold its rows in: full-text search covers every row now
            index.update_indexes(max_lag_rows=0)
        hits, misses, stored = done.hits, done.misses, done.rows
        context.log.info(f"{key}: {misses} texts embedded, {hits} from the cache; {done.switch}")
        # the whole table's indexes: a fact of this moment that later runs change, said in
        # the run's log and as text "at this run", never as numbers charted per version
        indexes = f"at this run: {index.index_stats().summary()}"
        context.log.info(f"{index.table_name} {indexes}")
        return MaterializeResult(
            metadata={
                "rows": stored,
                **standard_metadata(stored, table=index.table_name, uri=lancedb.uri_for(lake.lake)),
                "model": model.model,
                "model_id": model.model_id,
                # what embedded this run's passages (the model's own path unless configured)
                "passages_embedded_by": model.engine if misses else "none: all from the cache",
                "table": index.table_name,
                "status": done.status,
                "texts_embedded": misses,
                "cache_hits": hits,
                "cache_hit_rate": round(hits / (hits + misses), 3) if hits + misses else 0.0,
                "search": f"at this run: {done.switch}",  # the index moves on after it
                "superseded": ", ".join(done.retired) or "none",
                # what left each store (`Removal.counts`)
                "superseded_removed": {old: r.counts() for old, (_, r) in done.retired.items()},
                "removal_history": lake.lake.removal_history(key) or "never removed",
                "indexed_again": done.indexed_again,
                "indexes": indexes,
                "index_update": "; ".join(index.last_index_update) or "none",
            },
            check_results=[
                AssetCheckResult(
                    check_name=INDEX_MATCHES_CHUNKS,
                    passed=stored == done.expected,
                    metadata=per_version({"stored": stored, "expected": done.expected}),
                    description=(
                        f"{stored} rows of {key} in {index.table_name} for its "
                        f"{done.expected} chunks in Parquet"
                    ),
                )
            ],
        )

    return embeddings


def not_written(context: AssetExecutionContext, done: Indexed) -> MaterializeResult:
    """The result of a run whose version is not live (any more): nothing written, the
    derived files this run wrote deleted (`Indexing.index_version`), and why."""
    key, reason = done.key, done.not_written
    context.log.warning(f"{key}: not written: {reason}; {done.files_removed} derived files removed")
    return MaterializeResult(
        metadata={"rows": 0, "table": done.table, "not_written": reason},
        check_results=[
            AssetCheckResult(
                check_name=INDEX_MATCHES_CHUNKS,
                passed=True,
                metadata=per_version({"stored": 0, "expected": 0, "not_written": reason}),
            )
        ],
    )
