"""What `trecho status` shows: what is live, what search serves, and anything pending,
read from the stores themselves (not from Dagster's event log, which keeps a removed
version's old events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_assets.core.embedding import Embedder, recorded_paths
from rag_assets.core.index import ModelRef, embedder_for, model_tables, read_active
from rag_assets.core.lake import Derived, Lake, LakeError, version_sha256
from rag_assets.core.lifecycle import failure_of, read_outcomes, scan_versions
from rag_assets.core.pipeline import ModelProgress, model_progress
from rag_assets.core.stages import CHUNKS, FOLDERS, RAW_PDF
from rag_assets.settings import Settings


@dataclass(frozen=True)
class LiveVersion:
    """A live version: its file's sha256, its rows in the table search uses, and its
    state there (`indexed`, `PENDING (not indexed)`, `FAILED (not indexed): why`,
    `changed, not yet indexed (indexed <sha>, now <sha>)`, `UNSYNCED (N chunks in
    Parquet)` or `UNSYNCED (no chunks file ...)`), followed by its sidecar's error when
    the sidecar does not parse (its runs fail)."""

    key: str
    sha256: str
    rows: int
    state: str


@dataclass(frozen=True)
class DeadVersion:
    """A version that is not live, why, and whether anything of it is left
    (`CLEANUP PENDING`) or not (`removed`)."""

    key: str
    reason: str
    state: str


@dataclass
class Status:
    """The lake's state as `trecho status` prints it."""

    lake: Path
    table: str
    """The table search uses."""
    rows: int
    active: ModelRef | None
    """The model search uses (None before anything was indexed)."""
    indexes: str | None
    """The indexes of that table, summarized (None: no table)."""
    configured: str
    """The id of the model reported on: the lake's (the one it switches to, else the one
    search uses), or the one `--model` names."""
    backfill: ModelProgress | None
    """Where that model's table stands, when search uses another model."""
    tables: list[str]
    """Every model table in the database."""
    live: list[LiveVersion] = field(default_factory=list)
    not_live: list[DeadVersion] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Files under `raw/` that are no version (with why)."""
    in_flight: dict[str, list[Any]] = field(default_factory=dict)
    """Versions with runs queued or running on the lake's Dagster instance -> those runs
    (`orchestration.concurrency.RunInFlight`), read by `runs_by_version`."""
    embedding: dict[str, str] = field(default_factory=dict)
    """What embeds the configured model's passages and queries here, and why faster paths
    were refused: as the last runs recorded it (`recorded_paths`, with when), or built
    now (`Embedder.paths`, `--check-runtime`)."""


def lake_status(
    lake: Lake, db_uri: str, embedder: Embedder, settings: Settings, check_runtime: bool = False
) -> Status:
    """The state of `lake` and its database `db_uri`, `embedder` being the configured
    model (its index built by `settings`). The lake is listed once; a file is read
    (a PDF hashed, a footer read) only when it changed since a command last read it
    (`Lake.memo`). The embedding paths are those the last runs recorded (`recorded_paths`:
    no model is loaded), or, with `check_runtime`, built and checked here."""
    active = read_active(db_uri)
    serving = settings.index(db_uri, embedder_for(active, embedder))
    counts = serving.partition_counts() if serving.exists() else {}
    scan = scan_versions(lake, settings.keep_history)
    # a backfill is pending only when search uses another model's table: on a lake
    # nothing was indexed in yet, the versions are pending, not a backfill
    behind = active is not None and active.model_id != embedder.model_id
    status = Status(
        lake.root,
        serving.table_name,
        sum(counts.values()),
        active,
        serving.index_stats().summary() if serving.exists() else None,
        embedder.model_id,
        model_progress(lake, db_uri, embedder, settings.keep_history, scan.live)
        if behind
        else None,
        model_tables(db_uri),
        problems=list(scan.problems),
        embedding=embedder.paths()
        if check_runtime
        else recorded_paths(lake.runtime_dir, embedder.model_id),
    )
    status.in_flight = runs_by_version(lake, settings)
    derived = Derived(lake)
    outcomes = read_outcomes(lake)
    documents = derived.documents(scan.live)
    for key in scan.live:
        sha = version_sha256(lake, scan.files[key])
        outcome = outcomes.get(key, {})
        indexed = outcome.get("indexed") or documents.get(key, {}).get("sha256")
        failed = failure_of(outcome, sha)
        expected = derived.rows(FOLDERS[CHUNKS], key)
        have = counts.get(key, 0)
        if not have:
            state = f"FAILED (not indexed): {failed}" if failed else "PENDING (not indexed)"
        elif indexed and indexed != sha:  # the rows are of the file it replaced
            state = f"changed, not yet indexed (indexed {indexed[:12]}, now {sha[:12]})"
            state += f"; its run failed: {failed}" if failed else ""
        elif expected is None:  # rows served, but not the file they were cut to
            missing = lake.relative(lake.stage_path(FOLDERS[CHUNKS], key))
            state = f"UNSYNCED (no chunks file {missing}: `trecho materialize`, or the sensor "
            state += "of `trecho ui`, cuts it again)"
        elif expected != have:
            state = f"UNSYNCED ({expected} chunks in Parquet)"
        else:
            state = "indexed"
        state = with_runs(state, status.in_flight.get(key), have)
        sidecar = scan.sidecars.get(key)
        if isinstance(sidecar, LakeError) and str(sidecar) not in state:  # (said once)
            state += f"; its sidecar is wrong: {sidecar}"  # every run fails until fixed
        status.live.append(LiveVersion(key, sha, have, state))
    for key in scan.dead:
        leftover = counts.get(key, 0) or any(
            derived.exists(stage, key) for stage in (FOLDERS[RAW_PDF], FOLDERS[CHUNKS])
        )
        reason = scan.reasons.get(key, "")
        status.not_live.append(
            DeadVersion(key, reason, "CLEANUP PENDING" if leftover else "removed")
        )
    lake.memo.save()
    return status


def model_lines(status: Status, named: str | None, shell: Settings) -> list[str]:
    """What `trecho status` says of the model: the lake's (or the one `named` by
    `--model`) and whether a backfill to it is pending; and, when this shell's
    TRECHO_MODEL names another model, that the lake does not follow it (the lake's record
    is the one source: `core.index.lake_model`)."""
    fills = "`trecho backfill`, or the sensor of `trecho ui`, fills it"
    progress = status.backfill
    who = f"--model {status.configured}" if named else f"lake's model: {status.configured}"
    if progress is None:
        lines = [f"{who} (no backfill pending)"] if status.active is not None else []
    else:
        state = "complete" if progress.complete else f"{len(progress.missing)} versions missing"
        lines = [f"{who} -> backfill {state} ({len(progress.done)} done); {fills}"]
    if not named and shell.model and status.active is not None:
        asked = shell.embedder().model_id
        if asked != status.configured:
            lines.append(
                f"  {shell.var('model')}={shell.model} in this shell is not the lake's model "
                "and is not used; to switch: `trecho backfill --model "
                f"{shell.model}`, or the switch_model job in the UI"
            )
    return lines


def runs_by_version(lake: Lake, settings: Settings) -> dict[str, list[Any]]:
    """The runs queued or running per version on the lake's Dagster instance
    (DAGSTER_HOME, else `<lake>/.dagster`); empty when that instance was never made (no
    run can be in flight: nothing is created to say so), and when its storage cannot be
    read (a deployment's database out of reach: status still shows the stores)."""
    home = Path(settings.dagster_home or lake.dagster_home)
    if not (home / "dagster.yaml").is_file():
        return {}
    from dagster import DagsterInstance

    from rag_assets.orchestration.concurrency import runs_in_flight

    try:
        with DagsterInstance.from_config(str(home)) as instance:
            return runs_in_flight(instance)
    except Exception:  # noqa: BLE001  (any storage error: the runs are then not listed)
        return {}


def with_runs(state: str, runs: list[Any] | None, rows: int) -> str:
    """A version's state with the runs in flight on it: `PENDING: queued in run <id>
    (sensor raw_folder_sensor)` for one not indexed yet (no advice to run it again), else
    its state followed by the runs."""
    if not runs:
        return state
    said = "; ".join(str(run) for run in runs)
    return f"PENDING: {said}" if not rows else f"{state}; {said}"


def pending_line(status: Status, fill: str) -> str:
    """How many live versions wait to be indexed and what indexes them: those a run in
    flight works on are counted apart, never sent to `fill` (`trecho materialize` would
    leave them to that run)."""
    waiting = [v.key for v in status.live if not v.rows]
    flying = [k for k in waiting if k in status.in_flight]
    rest = len(waiting) - len(flying)
    line = f"{rest} live versions to index: {fill} indexes them" if rest else ""
    if flying:
        line += ("; " if line else "") + f"{len(flying)} with a run in flight (listed below)"
    return line or "no live version to index"
