"""The Dagster side of the reconcile step (`core.lifecycle.reconcile`): what the instance knows fed
into the plan, and the plan carried out as partition changes, removals and run requests.
The sensor, the cron schedule and `trecho materialize` all go through here."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dagster import (
    AssetKey,
    AssetObservation,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    RunRequest,
)

from rag_assets.assets import PARTITIONED
from rag_assets.assets.embeddings import code_version
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.lifecycle.purge import delete_unused_cached, purge_version
from rag_assets.core.lifecycle.reconcile import (
    CodeVersions,
    Plan,
    Run,
    reconcile,
    removal_plan,
)
from rag_assets.core.stages import EMBED_STAGES, EMBEDDINGS, PIPELINE
from rag_assets.orchestration.partitions import DOC_VERSIONS
from resources import LakeResource, LanceDBResource

CODE_VERSION_TAG = "dagster/code_version"


def stage_code_versions(model_id: str) -> dict[str, str]:
    """The code version of each stage a version's run goes through, for `model_id` (the
    embeddings stage's carries it)."""
    current = {
        a.key.to_user_string(): str(a.code_versions_by_key[a.key])
        for a in PARTITIONED
        if a.key.to_user_string() != EMBEDDINGS
    }
    current[EMBEDDINGS] = code_version(model_id)
    return current


def ran_with(instance: DagsterInstance) -> dict[str, dict[str, str]]:
    """Per stage, the code version each partition's latest materialization ran with:
    two queries per stage, whatever the number of partitions."""
    out: dict[str, dict[str, str]] = {}
    for stage in PIPELINE:
        asset_key = AssetKey(stage)
        latest = instance.get_latest_storage_id_by_partition(
            asset_key, DagsterEventType.ASSET_MATERIALIZATION
        )
        records = (
            instance.fetch_materializations(
                AssetRecordsFilter(asset_key=asset_key, storage_ids=list(latest.values())),
                limit=len(latest),
            ).records
            if latest
            else []
        )
        out[stage] = {
            r.partition_key: r.asset_materialization.tags.get(CODE_VERSION_TAG, "")
            for r in records
            if r.partition_key is not None and r.asset_materialization is not None
        }
    return out


def plan_lake(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: Embedder,
    force: bool = False,
    sweep_cache: bool = True,
) -> Plan:
    """The reconcile plan for the lake, against what `instance` knows: its registered
    partitions and the code version each stage last ran with (`sweep_cache`: look for
    cached vectors no index row uses; the sensor's frequent ticks do not)."""
    code = CodeVersions(stage_code_versions(embedder.model_id), ran_with(instance))
    return reconcile(
        lake.lake,
        lancedb.uri_for(lake.lake),
        embedder,
        instance.get_dynamic_partitions(DOC_VERSIONS),
        code,
        history=lake.keep_history,
        force=force,
        sweep_cache=sweep_cache,
    )


def plan_removals(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: Embedder,
) -> Plan:
    """The partitions to add and versions to remove, against `instance`'s registered
    partitions, with no run decided (`core.lifecycle.reconcile.removal_plan`): after runs, what a
    newly indexed version superseded."""
    return removal_plan(
        lake.lake,
        lancedb.uri_for(lake.lake),
        embedder,
        instance.get_dynamic_partitions(DOC_VERSIONS),
        history=lake.keep_history,
    )


def carry_out_removals(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    plan: Plan,
    say: Callable[[str], None],
    earlier: Mapping[str, Mapping[str, int]] | None = None,
) -> list[str]:
    """Purge each version the plan removes from Parquet and LanceDB (all model tables),
    record why in `removed_versions.json` and as an observation on `embeddings`, one line
    each through `say`, with what `earlier` says a run already deleted of it (a version a
    new one superseded: `Removal.counts` by key). Dagster OSS keeps a deleted partition's
    old materializations; the observation (and `trecho status`) says the version is
    gone. Cached vectors no index row uses go with the removals, or on their own (one
    more line) when there is none. Returns the removed keys that are registered
    partitions (for the caller to delete)."""
    for key, reason in plan.remove.items():
        removal = purge_version(lake.lake, lancedb.uri_for(lake.lake), key, reason)
        removal = removal.add((earlier or {}).get(key, {}))
        say(f"{key}: {reason}; {removal_counts(removal.counts())}")
        instance.report_runless_asset_event(
            AssetObservation(
                asset_key=EMBEDDINGS,
                metadata={
                    "removed_version": key,
                    "reason": reason,
                    "index_rows_removed": removal.rows,
                    "files_removed": removal.files,
                    "live_versions": ", ".join(plan.scan.live),
                },
            )
        )
    if plan.unused_cache and not plan.remove:
        deleted = delete_unused_cached(lancedb.uri_for(lake.lake))
        say(f"embedding cache: {deleted} cached vectors of texts no index row holds")
    return [k for k in plan.remove if k in plan.registered]


def removal_counts(counts: Mapping[str, int]) -> str:
    """What a removal deleted, as its line says it (`Removal.counts`)."""
    return (
        f"{counts.get('rows', 0)} index rows, {counts.get('files', 0)} files, "
        f"{counts.get('cache_entries', 0)} cached vectors"
    )


def job_of(run: Run) -> str:
    """The job that carries out a planned run: only chunks + embeddings when extraction
    is current (a model change), else the whole pipeline."""
    return "embed_documents" if run.embed_only else "index_documents"


def run_requests(plan: Plan) -> list[RunRequest]:
    """One run request of the index job per planned run, with its run key and tags (why,
    which file); only chunks + embeddings when extraction is current."""
    return [
        RunRequest(
            partition_key=run.key,
            run_key=run.run_key,
            asset_selection=[AssetKey(s) for s in EMBED_STAGES] if run.embed_only else None,
            tags={"trecho/reason": run.reason, "trecho/sha256": run.sha256[:16]},
        )
        for run in plan.run.values()
    ]
