"""The `trecho` command: materialize the pipeline, search the index, run the eval."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import sys
import textwrap
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from rag_assets.core.errors import UserError
from rag_assets.core.lake.layout import Lake, LakeError
from rag_assets.settings import Settings


def _lake(args: argparse.Namespace) -> Lake:
    """The lake of --lake, else TRECHO_LAKE (`Settings.lake`); it must exist."""
    lake = Lake(args.lake or args.settings.lake)
    if not lake.root.is_dir():
        raise LakeError(f"{lake.root}: no such lake folder (set --lake or TRECHO_LAKE)")
    return lake


def _embedder(args: argparse.Namespace) -> Any:
    """The model of --model/--*-prefix, else the configured one (`Settings.embedder`)."""
    return args.settings.embedder(args.model, args.query_prefix, args.passage_prefix)


def _db(args: argparse.Namespace, lake: Lake) -> str:
    """The LanceDB URI: --db, else `<lake>/lancedb`."""
    return str(args.db or lake.lancedb_dir)


def _serving_index(args: argparse.Namespace, lake: Lake) -> Any:
    """The index search answers from (`Settings.serving_index`)."""
    model = (args.model, args.query_prefix, args.passage_prefix)
    return args.settings.serving_index(_db(args, lake), *model)


def _pipeline(args: argparse.Namespace, lake: Lake) -> tuple[Any, Any]:
    """The definitions of this command's lake, model and database (their resources built
    from the settings) and the persistent Dagster instance: DAGSTER_HOME, else
    `<lake>/.dagster`."""
    from rag_assets.definitions import build_definitions
    from rag_assets.orchestration.materialize import open_instance

    model = (args.model, args.query_prefix, args.passage_prefix)
    defs = build_definitions(str(lake.root), *model, args.db or "", settings=args.settings)
    return defs, open_instance(Path(args.settings.dagster_home or lake.dagster_home))


_say = partial(print, flush=True)
"""Progress lines (`orchestration.materialize.Say`), shown at once."""
_err = partial(print, file=sys.stderr)
"""A line for stderr: what is not the command's output."""


def cmd_materialize(args: argparse.Namespace) -> int:
    """Carry out the reconcile plan in-process (every live version with --force), then
    the eval report: one line per version (ok, skipped and why, failed and why, or
    removed and why), a summary, and Dagster's full logs in a file."""
    from rag_assets.orchestration.materialize import materialize

    lake = _lake(args)
    defs, instance = _pipeline(args, lake)
    config = {"offsets": args.eval_offsets} if args.eval_offsets else {}
    config = None if args.skip_eval else config
    done = materialize(defs, instance, force=args.force, eval_config=config, say=_say)
    print()
    print(
        f"{len(done.runs.ok)} indexed, {done.skipped} skipped, {len(done.runs.failed)} failed; "
        f"{done.live} live versions in {done.db}"
    )
    print(f"Full Dagster logs: {done.log}")
    if done.report:
        print(f"Report: {done.report}")
    print(
        f"Open the Dagster UI: DAGSTER_HOME={instance.root_directory} "
        "dagster dev -w workspace.yaml   (then http://127.0.0.1:3000)"
    )
    print('Search: trecho search "qual o limite de vibração?" -k 3')
    return _failed(done.failed)


def _failed(names: Iterable[str]) -> int:
    """The exit code of a command that ran jobs: 1, with their names, if any failed."""
    if names := list(names):
        _err(f"Failed: {', '.join(names)}")
    return 1 if names else 0


def cmd_backfill(args: argparse.Namespace) -> int:
    """Fill the configured model's table for every live version (after a model change):
    what runs is the reconcile plan's, as for `materialize` (`orchestration.materialize`).
    Search switches to the new model's table when the last version is in."""
    from rag_assets.orchestration.materialize import backfill

    lake = _lake(args)
    logging.getLogger("dagster").setLevel(logging.WARNING)
    defs, instance = _pipeline(args, lake)
    done = backfill(defs, instance, say=_say)
    progress = done.progress
    missing = f"; still missing in {progress.configured}: {progress.missing}"
    print(f"search uses {progress.active}{'' if progress.complete else missing}")
    print(f"Full Dagster logs: {done.log}")
    return _failed(done.runs.failed)


def cmd_search(args: argparse.Namespace) -> int:
    """Print the best chunks for a question."""
    lake = _lake(args)
    index = _serving_index(args, lake)
    if not index.exists():
        raise LakeError(f"{index.uri}: no index table {index.table_name}; run `trecho materialize`")
    from rag_assets.core.index.hits import hit_rows

    filters = {"doc_id": args.doc, "version": args.version, "as_of": args.as_of}
    hits = index.search(args.query, k=args.k, mode=args.mode, exact=args.exact, **filters)
    rows = hit_rows(lake, hits, args.expand)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2, default=str))
        return 0
    if not hits:
        print("no results")
    for rank, (hit, row) in enumerate(zip(hits, rows, strict=True), start=1):
        parent = row.get("parent_text")
        end = f"–{hit.page_end}" if hit.page_end != hit.page_start else ""
        pages = f"p. {hit.page_start}{end}"
        print(
            f"{rank}. {hit.title} | {hit.path or '(início)'} | {hit.version} | {pages} | "
            f"score {hit.score:.4f} ({'+'.join(hit.retrievers)})"
        )
        print(textwrap.indent(hit.text.strip(), "   "))
        if parent:
            print(f"   -- parent unit ({hit.parent_id}):")
            print(textwrap.indent(parent.strip(), "   | "))
        print()
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Print every strategy's metrics side by side (with --models: every model's)."""
    from rag_assets.core.eval.report import (
        markdown_table,
        models_table,
        render_markdown,
        write_report,
    )
    from rag_assets.core.eval.runner import question_files
    from rag_assets.orchestration.evaluate import evaluate, evaluate_models

    lake = _lake(args)
    files = question_files(lake, [Path(p) for p in args.questions] if args.questions else None)
    sources = [f.name for f in files]
    asked = (args.strategies, args.offsets, args.mode)
    progress = (lambda _: None) if args.json else (lambda s: _err(f"evaluating {s}"))
    if args.models:  # every model x strategy in one run, side by side
        models = args.models.split(",")
        results = evaluate_models(args.settings, lake, models, files, *asked, progress)
        for model, result in results.items() if args.write else ():
            folder = write_report(result, lake.reports_dir, sources)
            _err(f"{model}: report written to {folder / 'report.html'}")
        if args.json:
            print(json.dumps({"models": {m: r.to_json() for m, r in results.items()}}, indent=2))
            return 0
        print(models_table(results))
        for model, result in results.items() if args.verbose else ():
            print(f"\n## {model}\n\n{markdown_table(result)}")
        return 0
    index = _serving_index(args, lake)  # the model search uses, unless --model is given
    result = evaluate(args.settings, lake, index, files, *asked, progress)
    if args.write:
        folder = write_report(result, lake.reports_dir, sources)
        _err(f"report written to {folder / 'report.html'}")
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    verbose = args.verbose
    print(render_markdown(result, "trecho eval", sources) if verbose else markdown_table(result))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """What is live, what search serves, and anything pending, from the stores themselves
    (not from Dagster's event log, which keeps a removed version's old events)."""
    from rag_assets.orchestration.status import lake_status

    lake = _lake(args)
    status = lake_status(lake, _db(args, lake), _embedder(args), args.settings)
    active = status.active
    print(f"lake: {status.lake}")
    print(
        f"search uses: {status.table} ({status.rows} rows"
        + (f", model {active.model}, since {active.switched_at})" if active else ")")
    )
    if status.indexes is not None:
        print(f"indexes: {status.indexes}")
    if status.backfill is not None:
        progress = status.backfill
        state = "complete" if progress.complete else f"{len(progress.missing)} versions missing"
        print(
            f"configured model: {status.configured} -> backfill {state} "
            f"({len(progress.done)} done); run `trecho backfill`"
        )
    print(f"model tables: {', '.join(status.tables) or '(none)'}")
    for v in status.live:
        print(f"  live     {v.key:32} {v.sha256[:12]}  {v.rows:5} chunks  {v.state}")
    for d in status.not_live:
        print(f"  not live {d.key:32} {d.reason:30}  {d.state}")
    for problem in status.problems:
        print(f"  problem  {problem}")
    return 0


def _engine(args: argparse.Namespace) -> Any:
    """The search engine of `serve` and `mcp` (`serve.boot.start_engine`), ready."""
    from rag_assets.serve import Limits
    from rag_assets.serve.boot import start_engine

    lake = _lake(args)
    limits = Limits(args.max_k, args.max_query_chars, args.max_body)
    given = ("model", "query_prefix", "passage_prefix", "threads", "query_cache")
    options = {name: getattr(args, name) for name in given}
    engine = start_engine(args.settings, lake, _db(args, lake), limits, **options)
    index = engine.index()
    rows = index.index_stats().rows if index.exists() else 0
    _err(f"trecho: {lake.root}: {index.table_name} ({rows} rows) ready")
    return engine


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the index over HTTP (JSON API, OpenAPI docs, MCP at /mcp) until interrupted."""
    from rag_assets.serve import run_http
    from rag_assets.serve.boot import check_exposure

    token = args.settings.serve_token or None
    check_exposure(args.host, token)
    engine = _engine(args)
    required = ", bearer token required" if token else ""
    _err(f"trecho: serving http://{args.host}:{args.port} (docs /docs, MCP /mcp{required})")
    run_http(engine, args.host, args.port, token)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdin/stdout (an agent launches this command)."""
    from rag_assets.serve import run_stdio

    run_stdio(_engine(args))
    return 0


def cmd_drop_model(args: argparse.Namespace) -> int:
    """Drop the table and embedding cache of the model named by --model (never the one
    search uses)."""
    lake = _lake(args)
    if not args.model:
        raise LakeError("name the model whose table to drop with --model")
    from rag_assets.core.index.models import drop_model

    dropped = drop_model(_db(args, lake), _embedder(args))
    print(f"dropped {', '.join(dropped)}" if dropped else "nothing to drop")
    return 0


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (`trecho search: argument -k: ...`), exit 2."""

    def error(self, message: str) -> NoReturn:
        """Print the problem on one line and exit with the usage-error code 2."""
        self.exit(2, f"{self.prog}: {message} (--help for usage)\n")


def positive_int(text: str) -> int:
    """A whole number of 1 or more (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def query_text(text: str) -> str:
    """A query with at least one word character (argparse type)."""
    if not any(ch.isalnum() for ch in text):
        raise argparse.ArgumentTypeError(f"{text!r} has no word to search for")
    return text


def iso_date(text: str) -> dt.date:
    """A YYYY-MM-DD date (argparse type)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = Parser(prog="trecho", description=__doc__)
    common = Parser(add_help=False)
    common.add_argument("--lake", help="data lake root (default: $TRECHO_LAKE or data_lake/)")
    common.add_argument("--model", help="embedding model name or path ($TRECHO_MODEL)")
    common.add_argument("--query-prefix", help="e.g. 'query: ' for e5 models")
    common.add_argument("--passage-prefix", help="e.g. 'passage: ' for e5 models")
    common.add_argument("--db", help="LanceDB URI (default: <lake>/lancedb)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("materialize", parents=[common], help="index every live version + eval")
    p.add_argument("--skip-eval", action="store_true", help="do not write the eval report")
    offsets = "start offsets of the eval's size-based strategies (default: the asset's, 4)"
    p.add_argument("--eval-offsets", type=positive_int, help=offsets)
    p.add_argument("--force", action="store_true", help="re-run versions already up to date")
    p.set_defaults(func=cmd_materialize)

    p = sub.add_parser("search", parents=[common], help="search the index")
    p.add_argument("query", type=query_text)
    p.add_argument("-k", type=positive_int, default=5, help="hits to return (1 or more)")
    p.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid")
    p.add_argument("--doc", help="only this doc_id")
    p.add_argument("--version", help="only this version")
    p.add_argument("--as-of", type=iso_date, help="validity date YYYY-MM-DD (default: today)")
    p.add_argument("--json", action="store_true", help="print a JSON array of hits")
    p.add_argument("--exact", action="store_true", help="scan every vector (skip the ANN index)")
    p.add_argument("--expand", action="store_true", help="also give each hit's parent unit")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", parents=[common], help="compare strategies on question files")
    p.add_argument("--questions", nargs="+", help="JSONL files (default: <lake>/eval/*.jsonl)")
    p.add_argument(
        "--strategies",
        nargs="+",
        help="strategies to compare with the default: names (see docs/eval.md), 'all' (the full "
        "list) or 'standard' (a quick set, the default)",
    )
    p.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid")
    p.add_argument("--offsets", type=positive_int, default=4, help="start offsets (size-based)")
    p.add_argument(
        "--models",
        help="compare models side by side, comma-separated (e.g. "
        "all-MiniLM-L6-v2,multilingual-e5-small): each indexes the default policy in a "
        "scratch folder",
    )
    p.add_argument("--json", action="store_true", help='print {"strategies": {...}} as JSON')
    p.add_argument("--write", action="store_true", help="also write reports/<timestamp>/")
    p.add_argument("-v", "--verbose", action="store_true", help="full report with tag table")
    p.set_defaults(func=cmd_eval)

    for name, func, text in (
        ("backfill", cmd_backfill, "fill the configured model's table (model change)"),
        ("drop-model", cmd_drop_model, "drop --model's table and cache (not the active)"),
        ("status", cmd_status, "what is live and indexed"),
    ):
        sub.add_parser(name, parents=[common], help=text).set_defaults(func=func)

    limits = argparse.ArgumentParser(add_help=False)
    limits.add_argument("--max-k", type=int, default=50, help="most hits a request may ask for")
    limits.add_argument("--max-query-chars", type=int, default=2000, help="longest query")
    limits.add_argument("--max-body", type=int, default=65536, help="largest request, in bytes")
    limits.add_argument("--threads", type=int, default=1, help="threads embedding one query")
    cache = "remember the vectors of this many recent queries (0: none)"
    limits.add_argument("--query-cache", type=int, default=1024, help=cache)
    serve = "HTTP JSON API + MCP for RAG apps and agents"
    p = sub.add_parser("serve", parents=[common, limits], help=serve)
    p.add_argument("--host", default="127.0.0.1", help="listen address (default loopback)")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", parents=[common, limits], help="MCP server on stdio, for agents")
    p.set_defaults(func=cmd_mcp)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `trecho` console script."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    args = build_parser().parse_args(argv)
    try:
        args.settings = Settings.from_env()  # every setting read once, here
        return int(args.func(args))
    except UserError as exc:  # bad input or settings: one line, no traceback (a bug: traceback)
        if getattr(args, "settings", None) is not None and args.settings.debug:
            raise
        message = " ".join(str(exc).split())
        print(f"trecho {args.command}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
