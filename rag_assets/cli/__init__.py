"""The `trecho` command: materialize the pipeline, search the index, run the eval.

The subcommands live by what they do (`writing`: materialize, backfill, drop-model;
`reading`: search, eval, status; `serving`: serve, mcp, ui); `common` holds what they
share; `parser` the flags; `evaluate` and `status` what `trecho eval` and `trecho
status` compute (no Dagster: the stores and the core only).
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

from rag_assets.cli import reading, serving, writing
from rag_assets.cli.common import quiet_stdout
from rag_assets.cli.parser import Handler, build_parser
from rag_assets.core.errors import UserError
from rag_assets.settings import Settings


def _handlers(*modules: ModuleType) -> dict[str, Handler]:
    """The `cmd_<name>` functions of `modules`, by subcommand name."""
    return {
        name.removeprefix("cmd_"): func
        for module in modules
        for name, func in vars(module).items()
        if name.startswith("cmd_")
    }


HANDLERS: dict[str, Handler] = _handlers(writing, reading, serving)
"""Every subcommand's handler, by name (`drop-model` as `drop_model`)."""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `trecho` console script."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    args = build_parser(HANDLERS).parse_args(argv)
    try:
        args.settings = Settings.from_env()  # every setting read once, here
        code = int(args.func(args))
        sys.stdout.flush()  # here, where a reader that left is caught, not at exit
        return code
    except BrokenPipeError:  # the reader left (`trecho search ... | head -1`): stop quietly
        quiet_stdout()
        return 1
    except UserError as exc:  # bad input or settings: one line, no traceback (a bug: traceback)
        if getattr(args, "settings", None) is not None and args.settings.debug:
            raise
        message = " ".join(str(exc).split())
        print(f"trecho {args.command}: {message}", file=sys.stderr)
        return 2
