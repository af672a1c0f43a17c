"""`trecho backfill`: the configured model's table filled for every live version, by the
same plan and runs as `materialize` (`orchestration.materialize`), with nothing removed
and no eval report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dagster import DagsterInstance, Definitions

from rag_assets.core.lifecycle import note_failed
from rag_assets.core.pipeline import ModelProgress, model_progress
from rag_assets.orchestration.concurrency import skip_in_flight
from rag_assets.orchestration.materialize import (
    UP_TO_DATE,
    Outcome,
    Say,
    catch_up_indexes,
    keep_tables,
    run_partitions,
    start_log,
    stores_of,
)
from rag_assets.orchestration.partitions import DOC_VERSIONS
from rag_assets.orchestration.plans import job_of, plan_lake


@dataclass
class Backfilled:
    """What `backfill` did."""

    runs: Outcome
    progress: ModelProgress
    """Where the model's table stands once done (complete: search uses it)."""
    log: Path


def backfill(defs: Definitions, instance: DagsterInstance, *, say: Say = print) -> Backfilled:
    """Fill the definitions' model's table for every live version: the versions the
    reconcile plan runs (the same plan as `materialize`: a version whose extraction is
    current re-runs chunks + embeddings only, the others the whole pipeline), partitions
    registered, nothing removed and no eval report. Search switches to the model's table
    when the last version is in."""
    lake, lancedb, embedder = stores_of(defs)
    log = start_log(instance, say)
    plan = plan_lake(instance, lake, lancedb, embedder)
    if plan.add:
        instance.add_dynamic_partitions(DOC_VERSIONS, plan.add)
    live = plan.scan.live
    say(f"backfill of {embedder.model_id} ({embedder.model}) for {len(live)} live versions")
    for key in plan.up_to_date:
        say(f"skipped  {key}: {UP_TO_DATE}")
    skip_in_flight(instance, plan.run, say)
    runs = run_partitions(defs, instance, {k: job_of(r) for k, r in plan.run.items()}, log, say)
    note_failed(lake.lake, runs.failed, plan.hashes)
    catch_up_indexes(lancedb.index(lake.lake, embedder), say)
    db = lancedb.uri_for(lake.lake)
    keep_tables(db, say)
    return Backfilled(runs, model_progress(lake.lake, db, embedder, lake.keep_history), log.path)
