"""One remover at a time across hosts: the reconcile plan's removals carried out under the
lake's purge lease (`core.lake.lease`), which every host honours (the sensor's code
server, the schedules, `trecho materialize` on any machine)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Mapping

from dagster import (
    AssetCheckEvaluation,
    AssetKey,
    AssetMaterialization,
    AssetObservation,
    DagsterInstance,
)

from rag_assets.core.lake import PURGE, held_lease, remove_lock, this_process
from rag_assets.core.lifecycle import Plan, delete_unused_cached, purge_versions
from rag_assets.core.stages import EMBEDDINGS
from rag_assets.orchestration.checks import INDEX_MATCHES_CHUNKS, per_version
from resources import LakeResource, LanceDBResource

LIVE_SHOWN = 20
"""Live versions a removal's observation names (then how many more): the list is in
`trecho status`, and every removal of a large lake would store it whole."""


def carry_out_removals(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    plan: Plan,
    say: Callable[[str], None],
    earlier: Mapping[str, Mapping[str, int]] | None = None,
    waiting: Callable[[str], None] | None = None,
) -> list[str]:
    """`purge_removals` under the lake's purge lease: while another process, on this host
    or another, holds it, nothing is removed here (one line through `waiting`, else
    `say`, says who holds it, until when) and the next plan finds the removals again.
    Returns the removed keys that are registered partitions."""
    if not plan.remove and not plan.unused_cache:
        return purge_removals(instance, lake, lancedb, plan, say, earlier)
    holder = this_process(f"removals on {socket.gethostname()}")
    with held_lease(lake.lake.leases_dir, PURGE, holder) as other:
        if other is not None:
            what = ", ".join(plan.remove) or "unused cached vectors"
            (waiting or say)(
                f"{what}: not removed yet, {other} holds the lake's purge lease (the next "
                "plan removes it)"
            )
            return []
        return purge_removals(instance, lake, lancedb, plan, say, earlier)


def purge_removals(
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
    new one superseded: `Removal.counts` by key). A version a run already removed (its
    record written, nothing left here) gets no second observation: the run's carries
    what left each store. Dagster OSS keeps a deleted partition's
    old materializations; the observation (and `trecho status`) says the version is
    gone. The removals go in one batch (`purge_versions`: each table purged once).
    Cached vectors no index row uses go with the removals (one more line when several
    versions were removed), or on their own (one more line) when there is none. Returns
    the removed keys that are registered partitions (for the caller to delete)."""
    db = lancedb.uri_for(lake.lake)
    recorded = lake.lake.removed_keys() & set(plan.remove)  # by the run that removed them
    removals, swept = purge_versions(lake.lake, db, plan.remove)
    for key in plan.remove:  # its runs' lock goes with it (kept while a run holds it)
        remove_lock(lake.lake.version_lock(key))
    if len(plan.remove) == 1:  # the cached vectors its removal deleted were its own
        removals[next(iter(plan.remove))].cache_entries = swept
    live = plan.scan.live
    shown = ", ".join(live[:LIVE_SHOWN]) + (
        f" and {len(live) - LIVE_SHOWN} more" if len(live) > LIVE_SHOWN else ""
    )
    for key, reason in plan.remove.items():
        left = removals[key].rows or removals[key].files
        removal = removals[key].add((earlier or {}).get(key, {}))
        say(f"{key}: {reason}; {removal_counts(removal.counts())}")
        if key in recorded and not left:
            continue  # its removal was recorded, with its counts, by the run that did it
        instance.report_runless_asset_event(
            AssetObservation(
                asset_key=EMBEDDINGS,
                metadata={
                    **removal.record(key, reason),
                    "live_versions": shown,
                    "live_count": len(live),
                },
            )
        )
        instance.report_runless_asset_event(removal_marker(lake, key, reason, shown))
        instance.report_runless_asset_event(removal_check(key, reason))
    if len(plan.remove) > 1 and swept:
        say(f"embedding cache: {swept} cached vectors of the removed versions' texts")
    if plan.unused_cache and not plan.remove:
        deleted = delete_unused_cached(lancedb.uri_for(lake.lake))
        say(f"embedding cache: {deleted} cached vectors of texts no index row holds")
    return [k for k in plan.remove if k in plan.registered]


def removal_marker(lake: LakeResource, key: str, reason: str, live: str) -> AssetMaterialization:
    """The materialization that closes a removed version's `embeddings` partition: its
    last event says `REMOVED` with why and when (none of its rows is left), so the
    asset's overview, which shows the latest materialization of any partition, and the
    partition's own page never name a removed version as indexed. Dagster OSS cannot
    wipe one partition's events (`wipe_asset_partitions` is not implemented for SQL
    storage), and a deleted partition keeps them. Only `embeddings` gets one: a marker on
    a stage with stages below it would set their automation going for a version being
    removed."""
    when = removal_time()
    return AssetMaterialization(
        asset_key=EMBEDDINGS,
        partition=key,
        description=(
            f"{key} removed ({reason}) at {when}: REMOVED, not a run's index; no row of it "
            "is left in the index, search no longer finds it"
        ),
        metadata={
            "status": f"removed ({reason})",
            "removed_at": when,
            "rows": 0,
            "removed_version": key,
            "removal_history": lake.lake.removal_history(key) or reason,
            "live_versions": live,
        },
    )


def removal_time() -> str:
    """Now, as a removal's `removed_at` says it (UTC, to the second)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def removal_check(key: str, reason: str) -> AssetCheckEvaluation:
    """The `embeddings` check's result that closes a removed version: the Checks tab's
    latest execution says the version is gone (0 rows, none expected) rather than
    showing its last run's result as if it were still indexed."""
    return AssetCheckEvaluation(
        asset_key=AssetKey(EMBEDDINGS),
        check_name=INDEX_MATCHES_CHUNKS,
        passed=True,
        partition=key,
        description=(
            f"{key} removed ({reason}) at {removal_time()}: none of its rows is left in the index"
        ),
        metadata=per_version({"stored": 0, "expected": 0}),
    )


def removal_counts(counts: Mapping[str, int]) -> str:
    """What a removal deleted, as its line says it (`Removal.counts`)."""
    return (
        f"{counts.get('rows', 0)} index rows, {counts.get('files', 0)} files, "
        f"{counts.get('cache_entries', 0)} cached vectors"
    )
