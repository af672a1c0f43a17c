"""`trecho search`, `eval` and `status`: the commands that read the index and print it."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from rag_assets.cli.common import db_of, embedder_of, err, lake_of, serving_index_of
from rag_assets.core.lake.layout import LakeError


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
    lake = lake_of(args)
    index = serving_index_of(args, lake)
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
    from rag_assets.cli.evaluate import Asked, evaluate, evaluate_models
    from rag_assets.core.eval.drawn import DrawSettings
    from rag_assets.core.eval.report import (
        markdown_table,
        models_table,
        render_markdown,
        write_report,
    )
    from rag_assets.core.eval.runner import question_files, report_sources
    from rag_assets.settings import secret

    lake = lake_of(args)
    files = question_files(lake, [Path(p) for p in args.questions] if args.questions else None)
    progress = (lambda _: None) if args.json else (lambda s: err(f"evaluating {s}"))
    draw = DrawSettings(size=args.draw, seed=args.draw_seed)
    llm = (args.llm_url, args.llm_model, secret(args.llm_api_key_env))
    asked = Asked(args.strategies, args.offsets, args.mode, progress, draw, llm)
    if args.models:  # every model x strategy in one run, side by side
        models = args.models.split(",")
        results = evaluate_models(args.settings, lake, models, files, asked)
        for model, result in results.items() if args.write else ():
            folder = write_report(result, lake.reports_dir, report_sources(files, result))
            err(f"{model}: report written to {folder / 'report.html'}")
        if args.json:
            print(json.dumps({"models": {m: r.to_json() for m, r in results.items()}}, indent=2))
            return 0
        print(models_table(results))
        for model, result in results.items() if args.verbose else ():
            print(f"\n## {model}\n\n{markdown_table(result)}")
        return 0
    index = serving_index_of(args, lake)  # the model search uses, unless --model is given
    result = evaluate(args.settings, lake, index, files, asked, not args.fresh)
    sources = report_sources(files, result)
    if args.write:
        folder = write_report(result, lake.reports_dir, sources)
        err(f"report written to {folder / 'report.html'}")
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    verbose = args.verbose
    print(render_markdown(result, "trecho eval", sources) if verbose else markdown_table(result))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """What is live, what search serves, and anything pending, from the stores themselves
    (not from Dagster's event log, which keeps a removed version's old events)."""
    from rag_assets.cli.status import lake_status
    from rag_assets.core.embedding.runtime import NOT_MEASURED

    lake = lake_of(args)
    embedder = embedder_of(args)
    status = lake_status(lake, db_of(args, lake), embedder, args.settings, args.check_runtime)
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
