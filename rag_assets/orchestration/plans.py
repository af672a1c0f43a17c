"""The Dagster side of the reconcile step (`core.lifecycle.reconcile`): what the instance knows fed
into the plan, and the plan carried out as partition changes, removals and run requests.
The sensor, the cron schedule and `trecho materialize` all go through here."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetKey,
    AssetMaterialization,
    AssetObservation,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    RunRequest,
    RunsFilter,
)

from rag_assets.core.embedding import Embedder
from rag_assets.core.lake import path_state, remove_lock
from rag_assets.core.lifecycle import (
    CodeVersions,
    Plan,
    Run,
    delete_unused_cached,
    purge_versions,
    reconcile,
    removal_plan,
)
from rag_assets.core.pipeline import stage_code_versions as core_code_versions
from rag_assets.core.stages import EMBED_STAGES, EMBEDDINGS, PIPELINE
from rag_assets.orchestration.checks import INDEX_MATCHES_CHUNKS, per_version
from rag_assets.orchestration.partitions import DOC_VERSIONS
from resources import LakeResource, LanceDBResource

CODE_VERSION_TAG = "dagster/code_version"
LIVE_SHOWN = 20
"""Live versions a removal's observation names (then how many more): the list is in
`trecho status`, and every removal of a large lake would store it whole."""


def stage_code_versions(embedder: Embedder) -> dict[str, str]:
    """The code version of each stage a version's run goes through, for the configured
    model (the chunks stage's carries its id and token limit, the embeddings stage's its
    id), as `build_definitions` gives them (`core.pipeline.stage_code_versions`)."""
    return core_code_versions(embedder.model_id, embedder.max_tokens)


RAN_WITH_KEY = "trecho/ran_with"
"""Where `latest_records` keeps what it read, in the instance's key-value store (next to
the daemons' cursors, so it goes with the event log it summarizes)."""
NEWEST_RECORD = "_newest_record"
"""The event log's newest record id when `latest_records` last read it (kept next to the
stages' entries)."""
RECORDS_PER_FETCH = 1000
"""Materializations fetched per query (SQLite caps the parameters of one query)."""


def ran_with(instance: DagsterInstance) -> dict[str, dict[str, str]]:
    """Per stage, the code version each partition's latest materialization ran with
    (`latest_records`)."""
    return _code_versions(latest_records(instance))


def _code_versions(
    records: dict[str, dict[str, tuple[int, str]]],
) -> dict[str, dict[str, str]]:
    return {
        stage: {p: tag for p, (_, tag) in entries.items()} for stage, entries in records.items()
    }


def _records(instance: DagsterInstance, stage: str, ids: list[int]) -> Iterator[Any]:
    """The materializations of `stage` with these storage ids, fetched in batches
    (SQLite caps the parameters of one query: `RECORDS_PER_FETCH`)."""
    for start in range(0, len(ids), RECORDS_PER_FETCH):
        batch = ids[start : start + RECORDS_PER_FETCH]
        yield from instance.fetch_materializations(
            AssetRecordsFilter(asset_key=AssetKey(stage), storage_ids=batch), limit=len(batch)
        ).records


def latest_records(instance: DagsterInstance) -> dict[str, dict[str, tuple[int, str]]]:
    """Per stage, each partition's latest materialization: its storage id and the code
    version it ran with.

    One query per stage gives each partition's latest materialization (its storage id);
    only the materializations not seen before are read back: the code version of each
    one read is kept, by storage id, in the instance's key-value store (`RAN_WITH_KEY`).
    An event never changes once stored, so a kept entry with the same storage id holds,
    and a run re-reads only what it materialized since (reading every one back costs
    about 0.4 ms each: 14 s for six stages of 6,000 versions). When the event log's
    newest record is the one it was at the last call, nothing was materialized since and
    the kept entries answer without a query per stage (0.3 s on 10,000 versions). A run
    deleted from the instance since leaves its versions' entries as they were: what the
    lake holds is still what that code made."""
    storage = instance.run_storage
    raw = storage.get_cursor_values({RAN_WITH_KEY}).get(RAN_WITH_KEY)
    try:
        kept = json.loads(raw) if raw else {}
    except ValueError:
        kept = {}
    kept = kept if isinstance(kept, dict) else {}
    newest = instance.event_log_storage.get_maximum_record_id()
    if newest is not None and kept.get(NEWEST_RECORD) == newest:
        try:
            return {stage: {p: (e[0], e[1]) for p, e in kept[stage].items()} for stage in PIPELINE}
        except (AttributeError, TypeError, IndexError, KeyError):  # not as written: read
            pass
    out: dict[str, dict[str, tuple[int, str]]] = {}
    changed = kept.get(NEWEST_RECORD) != newest
    kept[NEWEST_RECORD] = newest
    for stage in PIPELINE:
        asset_key = AssetKey(stage)
        latest = instance.get_latest_storage_id_by_partition(
            asset_key, DagsterEventType.ASSET_MATERIALIZATION
        )
        known = kept.get(stage) if isinstance(kept.get(stage), dict) else {}
        now = {p: known[p] for p, sid in latest.items() if _sid(known.get(p)) == sid}
        fresh = [sid for p, sid in latest.items() if p not in now]
        for r in _records(instance, stage, fresh):
            if r.partition_key is not None and r.asset_materialization is not None:
                tags = r.asset_materialization.tags or {}  # none on a removal marker
                now[r.partition_key] = [r.storage_id, tags.get(CODE_VERSION_TAG, "")]
        out[stage] = {p: (entry[0], entry[1]) for p, entry in now.items()}
        changed = changed or now != known
        kept[stage] = now
    if changed:
        storage.set_cursor_values({RAN_WITH_KEY: json.dumps(kept, separators=(",", ":"))})
    return out


def _sid(entry: Any) -> int | None:
    """The storage id of a kept `[storage_id, code_version]` entry (None: malformed)."""
    return entry[0] if isinstance(entry, list) and len(entry) == 2 else None


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
    records = latest_records(instance)
    code = CodeVersions(
        stage_code_versions(embedder),
        _code_versions(records),
        {p: sid for p, (sid, _) in records[EMBEDDINGS].items()},
    )
    plan = reconcile(
        lake.lake,
        lancedb.uri_for(lake.lake),
        embedder,
        instance.get_dynamic_partitions(DOC_VERSIONS),
        code,
        history=lake.keep_history,
        force=force,
        sweep_cache=sweep_cache,
    )
    keep_own_records(instance, plan)
    return plan


INPUTS_TAG, INDEXED_TAG = "trecho/inputs", "trecho/indexed"  # `Run.inputs_key`, `.indexed`


def keep_own_records(instance: DagsterInstance, plan: Plan) -> None:
    """Where a version's latest index record was made by a run asked for with the same
    inputs (its tags), the record that run started from stands for it: its run key
    again, so a run that indexed the version yet left it to run (rows not as its chunks)
    is not asked for at every tick. Any other run's record (another model's, a
    backfill's) moves the key (`Run.run_key`)."""
    by_sid = {run.indexed: key for key, run in plan.run.items() if run.indexed}
    records = list(_records(instance, EMBEDDINGS, list(by_sid)))
    by_run = {r.run_id: by_sid[r.storage_id] for r in records if r.run_id}
    runs = list(by_run)
    for at in range(0, len(runs), RECORDS_PER_FETCH):
        for made_by in instance.get_runs(RunsFilter(run_ids=runs[at : at + RECORDS_PER_FETCH])):
            run = plan.run[by_run[made_by.run_id]]
            start = made_by.tags.get(INDEXED_TAG, "")
            if made_by.tags.get(INPUTS_TAG) == run.inputs_key and start.isdigit():
                plan.run[run.key] = replace(run, indexed=int(start))


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


def file_state(plan: Plan, key: str) -> str:
    """What the listing saw of a version's PDF and sidecar (size, mtime...: `core.lake.
    listing`), one string; stat'ed now when the listing did not give it."""
    raw = plan.scan.files.get(key)
    if raw is None:
        return ""
    pdf = raw.pdf_state or path_state(raw.pdf_path)
    return f"{pdf}|{raw.sidecar_state or ''}"


def hold_unsettled(plan: Plan, looked: Mapping[str, str]) -> dict[str, str]:
    """Take out of `plan.run` each version whose files are not as `looked` (key -> its
    `file_state` at the previous look) saw them: a file being copied, or new since that
    look. Returns the held versions' states now, for the next look to compare: a run is
    asked for only for a file left the same across two looks, so no run reads half a
    copy (nor tags the half file's hash)."""
    held = {}
    for key in list(plan.run):
        state = file_state(plan, key)
        if looked.get(key) != state:
            held[key] = state
            del plan.run[key]
    return held


def settled(plan: Plan, pause: float) -> dict[str, str]:
    """The same rule within one evaluation (the cron schedule keeps no cursor): a second
    look at each version to run `pause` seconds after the listing; what changed
    meanwhile is taken out of `plan.run` (asked for at a later tick). Returns the held
    versions' states."""
    if not plan.run:
        return {}
    time.sleep(pause)
    now = {}
    for key in plan.run:
        raw = plan.scan.files.get(key)
        if raw is not None:
            pdf, sidecar = path_state(raw.pdf_path), path_state(raw.sidecar_path)
            now[key] = f"{pdf}|{sidecar or ''}"
    return hold_unsettled(plan, now)


CHANGING = "its file changed while looked at (still being copied?); run again once it is whole"
"""Why `trecho materialize` skips a version whose file changed between its two looks."""
MATERIALIZE_SETTLE_S = 1.0
"""Seconds between `trecho materialize`'s two looks at the files it would run
(`settled`; the cron schedule's are `SETTLE_S` apart, the sensor's a tick apart)."""


def skip_changing(plan: Plan, say: Callable[[str], None]) -> int:
    """`trecho materialize`'s second look (`settled`, `MATERIALIZE_SETTLE_S` after the
    listing): a version whose file changed meanwhile (a copy under way) is taken out of
    `plan.run` and skipped, with a line saying so. Returns how many were."""
    changing = settled(plan, MATERIALIZE_SETTLE_S)
    for key in changing:
        say(f"skipped  {key}: {CHANGING}")
    return len(changing)


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
            tags={
                "trecho/reason": run.reason,
                "trecho/sha256": run.sha256,  # the whole hash: what `sha256sum` prints
                INPUTS_TAG: run.inputs_key,
                INDEXED_TAG: str(run.indexed or 0),
            },
        )
        for run in plan.run.values()
    ]
