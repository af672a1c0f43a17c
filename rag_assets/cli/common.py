"""What every `trecho` subcommand shares: the lake, model, database and pipeline its flags
name (read through the settings), and how it writes lines."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rag_assets.core.lake import Lake, LakeError


def lake_of(args: argparse.Namespace) -> Lake:
    """The lake of --lake, else TRECHO_LAKE (`Settings.lake`); it must exist."""
    lake = Lake(args.lake or args.settings.lake)
    if not lake.exists():
        raise LakeError(f"{lake.root}: no such lake folder (set --lake or TRECHO_LAKE)")
    return lake


def embedder_of(args: argparse.Namespace) -> Any:
    """The model of --model/--*-prefix, else the configured one (`Settings.embedder`):
    what `drop-model` names; the other commands work with the lake's model
    (`Settings.lake_embedder`)."""
    return args.settings.embedder(args.model, args.query_prefix, args.passage_prefix)


def db_of(args: argparse.Namespace, lake: Lake) -> str:
    """The LanceDB URI: --db, else `<lake>/lancedb`."""
    return str(args.db or lake.lancedb_dir)


def serving_index_of(args: argparse.Namespace, lake: Lake) -> Any:
    """The index search answers from (`Settings.serving_index`)."""
    model = (args.model, args.query_prefix, args.passage_prefix)
    return args.settings.serving_index(db_of(args, lake), *model)


def switch_named(args: argparse.Namespace, lake: Lake) -> str | None:
    """When the command names a model (--model, --*-prefix), make it the lake's
    (`core.pipeline.switch_model`: what the code location, its sensor and `trecho status`
    follow) and say what that did; None when none is named (the lake's model is used)."""
    model = (args.model, args.query_prefix, args.passage_prefix)
    if not args.model and args.query_prefix is None and args.passage_prefix is None:
        return None
    from rag_assets.core.pipeline import switch_model

    chosen = args.settings.embedder(*model)
    db = str(getattr(args, "db", None) or lake.lancedb_dir)
    return switch_model(lake, db, chosen, args.settings.keep_history)


def pipeline_of(args: argparse.Namespace, lake: Lake) -> tuple[Any, Any]:
    """The definitions of this command's lake, model and database (their resources built
    from the settings) and the persistent Dagster instance: DAGSTER_HOME, else
    `<lake>/.dagster` (opened first: the definitions' load finds its `dagster.yaml`)."""
    from rag_assets.orchestration.materialize import open_instance

    instance = open_instance(Path(args.settings.dagster_home or lake.dagster_home))
    from rag_assets.definitions import build_definitions

    if (switched := switch_named(args, lake)) is not None:
        say(switched)
    model = (args.model, args.query_prefix, args.passage_prefix)
    defs = build_definitions(str(lake.root), *model, args.db or "", settings=args.settings)
    return defs, instance


def say(*args: Any, **kwargs: Any) -> None:
    """Progress lines (`orchestration.materialize.Say`), shown at once. A reader that left
    (`trecho materialize | head -1`) ends the lines, never the runs: stdout goes to the
    null device and the command carries on to its end."""
    try:
        print(*args, **kwargs, flush=True)
    except BrokenPipeError:
        quiet_stdout()


def err(*args: Any, **kwargs: Any) -> None:
    """A line for stderr: what is not the command's output (the stderr of the moment,
    not the one at import: a caller that redirects it sees the line)."""
    print(*args, file=sys.stderr, **kwargs)


def logs_line(log: Path) -> str:
    """The summary's line naming the file Dagster's logs went to; a command that ran no
    job (nothing to do) wrote none, and says so instead of naming a file not there."""
    if log.exists():
        return f"Full Dagster logs: {log}"
    return "Full Dagster logs: none (no run started: nothing to do)"


def failed(names: Iterable[str]) -> int:
    """The exit code of a command that ran jobs: 1, with their names, if any failed."""
    if names := list(names):
        err(f"Failed: {', '.join(names)}")
    return 1 if names else 0


def quiet_stdout() -> None:
    """Point stdout at the null device: the reader of the pipe is gone, and what is left
    in the buffer must not fail again when the interpreter flushes it at exit (the
    recipe of Python's `signal` docs: exit code 1, no traceback)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (captured in tests)
        pass
    finally:
        os.close(devnull)
