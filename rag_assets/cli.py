"""The `trecho` command: materialize the pipeline, search the index, run the eval."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from rag_assets.core.lake import Lake, LakeError


def _lake(args: argparse.Namespace) -> Lake:
    root = args.lake or os.environ.get("TRECHO_LAKE") or "data_lake"
    lake = Lake(root)
    if not lake.root.is_dir():
        raise LakeError(f"{lake.root}: no such lake folder (set --lake or TRECHO_LAKE)")
    os.environ["TRECHO_LAKE"] = str(lake.root)  # the Dagster resources read it
    return lake


def _embedder(args: argparse.Namespace) -> Any:
    from rag_assets.core.embedding import DEFAULT_MODEL, Embedder

    return Embedder(
        model=args.model or os.environ.get("TRECHO_MODEL", DEFAULT_MODEL),
        query_prefix=args.query_prefix,
        passage_prefix=args.passage_prefix,
    )


def _index(args: argparse.Namespace, lake: Lake, embedder: Any = None) -> Any:
    """The index of the chosen model in `--db`, else `<lake>/lancedb`."""
    from rag_assets.core.search import Index

    return Index(args.db or lake.lancedb_dir, embedder or _embedder(args))


def _instance(lake: Lake) -> Any:
    """The persistent Dagster instance: DAGSTER_HOME, else `<lake>/.dagster`."""
    from dagster import DagsterInstance

    home = Path(os.environ.get("DAGSTER_HOME") or lake.dagster_home)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():  # a persistent instance, without telemetry
        config.write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home.resolve())
    return DagsterInstance.get()


def cmd_materialize(args: argparse.Namespace) -> int:
    """Every asset for every live version, in-process, then the eval report."""
    lake = _lake(args)
    logging.getLogger("dagster").setLevel(logging.WARNING)
    from rag_assets.core.service import purge_version, scan_versions
    from rag_assets.definitions import build_definitions
    from rag_assets.partitions import DOC_VERSIONS

    defs = build_definitions(
        str(lake.root), args.model, args.query_prefix, args.passage_prefix, args.db or ""
    )
    instance = _instance(lake)
    scan = scan_versions(lake)
    live, dead = scan.live, scan.dead
    for problem in scan.problems:
        print(f"skipped: {problem}")
    existing = set(instance.get_dynamic_partitions(DOC_VERSIONS))
    gone = sorted(existing - set(live))
    if gone or dead:
        index = _index(args, lake)
        for key in sorted(set(gone) | set(dead)):
            rows, files = purge_version(lake, index, key)
            if key in existing:
                instance.delete_dynamic_partition(DOC_VERSIONS, key)
            if rows or files or key in existing:
                print(
                    f"removed  {key}: not live (revoked, expired or deleted); "
                    f"{rows} index rows, {files} files"
                )
    new = [k for k in live if k not in existing]
    if new:
        instance.add_dynamic_partitions(DOC_VERSIONS, new)
    job = defs.resolve_job_def("index_documents")
    failed: list[str] = []
    for n, key in enumerate(live, start=1):
        print(f"[{n}/{len(live)}] {key} ...", end=" ", flush=True)
        result = job.execute_in_process(
            partition_key=key,
            instance=instance,
            raise_on_error=False,
            tags={"trecho/trigger": "cli"},
            run_config=QUIET,
        )
        if result.success:
            chunks = _metadata(result, "chunks", "chunks")
            print(f"ok ({chunks} chunks indexed)")
        else:
            failed.append(key)
            print("FAILED")
            for event in result.all_events:
                if event.event_type_value == "STEP_FAILURE" and event.step_failure_data.error:
                    print(textwrap.indent(event.step_failure_data.error.message.strip(), "    "))
    report_dir = None
    if not args.skip_eval:
        print("eval report ...", end=" ", flush=True)
        result = defs.resolve_job_def("eval_report_job").execute_in_process(
            instance=instance, raise_on_error=False, run_config=QUIET
        )
        if result.success:
            report_dir = _metadata(result, "eval_report", "report")
            print("ok")
        else:
            failed.append("eval_report")
            print("FAILED")
    print()
    print(
        f"Indexed {len(live) - len([f for f in failed if '@' in f])} of {len(live)} live "
        f"versions into {lake.lancedb_dir}"
    )
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


QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _metadata(result: Any, asset: str, key: str) -> Any:
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if materialization.asset_key.to_user_string() == asset and key in materialization.metadata:
            return materialization.metadata[key].value
    return None


def cmd_search(args: argparse.Namespace) -> int:
    """Print the best chunks for a question."""
    lake = _lake(args)

    index = _index(args, lake)
    if not index.exists():
        raise LakeError(f"{lake.lancedb_dir}: no index for this model; run `trecho materialize`")
    as_of = dt.date.fromisoformat(args.as_of) if args.as_of else None
    hits = index.search(
        args.query, k=args.k, mode=args.mode, doc_id=args.doc, version=args.version, as_of=as_of
    )
    parents: list[str | None] = [None] * len(hits)
    if args.expand:
        from rag_assets.core.service import parent_text

        parents = [parent_text(lake, h.partition_key, h.parent_id) for h in hits]
    if args.json:
        rows = [
            h.to_json() | ({"parent_text": p} if args.expand else {})
            for h, p in zip(hits, parents, strict=True)
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2, default=str))
        return 0
    if not hits:
        print("no results")
    for rank, (hit, parent) in enumerate(zip(hits, parents, strict=True), start=1):
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
    from rag_assets.core.evaluation import STANDARD, strategy_families
    from rag_assets.core.report import markdown_table, render_markdown, write_report
    from rag_assets.core.service import question_files, run_eval

    embedder = _embedder(args)
    index = _index(args, lake, embedder)
    files = question_files(lake, [Path(p) for p in args.questions] if args.questions else None)
    names = [n for n in (args.strategies or STANDARD) if n != "default"]
    try:
        strategies = strategy_families(names, args.offsets, embedder)
    except ValueError as exc:
        raise LakeError(str(exc)) from exc
    progress = (
        (lambda _: None) if args.json else (lambda s: print(f"evaluating {s}", file=sys.stderr))
    )
    result = run_eval(lake, embedder, index, files, strategies, mode=args.mode, progress=progress)
    if args.write:
        folder = write_report(result, lake.reports_dir, [f.name for f in files])
        print(f"report written to {folder}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(
            render_markdown(result, "trecho eval", [f.name for f in files])
            if args.verbose
            else markdown_table(result)
        )
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Live versions, their hashes and chunk counts in the active model table."""
    lake = _lake(args)
    from rag_assets.core.lake import sha256_file
    from rag_assets.core.service import scan_versions

    embedder = _embedder(args)
    index = _index(args, lake, embedder)
    counts = index.partition_counts() if index.exists() else {}
    scan = scan_versions(lake)
    print(f"lake: {lake.root}\nindex table: {index.table_name} ({sum(counts.values())} rows)")
    for key in scan.live:
        pdf, _ = lake.raw_paths(key)
        state = "indexed" if counts.get(key) else "PENDING (not indexed)"
        print(
            f"  live     {key:32} {sha256_file(pdf)[:12]}  {counts.get(key, 0):5} chunks  {state}"
        )
    for key in scan.dead:
        state = "CLEANUP PENDING" if counts.get(key) else "removed"
        print(f"  not live {key:32} {'':12}  {counts.get(key, 0):5} chunks  {state}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="trecho", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lake", help="data lake root (default: $TRECHO_LAKE or data_lake/)")
    common.add_argument("--model", help="embedding model name or path ($TRECHO_MODEL)")
    common.add_argument("--query-prefix", default="", help="e.g. 'query: ' for e5 models")
    common.add_argument("--passage-prefix", default="", help="e.g. 'passage: ' for e5 models")
    common.add_argument("--db", help="LanceDB URI (default: <lake>/lancedb)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("materialize", parents=[common], help="index every live version + eval")
    p.add_argument("--skip-eval", action="store_true", help="do not write the eval report")
    p.set_defaults(func=cmd_materialize)

    p = sub.add_parser("search", parents=[common], help="search the index")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid")
    p.add_argument("--doc", help="only this doc_id")
    p.add_argument("--version", help="only this version")
    p.add_argument("--as-of", help="validity date YYYY-MM-DD (default: today)")
    p.add_argument("--json", action="store_true", help="print a JSON array of hits")
    p.add_argument(
        "--expand", action="store_true", help="also give each hit's parent unit (small-to-big)"
    )
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", parents=[common], help="compare strategies on question files")
    p.add_argument("--questions", nargs="+", help="JSONL files (default: <lake>/eval/*.jsonl)")
    p.add_argument(
        "--strategies",
        nargs="+",
        help="strategies to compare with the default (see README; default: a standard set)",
    )
    p.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid")
    p.add_argument("--offsets", type=int, default=4, help="start offsets for size-based ones")
    p.add_argument("--json", action="store_true", help='print {"strategies": {...}} as JSON')
    p.add_argument("--write", action="store_true", help="also write reports/<timestamp>/")
    p.add_argument("-v", "--verbose", action="store_true", help="full report with tag table")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("status", parents=[common], help="what is live and indexed")
    p.set_defaults(func=cmd_status)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `trecho` console script."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except LakeError as exc:
        print(f"trecho: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
