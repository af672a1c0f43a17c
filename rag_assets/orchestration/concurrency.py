"""One run per document version at a time.

Two runs of one version write the same Parquet files and index rows: the second would
rewrite the chunks the first is embedding. Three guards keep them apart, all set by the
code location, so they hold under `dg dev` as in a deployment:

- the raw-folder sensor and the cron schedule ask for no run of a version that has one in
  flight (`keys_in_flight`): it is asked for again at a tick after that run ended, if
  the plan still wants it;
- the automation (`stages_follow_upstream`) asks for none either: its condition is
  `eager()` without a run in progress for the partition (`definitions.py`);
- a run holds its version's lock from its first step to its last (`LakeResource`, with
  the in-process executor: the whole run; one process per step: each step), so a run
  started by hand in the UI, or by `trecho materialize`, waits for the other to end.

A deployment's instance adds Dagster's own limit on top, `dagster/partition` at one run
per unique value (`PARTITION_RUN_LIMIT`, in `deploy/dagster.yaml` and in the
`dagster.yaml` that `trecho ui` writes), so the queue does not even start the second run.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from dagster import (
    AssetKey,
    AutomationCondition,
    AutomationContext,
    AutomationResult,
    DagsterInstance,
    DagsterRunStatus,
    RunsFilter,
)

from rag_assets.core.stages import EMBEDDINGS

PARTITION_TAG = "dagster/partition"
IN_FLIGHT = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]
"""Run states that may still write: queued or running, not yet ended."""

PARTITION_RUN_LIMIT = {
    "key": PARTITION_TAG,
    "value": {"applyLimitPerUniqueValue": True},
    "limit": 1,
}
"""The instance's run-queue limit that matches these guards (`concurrency: runs:
tag_concurrency_limits`)."""


SETTINGS_OFF = {"telemetry": {"enabled": False}, "nux": {"enabled": False}}
"""What trecho sets in any `dagster.yaml` it writes or starts the UI on: Dagster's
telemetry off (no usage statistics, no `logs/event.log`, no telemetry script in the
browser) and its community pop-up (`nux`: the e-mail form of a first visit) off; both
keys of Dagster's instance schema (`nux` is the setting its webserver reads for
`shouldShowNux`)."""

INSTANCE_YAML = yaml.safe_dump(
    {**SETTINGS_OFF, "concurrency": {"runs": {"tag_concurrency_limits": [PARTITION_RUN_LIMIT]}}},
    sort_keys=False,
)
"""The `dagster.yaml` trecho writes for a lake's own instance (`trecho materialize`,
`trecho ui`): `SETTINGS_OFF` (telemetry and Dagster's community pop-up off), and the
queue's limit of one run per version (`PARTITION_RUN_LIMIT`)."""


def write_home_yaml(home: Path, text: str) -> None:
    """Write `text` as `<home>/dagster.yaml`, whole or not at all: into a temporary file
    beside it (`.dagster.yaml.tmp-<pid>`) renamed into place, so a reader never sees
    half; on an OSError the temporary file is removed and the error raised."""
    tmp = home / f".dagster.yaml.tmp-{os.getpid()}"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, home / "dagster.yaml")
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


def unconfigured_instance(env: Mapping[str, str]) -> str | None:
    """One line for a code location loaded on an instance without a `dagster.yaml` (a
    `dg dev` started by hand: telemetry on, no run-queue limit), saying how to start the
    UI right; None when DAGSTER_HOME has one."""
    home = env.get("DAGSTER_HOME", "").strip()
    if home and (Path(home) / "dagster.yaml").is_file():
        return None
    lake = shlex.quote(env.get("TRECHO_LAKE") or "data_lake")
    where = f"{home} has no dagster.yaml" if home else "DAGSTER_HOME is not set"
    return (
        f"trecho: {where} (Dagster telemetry on, no one-run-per-version queue limit): "
        f"start the UI with `trecho ui --lake {lake}`"
    )


def keys_in_flight(instance: DagsterInstance, keys: Iterable[str]) -> dict[str, str]:
    """Of `keys`, the partitions that have a run queued or running: key -> its run id."""
    out: dict[str, str] = {}
    for key in keys:
        records = instance.get_run_records(
            RunsFilter(statuses=IN_FLIGHT, tags={PARTITION_TAG: key}), limit=1
        )
        if records:
            out[key] = records[0].dagster_run.run_id
    return out


@dataclass(frozen=True)
class RunInFlight:
    """A run of one version queued or running: what `trecho status` lists and why
    `trecho materialize` leaves the version to it."""

    run_id: str
    state: str
    """`queued`, `running` or `canceling`."""
    started_by: str
    """The sensor, schedule or backfill that asked for it, `a trecho command`, or `by
    hand` (the UI's Materialize)."""

    def __str__(self) -> str:
        return f"{self.state} in run {self.run_id} ({self.started_by})"


STATES = {
    DagsterRunStatus.QUEUED: "queued",
    DagsterRunStatus.NOT_STARTED: "queued",
    DagsterRunStatus.STARTING: "running",
    DagsterRunStatus.STARTED: "running",
    DagsterRunStatus.CANCELING: "canceling",
}


def _started_by(tags: Mapping[str, str]) -> str:
    """Who asked for a run, from Dagster's and trecho's tags."""
    if "dagster/sensor_name" in tags:
        return f"sensor {tags['dagster/sensor_name']}"
    if "dagster/schedule_name" in tags:
        return f"schedule {tags['dagster/schedule_name']}"
    if "dagster/backfill" in tags:
        return f"backfill {tags['dagster/backfill']}"
    if tags.get("trecho/trigger") == "cli":
        return "a trecho command"
    return "by hand"


def runs_in_flight(instance: DagsterInstance) -> dict[str, list[RunInFlight]]:
    """Every version with runs queued or running on `instance` -> those runs, oldest
    first (one query, whatever the number of versions)."""
    out: dict[str, list[RunInFlight]] = {}
    for record in reversed(instance.get_run_records(RunsFilter(statuses=IN_FLIGHT))):
        run = record.dagster_run
        key = run.tags.get(PARTITION_TAG)
        if key is not None:
            state = STATES.get(run.status, run.status.value.lower())
            out.setdefault(key, []).append(RunInFlight(run.run_id, state, _started_by(run.tags)))
    return out


def last_of_a_batch(instance: DagsterInstance, run_id: str, tags: Mapping[str, str]) -> bool:
    """Whether the run `run_id` (its `tags`) should leave the indexes covering every row
    at its end: no other run of a version is queued or running (the last of a sensor's
    batch, of a backfill), and it is not one of a `trecho` command's runs (the command
    catches the indexes up once, at its end)."""
    if tags.get("trecho/trigger") == "cli":
        return False
    return not any(
        run.run_id != run_id for runs in runs_in_flight(instance).values() for run in runs
    )


def skip_in_flight(
    instance: DagsterInstance, planned: dict[str, Any], say: Callable[[str], None]
) -> int:
    """Take out of `planned` (key -> planned run) the versions a run in flight works on,
    one `skipped` line each naming the run (`trecho materialize` and `backfill` leave them
    to it, and say so); returns how many."""
    flying = runs_in_flight(instance)
    left = [k for k in planned if k in flying]
    for key in left:
        del planned[key]
        runs = "; ".join(str(r) for r in flying[key])
        say(f"skipped  {key}: {runs}: left to it (`trecho status` shows when it ended)")
    return len(left)


class PartitionRunInFlight(AutomationCondition):
    """True for a partition that has a run queued or running, whatever stages that run
    targets (Dagster's own `in_progress()` looks at the runs of the target itself). An
    arbitrary-Python condition: the automation sensor that uses it is evaluated on the
    code server (`use_user_code_server=True`)."""

    @property
    def name(self) -> str:
        """The label the UI shows."""
        return "partition_run_in_flight"

    def evaluate(self, context: AutomationContext) -> AutomationResult:  # type: ignore[override]
        """The candidate partitions that have a run in flight."""
        candidates = context.candidate_subset
        if candidates.is_empty or not candidates.is_partitioned:
            return AutomationResult(context, context.get_empty_subset())
        instance = context.asset_graph_view.instance
        busy = keys_in_flight(instance, candidates.expensively_compute_partition_keys())
        return AutomationResult(context, candidates.compute_intersection_with_partition_keys(busy))


def index_changed_since_report(instance: DagsterInstance) -> bool:
    """Whether the eval report is due: the index changed (an `embeddings` materialization,
    or a removal's observation) after the report's last run was started (its planned
    materialization), or the report never ran; or, once, when the one report run started
    since that change failed (or was interrupted, and so marked failed or canceled)
    without writing the report: it is asked again once, not every tick (a second failure
    waits for the next index change)."""
    index, report = AssetKey(EMBEDDINGS), AssetKey("eval_report")

    def newest(records: Any) -> int:
        return max((r.storage_id for r in records.records), default=0)

    changed = max(
        newest(instance.fetch_materializations(index, limit=1)),
        newest(instance.fetch_observations(index, limit=1)),
    )
    if not changed:  # nothing indexed yet
        return False
    written = newest(instance.fetch_materializations(report, limit=1))
    starts = instance.fetch_planned_materializations(report, limit=2).records  # newest first
    if not starts:  # a report materialized without a run: that event
        return changed > written
    since = [r for r in starts if r.storage_id > changed]
    if not since:
        return True
    if written > changed or len(since) > 1:  # written since, or retried once already
        return False
    run = instance.get_run_by_id(since[0].run_id)
    return run is not None and run.status in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


class IndexChangedSinceReport(AutomationCondition):
    """True for the eval report when the index changed after its last run started
    (`index_changed_since_report`): an index change that finished while a report ran
    asks for another, which Dagster's `any_deps_updated().since_last_handled()` forgot
    once the running report materialized; a removal's observation counts too; the one
    run since a change failed without a report: asked again, once. An arbitrary-Python
    condition, evaluated on the code server."""

    @property
    def name(self) -> str:
        """The label the UI shows."""
        return "index_changed_since_report_started"

    def evaluate(self, context: AutomationContext) -> AutomationResult:  # type: ignore[override]
        """The whole (unpartitioned) candidate subset, or none."""
        instance = context.asset_graph_view.instance
        changed = index_changed_since_report(instance)
        subset = context.candidate_subset if changed else context.get_empty_subset()
        return AutomationResult(context, subset)


def one_run_per_version(condition: AutomationCondition) -> AutomationCondition:
    """`condition`, never true for a partition that has a run in flight."""
    return (condition & ~PartitionRunInFlight()).with_label(
        f"{condition.get_label() or condition.name}, no run of the version in flight"
    )


AUTOMATION_SENSOR = "stages_follow_upstream"


PAUSED_KEY = "ASSET_DAEMON_PAUSED"
"""The instance's daemon cursor that holds the pre-sensor daemon's pause switch ("true" or
"false"; unset reads as paused): the value Dagster's UI shows and its GraphQL mutation
`setAutoMaterializePaused` writes. Dagster 1.13 has no public Python call for it, so it is
read and written through the instance's public cursor storage."""


def automation_running(instance: DagsterInstance) -> bool:
    """Whether the automation sensor runs on `instance`: its stored state, else its default
    (running; an instance without sensor states, ephemeral, counts as running)."""
    if instance.schedule_storage is None:
        return True
    states = [
        s
        for s in instance.all_instigator_state()
        if s.instigator_type.value == "SENSOR" and s.name == AUTOMATION_SENSOR
    ]
    return not states or states[0].status.value != "STOPPED"


def mirror_automation_switch(instance: DagsterInstance) -> bool:
    """Set the instance's global auto-materialize switch to what the automation sensor
    does, and return it (on: the sensor runs). Dagster's job pages show that switch
    ("Auto-materialize off/on"), which only the pre-sensor daemon reads: left at its
    default, it says "off" while the automation sensor runs. An instance without sensor
    states (ephemeral) is left as it is."""
    if instance.schedule_storage is None:  # an ephemeral instance: no sensor states
        return True
    running = automation_running(instance)
    cursors = instance.daemon_cursor_storage
    paused = cursors.get_cursor_values({PAUSED_KEY}).get(PAUSED_KEY) != "false"
    if paused == running:
        cursors.set_cursor_values({PAUSED_KEY: "false" if running else "true"})
    return running
