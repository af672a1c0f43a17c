"""`trecho materialize` and `trecho backfill`, carried out in-process: the reconcile plan
(`orchestration.plans`, `core.lifecycle.reconcile`) decides what runs for both, as it
does for the sensor and the cron schedule.

They take the code location's definitions (`build_definitions`: its resources give the
lake, the model and the index) and a Dagster instance, tell their progress one line at
a time through `say`, and return what they did; Dagster's own logs go to a file
(`RunLog`), not to the terminal.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import textwrap
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dagster import AssetCheckSeverity, DagsterInstance, Definitions

from rag_assets.core.index import Index, upkeep_tables
from rag_assets.core.lake import Lake, file_lock, this_process, waited_lock
from rag_assets.core.lifecycle import Plan, note_failed
from rag_assets.core.stages import EMBEDDINGS
from rag_assets.orchestration.checks import WHERE
from rag_assets.orchestration.concurrency import INSTANCE_YAML, skip_in_flight, write_home_yaml
from rag_assets.orchestration.partitions import DOC_VERSIONS
from rag_assets.orchestration.plans import (
    job_of,
    plan_lake,
    plan_removals,
    skip_changing,
)
from rag_assets.orchestration.removals import carry_out_removals, removal_counts
from rag_assets.orchestration.runs import fail_interrupted_runs, process_tags
from resources import LakeResource, LanceDBResource

Say = Callable[..., None]
"""Where progress goes, print-like: `say(line)`, or `say(start, end=" ")` for a line the
next call finishes (`[1/3] key ...` then `ok`)."""

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""The terminal gets one line per version; Dagster's own logs go to the log file."""

UP_TO_DATE = "up to date (same file, sidecar, code and index)"
SKIPPED_SHOWN = 20
"""Versions skipped for one reason that get a line each; past that, one line counts them
(`trecho status` lists every version: a rerun of a large lake is not 10,000 lines)."""


def say_skipped(say: Say, reasons: Mapping[str, str], what: str) -> None:
    """A `skipped` line per version of `reasons` (key -> why), or one line saying how
    many versions were skipped as `what` when they are more than `SKIPPED_SHOWN`."""
    if len(reasons) <= SKIPPED_SHOWN:
        for key, reason in reasons.items():
            say(f"skipped  {key}: {reason}")
        return
    say(f"skipped  {len(reasons):,} versions {what} (`trecho status` lists each)")


INSTANCE_LOCK = ".trecho-instance.lock"
"""The file in a Dagster home locked while its instance is made and its storage created
or migrated: commands started at once on a new lake make it one after the other."""

RUNS_LOCK = ".trecho-runs.lock"
"""The file of a lake (`Lake.lock_path`) locked while a command runs its jobs: a second
`materialize` or `backfill` on the lake waits for the first, saying so in one line."""


def open_instance(home: Path) -> DagsterInstance:
    """The persistent Dagster instance in `home` (made, with a `dagster.yaml` turning
    telemetry off and queueing one run per version, when missing); `DAGSTER_HOME` is set
    to it, as Dagster reads it. The
    instance is opened under `INSTANCE_LOCK`: its SQLite storage is created and stamped
    by one process at a time (processes racing there left two migration heads)."""
    with file_lock(write_instance_yaml(home) / INSTANCE_LOCK):
        os.environ["DAGSTER_HOME"] = str(home.resolve())
        return DagsterInstance.get()


def write_instance_yaml(home: Path) -> Path:
    """Make the Dagster home `home` with trecho's `dagster.yaml` (telemetry off, one run
    per version in the queue) unless it has one (a deployment's is kept); return `home`.
    Written whole or not at all (renamed into place), so a reader never sees half."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        write_home_yaml(home, INSTANCE_YAML)
    return home


def hold_lake(lake: Lake, command: str, say: Say) -> AbstractContextManager[None]:
    """The lake's `RUNS_LOCK`, held for a command that runs jobs: another such command on
    the lake waits for it, `say` naming the lock and its holder once."""
    return waited_lock(lake.lock_path(RUNS_LOCK), this_process(command), say)


class RunLog:
    """The file the full Dagster logs of one command go to (one per command run)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.path = folder / f"trecho-{stamp}-{os.getpid()}.log"

    def write(self, instance: DagsterInstance, run_id: str, what: str) -> None:
        """Append every event of a run, errors with their stack traces."""
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(f"=== {what}: run {run_id}\n")
            for entry in instance.all_logs(run_id):
                stamp = dt.datetime.fromtimestamp(entry.timestamp).isoformat(timespec="seconds")
                level = logging.getLevelName(entry.level)
                step = f" [{entry.step_key}]" if entry.step_key else ""
                fh.write(f"{stamp} {level}{step} {entry.user_message}\n")
                data = entry.dagster_event.event_specific_data if entry.dagster_event else None
                error = getattr(data, "error", None)
                if error is not None:
                    fh.write(textwrap.indent(error.to_string(), "    ") + "\n")


def start_log(instance: DagsterInstance, say: Say) -> RunLog:
    """What a command that runs jobs does first: mark failed the runs a killed `trecho`
    left unfinished, and open the file Dagster's logs go to (`<DAGSTER_HOME>/logs`)."""
    for run_id in fail_interrupted_runs(instance):
        say(f"marked failed: run {run_id[:8]} (interrupted: its process is gone)")
    return RunLog(Path(instance.root_directory) / "logs")


def run_tags() -> dict[str, str]:
    """Tags of a run started by a `trecho` command: its trigger, host and process id."""
    return {"trecho/trigger": "cli", **process_tags()}


def failure_reason(result: Any) -> str:
    """The first line of the first failed step's error, without the exception class; for
    a blocking asset check, the check's name and where it failed (its `where` metadata:
    the table and page), not Dagster's line that ends before naming it."""
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.passed or not evaluation.blocking:
            continue
        if evaluation.severity != AssetCheckSeverity.ERROR:
            continue
        metadata = evaluation.metadata
        where = metadata[WHERE].value if WHERE in metadata else ""
        counts = [f"{k} {v.value}" for k, v in metadata.items() if k != WHERE]
        detail = "; ".join(
            x for x in (", ".join(counts), f"first at {where}" if where else "") if x
        )
        name = f"{evaluation.asset_key.to_user_string()}/{evaluation.check_name}"
        return f"blocking check {name} failed" + (f" ({detail})" if detail else "")
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE" and event.step_failure_data.error:
            message = event.step_failure_data.error.message.strip().splitlines()[0]
            name, sep, rest = message.partition(": ")
            return rest if sep and "." in name and " " not in name else message
    return "the run failed (see the log file)"


def metadata(result: Any, asset: str, key: str) -> Any:
    """The metadata value `key` of the run's materialization of `asset` (None: none)."""
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if materialization.asset_key.to_user_string() == asset and key in materialization.metadata:
            return materialization.metadata[key].value
    return None


@dataclass
class Outcome:
    """What a series of runs did, per partition key."""

    ok: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    superseded: dict[str, dict[str, int]] = field(default_factory=dict)
    """Older versions the runs' embeddings steps removed (superseded by the version they
    indexed), with what left each store (`Removal.counts`)."""


def run_partitions(
    defs: Definitions,
    instance: DagsterInstance,
    jobs: Mapping[str, str],
    log: RunLog,
    say: Say,
    replaced: Callable[[str, list[str]], str | None] | None = None,
) -> Outcome:
    """Run one job per partition key in-process (in the order of `jobs`), one line each;
    Dagster's own logs go to `log`. `replaced(key, ok)`: the version, among those this
    series indexed so far, that supersedes `key` (then `key` is skipped, not run)."""
    outcome = Outcome()
    for n, (key, job_name) in enumerate(jobs.items(), start=1):
        newer = replaced(key, outcome.ok) if replaced is not None else None
        if newer is not None:
            outcome.skipped[key] = f"superseded by {newer}, indexed just before"
            say(f"[{n}/{len(jobs)}] {key} skipped: {outcome.skipped[key]}")
            continue
        say(f"[{n}/{len(jobs)}] {key} ...", end=" ")
        result = defs.resolve_job_def(job_name).execute_in_process(
            partition_key=key,
            instance=instance,
            raise_on_error=False,
            tags=run_tags(),
            run_config=QUIET,
        )
        log.write(instance, result.run_id, key)
        not_written = metadata(result, EMBEDDINGS, "not_written")
        if result.success and not_written:
            outcome.skipped[key] = not_written
            say(f"skipped: not written, {not_written}")
        elif result.success:
            outcome.ok.append(key)
            outcome.superseded.update(metadata(result, EMBEDDINGS, "superseded_removed") or {})
            rows = metadata(result, EMBEDDINGS, "rows")
            embedded = metadata(result, EMBEDDINGS, "texts_embedded")
            say(f"ok ({rows} chunks indexed, {embedded} texts embedded)")
        else:
            outcome.failed[key] = failure_reason(result).removeprefix(f"{key}: ")
            say(f"failed: {outcome.failed[key]}")
    return outcome


def remove_not_live(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    plan: Plan,
    say: Say,
    *,
    say_not_live: bool = True,
    earlier: Mapping[str, Mapping[str, int]] | None = None,
) -> None:
    """Carry out the plan's removals, one line each (and one per version not live with
    nothing left to remove, with `say_not_live`), counting what runs already removed of
    them (`earlier`: `Outcome.superseded`)."""
    removed = carry_out_removals(
        instance,
        lake,
        lancedb,
        plan,
        lambda m: say(f"removed  {m}"),
        earlier,
        waiting=lambda m: say(f"skipped  {m}"),
    )
    for key in removed:
        instance.delete_dynamic_partition(DOC_VERSIONS, key)
    if say_not_live:
        say_skipped(say, plan.nothing_left, "not live, removed before")


def catch_up_indexes(index: Index, say: Say) -> None:
    """Take the rows still searched flat into the indexes at the end of a command, even
    when nothing ran (rows a killed run wrote before its own index update)."""
    if index.exists():
        done = index.update_indexes(max_lag_rows=0)
        if done:
            say(f"indexes: {'; '.join(done)}")


def keep_tables(db: str, say: Say) -> None:
    """The tables' upkeep at the end of a command (`upkeep_tables`: compaction once
    fragments pile up, old versions deleted), one line per table it changed."""
    for done in upkeep_tables(db):
        say(f"upkeep   {done}")


def stores_of(defs: Definitions) -> tuple[LakeResource, LanceDBResource, Any]:
    """The definitions' `lake` and `lancedb` resources, and the embedder of `embedder`."""
    resources = defs.resources
    return resources["lake"], resources["lancedb"], resources["embedder"].embedder()


@dataclass
class Materialized:
    """What `materialize` did."""

    runs: Outcome
    skipped: int
    """Versions not run: problems in `raw/`, not live, up to date, not written."""
    failed: dict[str, str]
    """Failed runs' keys (and `eval_report`) with why."""
    db: str
    log: Path
    report: str | None = None
    """The eval report's `report.html`, when it ran and succeeded."""
    live: int = field(default=0, init=False)
    """Live versions once done."""
    indexed: int = field(default=0, init=False)
    """Of those, the versions the configured model's table holds."""
    live_failed: int = field(default=0, init=False)
    """Of those, the versions not indexed whose run failed (they answer nothing)."""
    kept_failed: int = field(default=0, init=False)
    """Of the indexed ones, those whose run of a new file failed: they answer from the
    rows of the file it replaced (counted indexed, not failed: each version once)."""

    def count(self, plan: Plan) -> None:
        """The live versions' counts as `plan` (made after the runs) sees them."""
        live, rows, failed = plan.scan.live, plan.index_rows, self.failed
        self.live = len(live)
        self.indexed = sum(1 for k in live if rows.get(k, 0))
        self.live_failed = sum(1 for k in live if k in failed and not rows.get(k, 0))
        self.kept_failed = sum(1 for k in live if k in failed and rows.get(k, 0))


def materialize(
    defs: Definitions,
    instance: DagsterInstance,
    *,
    force: bool = False,
    eval_config: Mapping[str, Any] | None = None,
    say: Say = print,
) -> Materialized:
    """Carry out the reconcile plan (every live version with `force`): removals,
    partitions, one run per planned version (each document's newest first; an older
    version a run of this series superseded is skipped), then the removals what a new
    version superseded calls for, the indexes caught up and the tables kept compact
    (`upkeep`), and the eval report with `eval_config` (its asset config; None: no
    report)."""
    lake, lancedb, embedder = stores_of(defs)
    log = start_log(instance, say)
    plan = plan_lake(instance, lake, lancedb, embedder, force=force)
    for problem in plan.scan.problems:
        say(f"skipped  {problem}")
    skipped = len(plan.scan.problems) + len(plan.scan.dead) + skip_changing(plan, say)
    skipped += skip_in_flight(instance, plan.run, say)
    remove_not_live(instance, lake, lancedb, plan, say)
    if plan.add:
        instance.add_dynamic_partitions(DOC_VERSIONS, plan.add)
    skipped += len(plan.up_to_date)
    say_skipped(say, dict.fromkeys(plan.up_to_date, UP_TO_DATE), UP_TO_DATE)
    jobs = {k: job_of(plan.run[k]) for k in plan.run_order()}  # newest first per document
    runs = run_partitions(defs, instance, jobs, log, say, plan.replaced_by)
    note_failed(lake.lake, runs.failed, plan.hashes)  # `trecho status` shows why
    if runs.ok or runs.failed or runs.skipped:  # what a newly indexed version superseded
        after = plan_removals(instance, lake, lancedb, embedder)
    else:  # nothing ran: the plan's removals are done, nothing else changed
        after = replace(plan, remove={}, unused_cache=0)
    superseded = runs.superseded
    remove_not_live(instance, lake, lancedb, after, say, say_not_live=False, earlier=superseded)
    for key, counts in superseded.items():
        if key not in after.remove:  # emptied by the run, nothing left for the plan
            reason = after.scan.reasons.get(key, "superseded")
            say(f"removed  {key}: {reason}; " + removal_counts(counts))
    catch_up_indexes(lancedb.index(lake.lake, embedder), say)  # also a killed run's rows
    keep_tables(lancedb.uri_for(lake.lake), say)
    done = Materialized(
        runs, skipped + len(runs.skipped), dict(runs.failed), lancedb.uri_for(lake.lake), log.path
    )
    done.count(after)
    if eval_config is not None:
        say("eval report ...", end=" ")
        result = defs.resolve_job_def("eval_report_job").execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config={**QUIET, "ops": {"eval_report": {"config": dict(eval_config)}}},
            tags=run_tags(),
        )
        log.write(instance, result.run_id, "eval_report")
        if result.success:
            done.report = metadata(result, "eval_report", "report")
            say("ok")
        else:
            done.failed["eval_report"] = failure_reason(result)
            say(f"failed: {done.failed['eval_report']}")
        last_look(instance, lake, lancedb, embedder, done, say)  # the lake after the eval
    return done


def last_look(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    embedder: Any,
    done: Materialized,
    say: Say,
) -> None:
    """The lake read once more after the eval report, the command's long last step: a
    version revoked (or its file removed) after the plan made once the runs ended is
    removed by this same command, not left searchable until the next one; `done`'s
    counts follow. (Without an eval nothing runs between that plan and the end.)"""
    late = plan_removals(instance, lake, lancedb, embedder)
    if late.remove:
        remove_not_live(instance, lake, lancedb, late, say, say_not_live=False)
        done.count(late)
