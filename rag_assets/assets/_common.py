"""What every stage asset shares: turning input problems into a clear, per-version failure,
and one writer per version at a time."""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from dagster import AssetExecutionContext, AssetKey, Failure

from rag_assets.core.errors import UserError
from rag_assets.core.lake import Lake, sha256_file, split_key, this_process, waited_lock
from rag_assets.core.lifecycle import note_failed
from rag_assets.core.stages import READS
from rag_assets.orchestration.checks import blocking_failure

T = TypeVar("T")

GROUP = "trecho"
"""Every asset's group: one group, so the UI's lineage opens on the whole chain from
raw_pdf to eval_report (several groups open collapsed, the chain a click away)."""


def reads(stage: str) -> list[AssetKey]:
    """A stage asset's `deps`: the stages it reads (`core.stages.READS`), so the lineage
    the UI draws is the data's."""
    return [AssetKey(s) for s in READS[stage]]


def failing_clearly(key: str, action: Callable[[], T]) -> T:
    """Run a core call; a user error (bad input, bad setting) fails only this version,
    with the file or setting and the reason."""
    try:
        return action()
    except UserError as exc:
        raise clear_failure(key, exc) from exc


def clear_failure(key: str, exc: UserError) -> Failure:
    """The failure of one version for a user error: the version, the file or setting and
    the reason, no retry."""
    return Failure(
        description=f"{key}: {exc}",
        metadata={"partition": key, "reason": str(exc)},
        allow_retries=False,
    )


def one_writer(stage: Callable[..., T]) -> Callable[..., T]:
    """A stage's body run under its version's lock (`<lake>/.locks`, one per version): a
    step of another run of the same version (the sensor's, the automation's, one started
    by hand, `trecho materialize`) waits, saying so in its log, instead of rewriting the
    files this one reads (`rag_assets/orchestration/concurrency.py`). A failure is
    recorded in the lake (`note_step_failure`): an error, or a failed blocking check of
    the version (`orchestration/checks.blocking_failure`)."""

    @functools.wraps(stage)
    def locked(context: AssetExecutionContext, *args: Any, **kwargs: Any) -> T:
        key = context.partition_key
        split_key(key)  # a partition key names a lock file below: checked first
        lake = kwargs["lake"].lake
        holder = this_process(f"run {context.run_id[:8]} of {key}")
        with waited_lock(lake.version_lock(key), holder, context.log.info):
            try:
                result = stage(context, *args, **kwargs)
            except Exception as exc:
                note_step_failure(lake, key, exc)
                raise
            blocked = blocking_failure(result)
            if blocked is not None:  # Dagster fails the step after this returns
                note_reason(lake, key, blocked)
            return result

    return locked


def note_step_failure(lake: Lake, key: str, exc: Exception) -> None:
    """Record in the lake why a step of `key` failed, for `trecho status` on every host:
    here, in the step, so a run the sensor, the UI or a backfill started records it as a
    `trecho` command's run does. The reason is the user error's (`clear_failure`), else
    the error's first line."""
    if isinstance(exc, Failure) and "reason" in exc.metadata:
        reason = str(exc.metadata["reason"].value)
    else:
        lines = str(exc).strip().splitlines()
        reason = lines[0] if lines else type(exc).__name__
    note_reason(lake, key, reason)


def note_reason(lake: Lake, key: str, reason: str) -> None:
    """Record in the lake that the last run of `key`'s file failed, and why (nothing when
    the file is gone or the lake unwritable: the run's log still says why)."""
    pdf = lake.raw_paths(key)[0]
    try:
        sha = sha256_file(pdf)
        note_failed(lake, {key: reason}, {key: sha})
    except OSError:  # no file to tie the failure to, or the lake unwritable: the run
        pass  # still fails, with its reason in the run's log
