"""`trecho search`, `eval` and `status`: the commands that read the index and print it."""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_assets.cli.common import db_of, err, lake_of, serving_index_of
from rag_assets.core.errors import UserError
from rag_assets.core.lake import Lake, LakeError


def cmd_search(args: argparse.Namespace) -> int:
    """Print the best chunks for a question. The flags become a `SearchRequest` by
    `search_request`, as `POST /search`'s body does: what the API refuses, this refuses
    with the same words."""
    from rag_assets.core.index import no_results
    from rag_assets.core.request import search_request

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
    named = args.model or args.query_prefix is not None or args.passage_prefix is not None
    index, request, hits, rows = across_switch(
        serving_index_of(args, lake),
        lambda: serving_index_of(args, lake),
        lambda index: search_once(lake, request, index, args.exact),
        follows=not named,  # a model named by flag is searched, switch or not
    )
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


def search_once(lake: Lake, request: Any, index: Any, exact: bool = False) -> Found:
    """One search of `index` as `trecho search` runs it: the request checked against
    the index, then its hits and their rows (`hit_rows`)."""
    from rag_assets.core.index import hit_rows
    from rag_assets.core.lake import split_key
    from rag_assets.core.request import check_in_index

    if not index.exists():
        raise LakeError(f"{index.uri}: no index table {index.table_name}; run `trecho materialize`")
    filtered = request.documents is not None or request.versions is not None
    held = [split_key(key) for key in index.partition_counts()] if filtered else []
    floor = index.min_score_for(request.mode, request.min_score)
    request = check_in_index(request, held, index.embedder, floor)
    hits = index.search(request, exact=exact)
    if not hits and not index.exists():  # read as empty: the table went during the search
        raise LakeError(f"{index.uri}: table {index.table_name} was dropped during the search")
    if request.mode != "fts":  # the query path ran: what `trecho status` says it runs on
        index.embedder.record_runtime(lake.runtime_dir, "queries")
    return index, request, hits, hit_rows(lake, hits, request.expand)


Found = tuple[Any, Any, list[Any], list[dict[str, Any]]]
"""What `search_once` gives: the index that answered, the request it ran, hits, rows."""


def across_switch(
    index: Any, active: Callable[[], Any], search: Callable[[Any], Found], follows: bool = True
) -> Found:
    """`search(index)`, asked once more of the index search uses now (`active()`) when it
    failed because search moved to another model's table meanwhile (a switch drops the
    old table, maybe while this process loaded the old model), as the servers do
    (`serve.engine.Engine._on_active`). A failure that is not across a switch (or with
    `follows` off: a model named by flag) is raised as it came; one across a switch
    that fails again is one line naming both tables (a LakeError)."""
    from rag_assets.core.index import read_active

    try:
        return search(index)
    except Exception:
        if not follows:
            raise
        ref = read_active(index.uri)
        if ref is None or ref.model_id == index.embedder.model_id:
            raise  # no switch: the failure is the search's own
    now = active()
    try:
        return search(now)
    except UserError:
        raise  # the new table's own refusal (a document it does not hold): its words
    except Exception as exc:
        said = " ".join(str(exc).split())
        said = said if len(said) <= 200 else said[:197] + "..."
        raise LakeError(
            f"{index.uri}: search moved from {index.table_name} to {now.table_name} during "
            f"this search, which failed on {now.table_name} too ({type(exc).__name__}: "
            f"{said}); run it again"
        ) from exc


def _similarity(hit: Any) -> str:
    """A hit's real similarities for the search listing: `, cosine 0.8512, bm25 7.12`."""
    pairs = (("cosine", hit.cosine), ("bm25", hit.bm25))
    return "".join(f", {name} {value:.4f}" for name, value in pairs if value is not None)


def cmd_eval(args: argparse.Namespace) -> int:
    """Print every strategy's metrics side by side (with --models: every model's)."""
    from rag_assets.cli.evaluate import Asked, evaluate, evaluate_models
    from rag_assets.core.eval import (
        DrawSettings,
        markdown_table,
        models_table,
        question_files,
        render_markdown,
        report_sources,
        write_report,
    )
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
    from rag_assets.cli.status import lake_status, model_lines, pending_line
    from rag_assets.core.embedding import NOT_MEASURED

    lake = lake_of(args)
    db = db_of(args, lake)
    model = (args.model, args.query_prefix, args.passage_prefix)
    embedder = args.settings.lake_embedder(db, *model)  # the lake's, unless --model names one
    status = lake_status(lake, db, embedder, args.settings, args.check_runtime)
    active = status.active
    print(f"lake: {status.lake}")
    fill = "`trecho materialize`, or the sensor of `trecho ui`"
    if status.indexes is None:  # no table: nothing to count rows of
        print(f"search uses: nothing yet (no table {status.table}); {pending_line(status, fill)}")
    else:
        print(
            f"search uses: {status.table} ({status.rows} rows"
            + (f", model {active.model}, since {active.switched_at})" if active else ")")
        )
        print(f"indexes: {status.indexes}")
    for line in model_lines(status, args.model, args.settings):
        print(line)
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
