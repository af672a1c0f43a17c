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
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    RunRequest,
    RunsFilter,
)

from rag_assets.core.embedding import Embedder
from rag_assets.core.lake import path_state
from rag_assets.core.lifecycle import (
    CodeVersions,
    Plan,
    Run,
    reconcile,
    removal_plan,
)
from rag_assets.core.pipeline import stage_code_versions as core_code_versions
from rag_assets.core.stages import EMBED_STAGES, EMBEDDINGS, PIPELINE
from rag_assets.orchestration.partitions import DOC_VERSIONS
from resources import LakeResource, LanceDBResource

CODE_VERSION_TAG = "dagster/code_version"


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
