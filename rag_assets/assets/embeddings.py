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

from rag_assets.assets._common import GROUP, one_writer
from rag_assets.assets.chunks import chunks
from rag_assets.core.corpus import load_info
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import (
    EmbeddingCache,
    NoLongerLive,
    Stamp,
    committed_keys,
    embed_cached,
    promote_if_complete,
    read_active,
)
from rag_assets.core.index.models import chunks_folder_for
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lake.parquet import read_stage, remove_stage_files
from rag_assets.core.lifecycle.outcomes import note_indexed
from rag_assets.core.lifecycle.purge import purge_version
from rag_assets.core.lifecycle.rules import is_active
from rag_assets.core.lifecycle.versions import not_live_reason, replaced_once_committed
from rag_assets.core.stages import EMBEDDINGS, FOLDERS, RAW_PDF
from rag_assets.orchestration.checks import INDEX_MATCHES_CHUNKS, embedding_checks
from rag_assets.orchestration.partitions import doc_versions
from resources import EmbedderResource, LakeResource, LanceDBResource

CODE_VERSION = "2"


def code_version(model_id: str) -> str:
    """The embeddings asset's code version for `model_id`: a model change shows every
    partition as changed, and the reconcile plan re-embeds it."""
    return f"{CODE_VERSION}+{model_id}"


def build_embeddings(model_id: str) -> AssetsDefinition:
    """The embeddings asset for a configured model id (part of its code version)."""

    @asset(
        name=EMBEDDINGS,
        partitions_def=doc_versions,
        deps=[chunks],
        group_name=GROUP,
        code_version=code_version(model_id),
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
        it supersedes."""
        key = context.partition_key
        model = embedder.embedder()
        uri = lancedb.uri_for(lake.lake)
        index = lancedb.index(lake.lake, model)

        indexed: set[str] = set()  # what the last check read, reused after the commit
        doc_id = key.split("@", 1)[0]

        def still_live() -> str | None:
            indexed.clear()  # this document's indexed versions: all the rule needs
            indexed.update(committed_keys(uri, doc_id))
            return not_live_reason(lake.lake, key, uri, lake.keep_history, indexed=indexed)

        reason = still_live()
        if reason is None:
            info, status, valid_to = load_info(lake.lake, key)
            reason = None if is_active(status) else f"{status} when its run read it"
        if reason is not None:
            return not_written(context, lake.lake, key, reason, index.table_name)
        table = read_stage(lake.lake, chunks_folder_for(uri, model.model_id), key)
        cache = EmbeddingCache(uri, model) if embedder.cache else None
        # new vectors enter the cache in the commit of the rows that use them (under the
        # table's lock): a version revoked meanwhile leaves none (`Index.upsert_partition`)
        vectors, stats = embed_cached(model, cache, table["text"].to_list(), store=False)
        if stats.misses:  # the passage path ran: what `trecho status` says it runs on
            model.record_runtime(lake.lake.local_cache_dir, "passages")

        def cache_fresh() -> None:
            try:
                if cache is not None:
                    cache.add_fresh(stats)
            except Exception as exc:  # a lost cache write costs a re-embedding, no more
                context.log.warning(f"{key}: new vectors not cached: {exc}")

        try:
            stored = index.upsert_partition(
                key,
                table,
                vectors,
                Stamp(status, info.valid_from, valid_to, info.title),
                still_live=still_live,
                on_commit=cache_fresh,
            )
        except NoLongerLive as exc:
            return not_written(context, lake.lake, key, str(exc), index.table_name)
        retired: dict[str, dict[str, int]] = {}
        active = read_active(uri)
        serving = active is None or active.model_id == model.model_id
        # only a version in the table search uses replaces an older one (not during a
        # model backfill: search still answers from the old table)
        replaced = replaced_once_committed(lake.lake, key, uri, lake.keep_history, indexed=indexed)
        for old, why in replaced.items() if serving else ():
            removal = purge_version(lake.lake, uri, old, why)
            if not (removal.rows or removal.files):
                continue  # gone before (a re-run of this version): nothing retired now
            context.log.info(f"{old}: {why}; {removal.rows} index rows removed")
            retired[old] = removal.counts()
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
        sha = read_stage(lake.lake, FOLDERS[RAW_PDF], key)["sha256"][0]
        returned = lake.lake.note_indexed_again(key, sha)
        note_indexed(lake.lake, key, sha)  # what `trecho status` compares the file with
        switch = promote_if_complete(
            lake.lake, uri, model, lancedb.drop_old_tables, lake.keep_history
        )
        hits, misses = stats.hits, stats.misses
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
                "superseded": ", ".join(retired) or "none",
                "superseded_removed": retired,  # what left each store (`Removal.counts`)
                "removal_history": lake.lake.removal_history(key) or "never removed",
                "indexed_again": returned,
                **index.index_stats().as_metadata(),
                "index_update": "; ".join(index.last_index_update) or "none",
            },
            check_results=[
                AssetCheckResult(
                    check_name=INDEX_MATCHES_CHUNKS,
                    passed=stored == table.height,
                    metadata={"stored": stored, "expected": table.height},
                    description=(
                        f"{stored} rows of {key} in {index.table_name} for its "
                        f"{table.height} chunks in Parquet"
                    ),
                )
            ],
        )

    return embeddings


def not_written(
    context: AssetExecutionContext, lake: Lake, key: str, reason: str, table: str
) -> MaterializeResult:
    """The result of a run whose version is not live (any more): nothing written, the
    derived files this run wrote deleted, and why."""
    files = remove_stage_files(lake, key)
    reason = reason.removeprefix(f"{key}: not written: ")
    context.log.warning(f"{key}: not written: {reason}; {len(files)} derived files removed")
    return MaterializeResult(
        metadata={"rows": 0, "table": table, "not_written": reason},
        check_results=[
            AssetCheckResult(
                check_name=INDEX_MATCHES_CHUNKS,
                passed=True,
                metadata={"stored": 0, "expected": 0, "not_written": reason},
            )
        ],
    )


embeddings = build_embeddings(Embedder().model_id)
"""The asset for the default model (what `eval_report` depends on); `build_definitions`
builds it again for the configured model."""
