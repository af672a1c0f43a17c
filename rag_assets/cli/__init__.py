"""The `trecho` command: materialize the pipeline, search the index, run the eval."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rag_assets.cli.hints import search_hint, ui_hint
from rag_assets.cli.parser import Handler, build_parser
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
    `<lake>/.dagster` (opened first: the definitions' load finds its `dagster.yaml`)."""
    from rag_assets.orchestration.materialize import open_instance

    instance = open_instance(Path(args.settings.dagster_home or lake.dagster_home))
    from rag_assets.definitions import build_definitions

    model = (args.model, args.query_prefix, args.passage_prefix)
    defs = build_definitions(str(lake.root), *model, args.db or "", settings=args.settings)
    return defs, instance


def _say(*args: Any, **kwargs: Any) -> None:
    """Progress lines (`orchestration.materialize.Say`), shown at once. A reader that left
    (`trecho materialize | head -1`) ends the lines, never the runs: stdout goes to the
    null device and the command carries on to its end."""
    try:
        print(*args, **kwargs, flush=True)
    except BrokenPipeError:
        _quiet_stdout()


def _err(*args: Any, **kwargs: Any) -> None:
    """A line for stderr: what is not the command's output (the stderr of the moment,
    not the one at import: a caller that redirects it sees the line)."""
    print(*args, file=sys.stderr, **kwargs)


def cmd_materialize(args: argparse.Namespace) -> int:
    """Carry out the reconcile plan in-process (every live version with --force), then
    the eval report: one line per version (ok, skipped and why, failed and why, or
    removed and why), a summary, and Dagster's full logs in a file."""
    from rag_assets.orchestration.materialize import hold_lake, materialize

    lake = _lake(args)
    config = {"offsets": args.eval_offsets} if args.eval_offsets else {}
    config = None if args.skip_eval else config
    with hold_lake(lake, "trecho materialize", _err):  # one command's runs at a time
        defs, instance = _pipeline(args, lake)
        done = materialize(defs, instance, force=args.force, eval_config=config, say=_say)
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
    print(f"Open the Dagster UI: {ui_hint(lake.root, home, args.model)}")
    print(f"Search: {search_hint(lake.root, args.model)}")
    return _failed(done.failed)


def logs_line(log: Path) -> str:
    """The summary's line naming the file Dagster's logs went to; a command that ran no
    job (nothing to do) wrote none, and says so instead of naming a file not there."""
    if log.exists():
        return f"Full Dagster logs: {log}"
    return "Full Dagster logs: none (no run started: nothing to do)"


def _failed(names: Iterable[str]) -> int:
    """The exit code of a command that ran jobs: 1, with their names, if any failed."""
    if names := list(names):
        _err(f"Failed: {', '.join(names)}")
    return 1 if names else 0


def cmd_backfill(args: argparse.Namespace) -> int:
    """Fill the configured model's table for every live version (after a model change):
    what runs is the reconcile plan's, as for `materialize` (`orchestration.materialize`).
    Search switches to the new model's table when the last version is in."""
    from rag_assets.orchestration.materialize import backfill, hold_lake

    lake = _lake(args)
    logging.getLogger("dagster").setLevel(logging.WARNING)
    with hold_lake(lake, "trecho backfill", _err):
        defs, instance = _pipeline(args, lake)
        done = backfill(defs, instance, say=_say)
    progress = done.progress
    missing = f"; still missing in {progress.configured}: {progress.missing}"
    print(f"search uses {progress.active}{'' if progress.complete else missing}")
    print(logs_line(done.log))
    return _failed(done.runs.failed)


def cmd_search(args: argparse.Namespace) -> int:
    """Print the best chunks for a question. The flags become a `SearchRequest` by
    `search_request`, as `POST /search`'s body does: what the API refuses, this refuses
    with the same words."""
    from rag_assets.core.index import hit_rows, no_results
    from rag_assets.core.lake.layout import split_key
    from rag_assets.core.request import check_in_index, search_request

    given = {
        "query": args.query,
        "k": args.k,
        "mode": args.mode,
        "documents": [args.doc] if args.doc is not None else None,
        "versions": [args.version] if args.version is not None else None,
        "as_of": args.as_of,
        "expand": args.expand,
        "min_score": args.min_score,
        "model": args.model,
    }
    request = search_request({name: value for name, value in given.items() if value is not None})
    lake = _lake(args)
    index = _serving_index(args, lake)
    if not index.exists():
        raise LakeError(f"{index.uri}: no index table {index.table_name}; run `trecho materialize`")
    filtered = request.documents is not None or request.versions is not None
    held = [split_key(key) for key in index.partition_counts()] if filtered else []
    floor = index.min_score_for(request.mode, request.min_score)
    request = check_in_index(request, held, index.embedder, floor)
    hits = index.search(request, exact=args.exact)
    if request.mode != "fts":  # the query path ran: what `trecho status` says it runs on
        index.embedder.record_runtime(lake.local_cache_dir, "queries")
    rows = hit_rows(lake, hits, request.expand)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2, default=str))
        return 0
    if not hits:  # say why: a filter, a date, or the score
        print(no_results(index, request.min_score, args.doc, args.version, request.as_of))
    for rank, (hit, row) in enumerate(zip(hits, rows, strict=True), start=1):
        parent = row.get("parent_text")
        end = f"–{hit.page_end}" if hit.page_end != hit.page_start else ""
        pages = f"p. {hit.page_start}{end}"
        print(
            f"{rank}. {hit.title} | {hit.path or '(início)'} | {hit.version} | {pages} | "
            f"score {hit.score:.4f} ({'+'.join(hit.retrievers)}){_similarity(hit)}"
        )
        print(textwrap.indent(hit.text.strip(), "   "))
        if parent:
            print(f"   -- parent unit ({hit.parent_id}):")
            print(textwrap.indent(parent.strip(), "   | "))
        print()
    return 0


def _similarity(hit: Any) -> str:
    """A hit's real similarities for the search listing: `, cosine 0.8512, bm25 7.12`."""
    pairs = (("cosine", hit.cosine), ("bm25", hit.bm25))
    return "".join(f", {name} {value:.4f}" for name, value in pairs if value is not None)


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
    result = evaluate(args.settings, lake, index, files, *asked, progress, not args.fresh)
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
    from rag_assets.core.embedding.runtime import NOT_MEASURED
    from rag_assets.orchestration.status import lake_status

    lake = _lake(args)
    embedder = _embedder(args)
    status = lake_status(lake, _db(args, lake), embedder, args.settings, args.check_runtime)
    active = status.active
    print(f"lake: {status.lake}")
    fill = "`trecho materialize`, or the sensor of `trecho ui`"
    if status.indexes is None:  # no table: nothing to count rows of
        pending = sum(1 for v in status.live if not v.rows)
        print(
            f"search uses: nothing yet (no table {status.table}); {pending} live versions "
            f"to index: {fill} indexes them"
        )
    else:
        print(
            f"search uses: {status.table} ({status.rows} rows"
            + (f", model {active.model}, since {active.switched_at})" if active else ")")
        )
        print(f"indexes: {status.indexes}")
    if status.backfill is not None:
        progress = status.backfill
        state = "complete" if progress.complete else f"{len(progress.missing)} versions missing"
        print(
            f"configured model: {status.configured} -> backfill {state} "
            f"({len(progress.done)} done); `trecho backfill`, or the sensor of `trecho ui`, "
            "fills it"
        )
    print(f"model tables: {', '.join(status.tables) or '(none)'}")
    paths = status.embedding
    said = []
    for role in ("passages", "queries"):
        at = "checked now" if args.check_runtime else paths.get(f"{role}_at")
        said.append(f"{role} on {paths[role]}" + (f" ({at})" if at else ""))
    print(f"embedding: {', '.join(said)}")
    if NOT_MEASURED in (paths["passages"], paths["queries"]):
        print("  no run recorded it yet: `trecho status --check-runtime` measures it now")
    for role in ("passages", "queries"):
        if paths[f"{role}_fallback"]:
            print(f"  {role} fell back: {paths[f'{role}_fallback']}")
    for v in status.live:
        print(f"  live     {v.key:32} {v.sha256[:12]}  {v.rows:5} chunks  {v.state}")
    for d in status.not_live:
        print(f"  not live {d.key:32} {d.reason:30}  {d.state}")
    for problem in status.problems:
        print(f"  problem  {problem}")
    return 0


def _engine(args: argparse.Namespace) -> Any:
    """The search engine of `serve` and `mcp` (`serve.boot.start_engine`): checked now,
    loading in the background while the server already answers."""
    from rag_assets.serve import Limits
    from rag_assets.serve.boot import start_engine

    lake = _lake(args)
    limits = Limits(args.max_k, args.max_query_chars, args.max_body)
    given = ("model", "query_prefix", "passage_prefix", "threads", "query_cache")
    options = {name: getattr(args, name) for name in given}
    return start_engine(
        args.settings, lake, _db(args, lake), limits, **options, say=lambda s: _err(f"trecho: {s}")
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the index over HTTP (JSON API, OpenAPI docs, MCP at /mcp) until interrupted."""
    from rag_assets.serve import ConnectionLimits, run_http
    from rag_assets.serve.boot import check_exposure

    token = args.settings.serve_token or None
    check_exposure(args.host, token)
    connections = ConnectionLimits(args.max_connections, args.request_timeout)
    try:
        connections.check()
    except ValueError as exc:
        raise LakeError(str(exc)) from None
    engine = _engine(args)
    required = ", bearer token required" if token else ""
    _err(f"trecho: serving http://{args.host}:{args.port} (docs /docs, MCP /mcp{required})")
    run_http(engine, args.host, args.port, token, connections, args.allow_host or ())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdin/stdout (an agent launches this command)."""
    from rag_assets.serve import run_stdio

    run_stdio(_engine(args))
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    """Start the Dagster UI on the lake's instance (DAGSTER_HOME, else `<lake>/.dagster`)
    with its `dagster.yaml` written first; runs until Ctrl-C or SIGTERM."""
    from rag_assets.cli.ui import run_ui

    lake = _lake(args)
    home = Path(args.settings.dagster_home or lake.dagster_home)
    given = {
        "TRECHO_MODEL": args.model,
        "TRECHO_QUERY_PREFIX": args.query_prefix,
        "TRECHO_PASSAGE_PREFIX": args.passage_prefix,
    }
    model = {name: value for name, value in given.items() if value is not None}
    return run_ui(str(lake.root), home, model, args.host, args.port, _err)


def cmd_drop_model(args: argparse.Namespace) -> int:
    """Drop the table, embedding cache and backfilled chunks of the model named by
    --model (never the one search uses)."""
    lake = _lake(args)
    if not args.model:
        raise LakeError("name the model whose table to drop with --model")
    from rag_assets.core.index import drop_model

    dropped = drop_model(_db(args, lake), _embedder(args), lake)
    print(f"dropped {', '.join(dropped)}" if dropped else "nothing to drop")
    return 0


HANDLERS: dict[str, Handler] = {
    name.removeprefix("cmd_"): func for name, func in globals().items() if name.startswith("cmd_")
}
"""Every subcommand's handler, by name (`drop-model` as `drop_model`)."""


def _quiet_stdout() -> None:
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
        _quiet_stdout()
        return 1
    except UserError as exc:  # bad input or settings: one line, no traceback (a bug: traceback)
        if getattr(args, "settings", None) is not None and args.settings.debug:
            raise
        message = " ".join(str(exc).split())
        print(f"trecho {args.command}: {message}", file=sys.stderr)
        return 2
