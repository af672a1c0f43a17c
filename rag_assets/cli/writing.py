"""`trecho materialize`, `backfill` and `drop-model`: the commands that write the index."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from rag_assets.cli.common import (
    db_of,
    embedder_of,
    err,
    failed,
    lake_of,
    logs_line,
    pipeline_of,
    say,
)
from rag_assets.cli.hints import deployment_ui_hint, search_hint, ui_hint
from rag_assets.core.lake import LakeError


def cmd_materialize(args: argparse.Namespace) -> int:
    """Carry out the reconcile plan in-process (every live version with --force), then
    the eval report: one line per version (ok, skipped and why, failed and why, or
    removed and why), a summary, and Dagster's full logs in a file."""
    from rag_assets.orchestration.materialize import hold_lake, materialize

    lake = lake_of(args)
    config = {"offsets": args.eval_offsets} if args.eval_offsets else {}
    config = None if args.skip_eval else config
    with hold_lake(lake, "trecho materialize", err):  # one command's runs at a time
        defs, instance = pipeline_of(args, lake)
        done = materialize(defs, instance, force=args.force, eval_config=config, say=say)
    print()
    others = done.live - done.indexed - done.live_failed
    pending = f", {others} not indexed" if others > 0 else ""
    kept = done.kept_failed  # indexed, from the file the failed one replaced: counted once
    kept_note = f"; {kept} of them from the file replaced, the new one failed" if kept else ""
    print(
        f"{len(done.runs.ok)} indexed, {done.skipped} skipped, {len(done.runs.failed)} failed; "
        f"{done.live} live versions ({done.indexed} indexed, {done.live_failed} failed"
        f"{pending}{kept_note}) in {done.db}"
    )
    print(logs_line(done.log))
    if done.report:
        print(f"Report: {done.report}")
    home = Path(instance.root_directory)
    ui = deployment_ui_hint(instance) or ui_hint(lake.root, home, args.model)
    print(f"Open the Dagster UI: {ui}")
    print(f"Search: {search_hint(lake.root, args.model)}")
    return failed(done.failed)


def cmd_backfill(args: argparse.Namespace) -> int:
    """Fill the configured model's table for every live version (after a model change):
    what runs is the reconcile plan's, as for `materialize` (`orchestration.materialize`).
    Search switches to the new model's table when the last version is in."""
    from rag_assets.orchestration.backfill import backfill
    from rag_assets.orchestration.materialize import hold_lake

    lake = lake_of(args)
    logging.getLogger("dagster").setLevel(logging.WARNING)
    with hold_lake(lake, "trecho backfill", err):
        defs, instance = pipeline_of(args, lake)
        done = backfill(defs, instance, say=say)
    progress = done.progress
    missing = f"; still missing in {progress.configured}: {progress.missing}"
    print(f"search uses {progress.active}{'' if progress.complete else missing}")
    print(logs_line(done.log))
    return failed(done.runs.failed)


def cmd_drop_model(args: argparse.Namespace) -> int:
    """Drop the table, embedding cache and backfilled chunks of the model named by
    --model (never the one search uses)."""
    lake = lake_of(args)
    if not args.model:
        raise LakeError("name the model whose table to drop with --model")
    from rag_assets.core.pipeline import drop_model

    dropped = drop_model(db_of(args, lake), embedder_of(args), lake)
    print(f"dropped {', '.join(dropped)}" if dropped else "nothing to drop")
    return 0
