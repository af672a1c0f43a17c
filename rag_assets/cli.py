"""The `trecho` command: materialize the pipeline, search the index, run the eval."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import logging
import os
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from rag_assets.core.errors import UserError
from rag_assets.core.lake.layout import Lake, LakeError
from rag_assets.settings import Settings


def _lake(args: argparse.Namespace) -> Lake:
    root = args.lake or args.settings.lake
    lake = Lake(root)
    if not lake.root.is_dir():
        raise LakeError(f"{lake.root}: no such lake folder (set --lake or TRECHO_LAKE)")
    os.environ["TRECHO_LAKE"] = str(lake.root)  # the Dagster resources read it
    return lake


def _embedder(args: argparse.Namespace, server: bool = False) -> Any:
    """The model of --model/--*-prefix, else the configured one (`Settings.embedder`;
    `server`: for `serve` and `mcp`)."""
    return args.settings.embedder(args.model, args.query_prefix, args.passage_prefix, server=server)


def _db(args: argparse.Namespace, lake: Lake) -> str:
    """The LanceDB URI: --db, else `<lake>/lancedb`."""
    return str(args.db or lake.lancedb_dir)


def _index(args: argparse.Namespace, lake: Lake, embedder: Any = None) -> Any:
    """The index of the chosen model in `--db`, else `<lake>/lancedb`."""
    return args.settings.index(_db(args, lake), embedder or _embedder(args))


def _serving_index(args: argparse.Namespace, lake: Lake) -> Any:
    """The index search answers from: the model named on the command line, else the
    active model (the configured one takes over only once its backfill is complete)."""
    from rag_assets.core.index import active_embedder

    explicit = args.model or args.query_prefix is not None or args.passage_prefix is not None
    embedder = _embedder(args)
    return _index(args, lake, embedder if explicit else active_embedder(_db(args, lake), embedder))


def _stores(args: argparse.Namespace, lake: Lake) -> tuple[Any, Any]:
    """The `lake` and `lancedb` resources of this command (for the reconcile plan)."""
    from resources import LakeResource, LanceDBResource

    keep = args.settings.keep_history
    return LakeResource(root=str(lake.root), keep_history=keep), LanceDBResource(
        uri=_db(args, lake)
    )


def _instance(args: argparse.Namespace, lake: Lake) -> Any:
    """The persistent Dagster instance: DAGSTER_HOME, else `<lake>/.dagster`."""
    from dagster import DagsterInstance

    home = Path(args.settings.dagster_home or lake.dagster_home)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():  # a persistent instance, without telemetry
        config.write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home.resolve())
    return DagsterInstance.get()


def cmd_materialize(args: argparse.Namespace) -> int:
    """Carry out the reconcile plan in-process (every live version with --force), then
    the eval report: one line per version (ok, skipped and why, failed and why, or
    removed and why), a summary, and Dagster's full logs in a file."""
    lake = _lake(args)
    from rag_assets.definitions import build_definitions
    from rag_assets.orchestration.partitions import DOC_VERSIONS
    from rag_assets.orchestration.plans import job_of, plan_lake, plan_removals

    defs = build_definitions(
        str(lake.root),
        args.model,
        args.query_prefix,
        args.passage_prefix,
        args.db or "",
        settings=args.settings,
    )
    instance = _instance(args, lake)
    log = _start_log(instance)
    db = _db(args, lake)
    embedder = _embedder(args)
    stores = _stores(args, lake)
    plan = plan_lake(instance, *stores, embedder, force=args.force)
    for problem in plan.scan.problems:
        print(f"skipped  {problem}")
    skipped = len(plan.scan.problems) + len(plan.scan.dead)
    _remove_not_live(instance, stores, plan)
    if plan.add:
        instance.add_dynamic_partitions(DOC_VERSIONS, plan.add)
    for key in plan.up_to_date:
        skipped += 1
        print(f"skipped  {key}: up to date (same file, sidecar, code and index)")
    outcome = _run_partitions(defs, instance, {k: job_of(r) for k, r in plan.run.items()}, log)
    skipped += len(outcome.skipped)
    after = plan_removals(instance, *stores, embedder)  # what a new version superseded
    _remove_not_live(instance, stores, after, say_skipped=False)
    _catch_up_indexes(_index(args, lake, embedder))  # also rows a killed run left flat
    report_dir = None
    failed = dict(outcome.failed)
    if not args.skip_eval:
        print("eval report ...", end=" ", flush=True)
        config = {"offsets": args.eval_offsets} if args.eval_offsets else {}
        result = defs.resolve_job_def("eval_report_job").execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config={**QUIET, "ops": {"eval_report": {"config": config}}},
            tags=_run_tags(),
        )
        log.write(instance, result.run_id, "eval_report")
        if result.success:
            report_dir = _metadata(result, "eval_report", "report")
            print("ok")
        else:
            failed["eval_report"] = _failure_reason(result)
            print(f"failed: {failed['eval_report']}")
    print()
    print(
        f"{len(outcome.ok)} indexed, {skipped} skipped, {len(outcome.failed)} failed; "
        f"{len(after.scan.live)} live versions in {db}"
    )
    print(f"Full Dagster logs: {log.path}")
    if report_dir:
        print(f"Report: {report_dir}")
    print(
        f"Open the Dagster UI: DAGSTER_HOME={os.environ['DAGSTER_HOME']} "
        "dagster dev -w workspace.yaml   (then http://127.0.0.1:3000)"
    )
    print('Search: trecho search "qual o limite de vibração?" -k 3')
    if failed:
        print(f"Failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _remove_not_live(
    instance: Any, stores: tuple[Any, Any], plan: Any, *, say_skipped: bool = True
) -> None:
    """Carry out the plan's removals, one line each (and one per version not live with
    nothing left to remove, with `say_skipped`)."""
    from rag_assets.orchestration.partitions import DOC_VERSIONS
    from rag_assets.orchestration.plans import carry_out_removals

    for key in carry_out_removals(instance, *stores, plan, lambda m: print(f"removed  {m}")):
        instance.delete_dynamic_partition(DOC_VERSIONS, key)
    for key, reason in plan.nothing_left.items() if say_skipped else ():
        print(f"skipped  {key}: {reason}")


def _start_log(instance: Any) -> RunLog:
    """What a command that runs jobs does first: mark failed the runs a killed `trecho`
    left unfinished, and open the file Dagster's logs go to."""
    from rag_assets.orchestration.runs import fail_interrupted_runs

    for run_id in fail_interrupted_runs(instance):
        print(f"marked failed: run {run_id[:8]} (interrupted: its process is gone)")
    return RunLog(Path(os.environ["DAGSTER_HOME"]) / "logs")


class RunLog:
    """The file the full Dagster logs of one command go to (one per command run)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.path = folder / f"trecho-{stamp}-{os.getpid()}.log"

    def write(self, instance: Any, run_id: str, what: str) -> None:
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


def _run_tags() -> dict[str, str]:
    """Tags of a run started by this command: its trigger, host and process id."""
    from rag_assets.orchestration.runs import process_tags

    return {"trecho/trigger": "cli", **process_tags()}


def _failure_reason(result: Any) -> str:
    """The first line of the first failed step's error, without the exception class."""
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE" and event.step_failure_data.error:
            message = event.step_failure_data.error.message.strip().splitlines()[0]
            name, sep, rest = message.partition(": ")
            return rest if sep and "." in name and " " not in name else message
    return "the run failed (see the log file)"


def _catch_up_indexes(index: Any) -> None:
    """Take the rows still searched flat into the indexes at the end of a command, even
    when nothing ran (rows a killed run wrote before its own index update)."""
    if index.exists():
        done = index.update_indexes(max_lag_rows=0)
        if done:
            print(f"indexes: {'; '.join(done)}")


@dataclass
class Outcome:
    """What a series of runs did, per partition key."""

    ok: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def _run_partitions(
    defs: Any, instance: Any, jobs: dict[str, str], log: RunLog | None = None
) -> Outcome:
    """Run one job per partition key in-process, one line each; Dagster's own logs go to
    `log`, not to the terminal."""
    outcome = Outcome()
    for n, (key, job_name) in enumerate(jobs.items(), start=1):
        print(f"[{n}/{len(jobs)}] {key} ...", end=" ", flush=True)
        result = defs.resolve_job_def(job_name).execute_in_process(
            partition_key=key,
            instance=instance,
            raise_on_error=False,
            tags=_run_tags(),
            run_config=QUIET,
        )
        if log is not None:
            log.write(instance, result.run_id, key)
        not_written = _metadata(result, "embeddings", "not_written")
        if result.success and not_written:
            outcome.skipped[key] = not_written
            print(f"skipped: not written, {not_written}")
        elif result.success:
            outcome.ok.append(key)
            rows = _metadata(result, "embeddings", "rows")
            embedded = _metadata(result, "embeddings", "texts_embedded")
            print(f"ok ({rows} chunks indexed, {embedded} texts embedded)")
        else:
            outcome.failed[key] = _failure_reason(result).removeprefix(f"{key}: ")
            print(f"failed: {outcome.failed[key]}")
    return outcome


def cmd_backfill(args: argparse.Namespace) -> int:
    """Fill the configured model's table for every live version (after a model change).

    Versions already extracted are re-chunked (budgets follow the model's tokenizer) and
    embedded; the others run the whole pipeline. Search switches to the new model's table
    when the last version is in.
    """
    lake = _lake(args)
    logging.getLogger("dagster").setLevel(logging.WARNING)
    from rag_assets.core.index.models import model_progress
    from rag_assets.core.lifecycle.versions import scan_versions
    from rag_assets.definitions import build_definitions
    from rag_assets.orchestration.partitions import DOC_VERSIONS

    embedder = _embedder(args)
    defs = build_definitions(
        str(lake.root),
        embedder.model,
        embedder.query_prefix,
        embedder.passage_prefix,
        _db(args, lake),
        settings=args.settings,
    )
    instance = _instance(args, lake)
    log = _start_log(instance)
    live = scan_versions(lake, args.settings.keep_history).live
    existing = set(instance.get_dynamic_partitions(DOC_VERSIONS))
    new = [k for k in live if k not in existing]
    if new:
        instance.add_dynamic_partitions(DOC_VERSIONS, new)
    print(f"backfill of {embedder.model_id} ({embedder.model}) for {len(live)} live versions")
    jobs = {  # extraction is reused where it exists; chunks are re-cut for the model
        key: "embed_documents" if lake.stage_path("tables", key).exists() else "index_documents"
        for key in live
    }
    failed = list(_run_partitions(defs, instance, jobs, log).failed)
    _catch_up_indexes(_index(args, lake, embedder))
    progress = model_progress(lake, _db(args, lake), embedder, args.settings.keep_history)
    print(
        f"search uses {progress.active}"
        + (
            ""
            if progress.complete
            else f"; still missing in {embedder.model_id}: {progress.missing}"
        )
    )
    print(f"Full Dagster logs: {log.path}")
    if failed:
        print(f"Failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""The terminal gets one line per version; Dagster's own logs go to the log file."""


def _metadata(result: Any, asset: str, key: str) -> Any:
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if materialization.asset_key.to_user_string() == asset and key in materialization.metadata:
            return materialization.metadata[key].value
    return None


def cmd_search(args: argparse.Namespace) -> int:
    """Print the best chunks for a question."""
    lake = _lake(args)
    index = _serving_index(args, lake)
    if not index.exists():
        raise LakeError(f"{index.uri}: no index table {index.table_name}; run `trecho materialize`")
    as_of = args.as_of
    hits = index.search(
        args.query,
        k=args.k,
        mode=args.mode,
        doc_id=args.doc,
        version=args.version,
        as_of=as_of,
        exact=args.exact,
    )
    from rag_assets.core.index.hits import hit_rows

    rows = hit_rows(lake, hits, args.expand)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2, default=str))
        return 0
    if not hits:
        print("no results")
    for rank, (hit, row) in enumerate(zip(hits, rows, strict=True), start=1):
        parent = row.get("parent_text")
        pages = f"p. {hit.page_start}" + (
            f"–{hit.page_end}" if hit.page_end != hit.page_start else ""
        )
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
    """Print every strategy's metrics side by side."""
    lake = _lake(args)
    from rag_assets.core.eval.evaluation import resolve_strategies, strategy_families
    from rag_assets.core.eval.report import markdown_table, render_markdown, write_report
    from rag_assets.core.eval.runner import question_files, run_eval

    files = question_files(lake, [Path(p) for p in args.questions] if args.questions else None)
    names = resolve_strategies(args.strategies)
    progress = (
        (lambda _: None) if args.json else (lambda s: print(f"evaluating {s}", file=sys.stderr))
    )
    if args.models:
        return _eval_models(args, lake, files, names, progress)
    index = _serving_index(args, lake)  # the model search uses, unless --model is given
    embedder = index.embedder
    strategies = strategy_families(names, args.offsets, embedder)
    result = run_eval(
        lake,
        embedder,
        index,
        files,
        strategies,
        mode=args.mode,
        progress=progress,
        history=args.settings.keep_history,
    )
    if args.write:
        folder = write_report(result, lake.reports_dir, [f.name for f in files])
        print(f"report written to {folder / 'report.html'}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(
            render_markdown(result, "trecho eval", [f.name for f in files])
            if args.verbose
            else markdown_table(result)
        )
    return 0


def _eval_models(
    args: argparse.Namespace, lake: Lake, files: list[Any], names: list[str], progress: Any
) -> int:
    """`trecho eval --models A,B`: every model x strategy in one run, side by side."""
    from rag_assets.core.eval.evaluation import strategy_families
    from rag_assets.core.eval.report import markdown_table, models_table, write_report
    from rag_assets.core.eval.runner import run_eval_models

    try:
        embedders = [args.settings.embedder(m.strip()) for m in args.models.split(",") if m.strip()]
        for embedder in embedders:
            embedder.token_counter()  # an unknown model fails here, before any work
        results = run_eval_models(
            lake,
            embedders,
            files,
            lambda e: strategy_families(names, args.offsets, e),
            mode=args.mode,
            progress=progress,
            history=args.settings.keep_history,
            vector_weight=args.settings.vector_weight,
        )
    except OSError as exc:
        raise LakeError(str(exc)) from exc
    if args.write:
        for model, result in results.items():
            folder = write_report(result, lake.reports_dir, [f.name for f in files])
            print(f"{model}: report written to {folder / 'report.html'}", file=sys.stderr)
    if args.json:
        print(json.dumps({"models": {m: r.to_json() for m, r in results.items()}}, indent=2))
        return 0
    print(models_table(results))
    if args.verbose:
        for model, result in results.items():
            print(f"\n## {model}\n\n{markdown_table(result)}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """What is live, what search serves, and anything pending, from the stores themselves
    (not from Dagster's event log, which keeps a removed version's old events)."""
    lake = _lake(args)
    from rag_assets.core.index import embedder_for, model_tables, read_active
    from rag_assets.core.index.models import model_progress
    from rag_assets.core.lake.layout import sha256_file
    from rag_assets.core.lake.parquet import stage_rows
    from rag_assets.core.lifecycle.versions import scan_versions

    db = _db(args, lake)
    embedder = _embedder(args)
    active = read_active(db)
    serving = _index(args, lake, embedder_for(active, embedder))
    counts = serving.partition_counts() if serving.exists() else {}
    progress = model_progress(lake, db, embedder, args.settings.keep_history)
    scan = scan_versions(lake, args.settings.keep_history)
    print(f"lake: {lake.root}")
    print(
        f"search uses: {serving.table_name} ({sum(counts.values())} rows"
        + (f", model {active.model}, since {active.switched_at})" if active else ")")
    )
    if serving.exists():
        print(f"indexes: {serving.index_stats().summary()}")
    if active is None or active.model_id != embedder.model_id:
        state = "complete" if progress.complete else f"{len(progress.missing)} versions missing"
        print(
            f"configured model: {embedder.model_id} -> backfill {state} "
            f"({len(progress.done)} done); run `trecho backfill`"
        )
    print(f"model tables: {', '.join(model_tables(db)) or '(none)'}")
    for key in scan.live:
        pdf, _ = lake.raw_paths(key)
        expected = stage_rows(lake, "chunks", key)
        have = counts.get(key, 0)
        if not have:
            state = "PENDING (not indexed)"
        elif expected is not None and expected != have:
            state = f"UNSYNCED ({expected} chunks in Parquet)"
        else:
            state = "indexed"
        print(f"  live     {key:32} {sha256_file(pdf)[:12]}  {have:5} chunks  {state}")
    for key in scan.dead:
        leftover = counts.get(key, 0) or any(
            lake.stage_path(stage, key).exists() for stage in ("documents", "chunks")
        )
        state = "CLEANUP PENDING" if leftover else "removed"
        print(f"  not live {key:32} {scan.reasons.get(key, ''):30}  {state}")
    for problem in scan.problems:
        print(f"  problem  {problem}")
    return 0


def _engine(args: argparse.Namespace) -> Any:
    """The search engine of `serve` and `mcp`, its model loaded (and one query run)."""
    from rag_assets.serve import Engine, Limits, query_threads

    lake = _lake(args)
    limits = Limits(args.max_k, args.max_query_chars, args.max_body)
    if min(limits.max_k, limits.max_query_chars, limits.max_body_bytes, args.threads) < 1:
        raise LakeError("--max-k, --max-query-chars, --max-body and --threads must be >= 1")
    query_threads(args.threads)
    embedder = dataclasses.replace(_embedder(args, server=True), threads=args.threads)
    if args.query_cache < 0:
        raise LakeError("--query-cache must be >= 0")
    options = args.settings.index_options()
    engine = Engine(lake, _db(args, lake), embedder, limits, args.query_cache, options)
    index = engine.warm_up()
    rows = index.index_stats().rows if index.exists() else 0
    print(f"trecho: {lake.root}: {index.table_name} ({rows} rows) ready", file=sys.stderr)
    return engine


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the index over HTTP (JSON API, OpenAPI docs, MCP at /mcp) until interrupted."""
    from rag_assets.serve import TOKEN_ENV, is_loopback, run_http

    token = args.settings.serve_token or None
    if not is_loopback(args.host) and token is None:
        raise LakeError(
            f"--host {args.host} accepts connections from other machines: set {TOKEN_ENV} "
            "(clients then send Authorization: Bearer <token>)"
        )
    engine = _engine(args)
    print(
        f"trecho: serving http://{args.host}:{args.port} (docs /docs, MCP /mcp"
        f"{', bearer token required' if token else ''})",
        file=sys.stderr,
    )
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
    p.add_argument(
        "--eval-offsets",
        type=positive_int,
        default=None,
        help="start offsets of the eval's size-based strategies (default: the eval_report "
        "asset's, 4)",
    )
    p.add_argument(
        "--force", action="store_true", help="re-run versions that are already up to date"
    )
    p.set_defaults(func=cmd_materialize)

    p = sub.add_parser("search", parents=[common], help="search the index")
    p.add_argument("query", type=query_text)
    p.add_argument("-k", type=positive_int, default=5, help="hits to return (1 or more)")
    p.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid")
    p.add_argument("--doc", help="only this doc_id")
    p.add_argument("--version", help="only this version")
    p.add_argument("--as-of", type=iso_date, help="validity date YYYY-MM-DD (default: today)")
    p.add_argument("--json", action="store_true", help="print a JSON array of hits")
    p.add_argument(
        "--exact", action="store_true", help="scan every vector (skip the ANN index, if any)"
    )
    p.add_argument(
        "--expand", action="store_true", help="also give each hit's parent unit (small-to-big)"
    )
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
    p.add_argument(
        "--offsets", type=positive_int, default=4, help="start offsets for size-based ones"
    )
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

    p = sub.add_parser(
        "backfill", parents=[common], help="fill the configured model's table (model change)"
    )
    p.set_defaults(func=cmd_backfill)

    p = sub.add_parser(
        "drop-model", parents=[common], help="drop --model's table and cache (not the active)"
    )
    p.set_defaults(func=cmd_drop_model)

    p = sub.add_parser("status", parents=[common], help="what is live and indexed")
    p.set_defaults(func=cmd_status)

    limits = argparse.ArgumentParser(add_help=False)
    limits.add_argument("--max-k", type=int, default=50, help="most hits a request may ask for")
    limits.add_argument(
        "--max-query-chars", type=int, default=2000, help="longest query, in characters"
    )
    limits.add_argument("--max-body", type=int, default=65536, help="largest request, in bytes")
    limits.add_argument(
        "--threads", type=int, default=1, help="threads that embed one query (default 1)"
    )
    limits.add_argument(
        "--query-cache",
        type=int,
        default=1024,
        help="remember the vectors of this many recent queries (0: none)",
    )
    p = sub.add_parser(
        "serve", parents=[common, limits], help="HTTP JSON API + MCP for RAG apps and agents"
    )
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
