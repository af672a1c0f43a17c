"""The `trecho` command line: the parser of every subcommand and its argument types.

Usage errors are one line naming the flag (`trecho search: argument -k: must be 1 or more,
got 0 (--help for usage)`), exit code 2, as every other user error. Each subcommand's
`--help` says what it does, gives examples, and shows every option's default; a
subcommand is offered only the options it reads (the command texts are in `HELP`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import NoReturn

from rag_assets.core.request import MODES, Limits

LIMITS = Limits()
"""The default limits of a request (`--max-k`, `--max-query-chars`, `--max-body`)."""

Handler = Callable[[argparse.Namespace], int]
"""A subcommand: the parsed arguments in, the exit code out."""

DESCRIPTION = "trecho: materialize the pipeline, search the index, run the eval."
EPILOG = """examples:
  trecho materialize --lake data_lake      index every live version, write the eval report
  trecho search "qual o limite de vibração?" -k 3
  trecho serve --port 8010                 HTTP API (docs at /docs) and MCP at /mcp

`trecho <command> --help` for a command's options. The lake is --lake, else $TRECHO_LAKE,
else data_lake/ (docs/configuration.md lists every variable)."""

HELP: dict[str, tuple[str, str, str]] = {
    "materialize": (
        "index every live version + eval",
        "Bring the index in line with <lake>/raw: run the reconcile plan in-process (each\n"
        "version new or changed since its last run, or every live one with --force), remove\n"
        "what is no longer live, then write the eval report. One line per version, a\n"
        "summary, and the commands to open the Dagster UI and to search.",
        "  trecho materialize --lake data_lake\n"
        "  trecho materialize --skip-eval              index only\n"
        "  trecho materialize --force --eval-offsets 1 re-run everything, quick eval",
    ),
    "search": (
        "search the index",
        "The best chunks for a question, each with its citation (title, version, section\n"
        "path, pages) and scores: the fused rank `score`, the `cosine` to the query and the\n"
        "full-text `bm25`. Only versions in force on --as-of (default today) answer; hits\n"
        "under --min-score are dropped, so no result means the documents hold no answer\n"
        "(the line printed then says why: a filter, the date, or the score).",
        '  trecho search "qual o limite de vibração?" -k 3\n'
        '  trecho search "prazo de reembolso" --doc manual-beneficiario --expand\n'
        '  trecho search "carência" --as-of 2025-06-01 --json\n'
        '  trecho search "art. 18" --mode fts            exact words only',
    ),
    "eval": (
        "compare strategies on question files",
        "Score chunking strategies (or, with --models, embedding models) on question files:\n"
        "hit@k, MRR, nDCG, per tag, and abstention on the out-of-scope questions. Each\n"
        "strategy is indexed in a scratch folder; the lake's index is not touched. When\n"
        "no index row, question or code changed since the last eval of the model and mode,\n"
        "its result is reused (--fresh evaluates again); baseline chunk vectors are kept\n"
        "in <lake>/cache/eval-vectors.",
        "  trecho eval                                  the quick set on <lake>/eval/*.jsonl\n"
        "  trecho eval --strategies all --write -v      every strategy, report written\n"
        "  trecho eval --models all-MiniLM-L6-v2,multilingual-e5-small",
    ),
    "status": (
        "what is live and indexed",
        "What is live, what search serves (table, rows, model), any backfill pending, the\n"
        "embedding paths, and versions not live with why; read from the stores themselves.",
        "  trecho status --lake data_lake",
    ),
    "backfill": (
        "fill the configured model's table (model change)",
        "After a model change ($TRECHO_MODEL or --model): embed every live version into the\n"
        "new model's table. Search keeps the old table until the last version is in.",
        "  TRECHO_MODEL=multilingual-e5-small trecho backfill",
    ),
    "drop-model": (
        "drop --model's table and cache (not the active)",
        "Drop the index table and embedding cache of the model named by --model; refused\n"
        "for the model search uses.",
        "  trecho drop-model --model all-MiniLM-L6-v2",
    ),
    "ui": (
        "the Dagster UI on the lake's instance",
        "Start the Dagster UI (webserver and daemon: sensor, schedules, automation) on the\n"
        "lake's Dagster instance ($DAGSTER_HOME, else <lake>/.dagster), writing its\n"
        "dagster.yaml first (telemetry off, one run per version in the queue). Runs until\n"
        "Ctrl-C or SIGTERM, which stop every process it started.",
        "  trecho ui --lake data_lake                   http://127.0.0.1:3000\n"
        "  trecho ui --port 3001\n"
        "  TRECHO_MODEL=multilingual-e5-small trecho ui   the sensor switches the model",
    ),
    "serve": (
        "HTTP JSON API + MCP for RAG apps and agents",
        "Serve the index over HTTP: POST /search, GET /documents, GET /health, OpenAPI docs\n"
        "at /docs (offline: no CDN) and MCP (streamable HTTP) at /mcp; the model is loaded\n"
        "once, and a new or revoked version is served without a restart. Off loopback a\n"
        "bearer token ($TRECHO_SERVE_TOKEN) is required.",
        "  trecho serve --lake data_lake                 http://127.0.0.1:8000/docs\n"
        "  trecho serve --port 8010 --max-k 20\n"
        "  TRECHO_SERVE_TOKEN=... trecho serve --host 0.0.0.0",
    ),
    "mcp": (
        "MCP server on stdio, for agents",
        "Serve MCP over stdin/stdout (tools search_documents and list_documents): the\n"
        "command an agent launches.",
        '  {"command": "trecho", "args": ["mcp", "--lake", "/abs/data_lake"]}   in an\n'
        "  agent's MCP servers configuration",
    ),
}
"""Each subcommand's one-line help (in `trecho --help`), description and examples."""


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help with the description and examples as written, and each option's default
    (`(default: 5)`) where it has one and its help does not already say it."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def add_argument(self, action: argparse.Action) -> None:
        """argparse measures the subcommands' names without their indent: count it, so
        that `materialize` and its help share a line."""
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            longest = max(len(name) for name in action.choices) + self._current_indent + 4
            self._action_max_length = max(self._action_max_length, longest)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        shown = action.default in (None, False, argparse.SUPPRESS) or "default" in text
        if shown or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (`trecho search: argument -k: ...`), exit 2."""

    def error(self, message: str) -> NoReturn:
        """Print the problem on one line and exit with the usage-error code 2."""
        self.exit(2, f"{self.prog}: {message} (--help for usage)\n")


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number of 1 or more (argparse type)."""
    return _whole(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number of 0 or more (argparse type)."""
    return _whole(text, 0)


def build_parser(handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The argument parser of every subcommand, each bound to its handler in `handlers`
    (by command name, `-` as `_`)."""
    parser = Parser(
        prog="trecho", description=DESCRIPTION, epilog=EPILOG, formatter_class=Formatter
    )
    store = Parser(add_help=False)  # every command reads the lake and its database
    store.add_argument("--lake", help="data lake root (default: $TRECHO_LAKE, else data_lake/)")
    store.add_argument("--db", help="LanceDB URI (default: <lake>/lancedb)")
    prefixes = Parser(add_help=False)
    prefixes.add_argument("--query-prefix", help="e.g. 'query: ' for e5 models")
    prefixes.add_argument("--passage-prefix", help="e.g. 'passage: ' for e5 models")
    model = Parser(add_help=False, parents=[prefixes])
    model.add_argument(
        "--model", help="embedding model name or path (default: $TRECHO_MODEL, else the bundled e5)"
    )
    common = [store, model]
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
        short, description, examples = HELP[name]
        p = sub.add_parser(
            name,
            parents=parents,
            help=short,
            description=description,
            epilog=f"examples:\n{examples}",
            formatter_class=Formatter,
        )
        p.set_defaults(func=handlers[name.replace("-", "_")])
        return p

    p = command("materialize", common)
    p.add_argument("--skip-eval", action="store_true", help="do not write the eval report")
    offsets = "start offsets of the eval's size-based strategies (default: the asset's, 4)"
    p.add_argument("--eval-offsets", type=positive_int, help=offsets)
    p.add_argument("--force", action="store_true", help="re-run versions already up to date")

    p = command("search", common)
    p.add_argument(
        "query", help="the question, in the documents' language (checked as POST /search checks it)"
    )
    p.add_argument("-k", type=int, default=5, help=f"hits to return (1 to {LIMITS.max_k})")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="hybrid",
        help="hybrid (vector + full text, fused by rank), vector, or fts (exact words)",
    )
    p.add_argument("--doc", help="only this doc_id")
    p.add_argument("--version", help="only this version")
    p.add_argument("--as-of", help="validity date YYYY-MM-DD (default: today)")
    p.add_argument("--json", action="store_true", help="print a JSON array of hits")
    p.add_argument("--exact", action="store_true", help="scan every vector (skip the ANN index)")
    p.add_argument("--expand", action="store_true", help="also give each hit's parent unit")
    p.add_argument(
        "--min-score",
        type=float,
        help="drop hits whose cosine to the query is below this (default: the model's, or "
        "$TRECHO_MIN_SCORE; -1 keeps every hit; not with --mode fts)",
    )

    p = command("eval", [store, prefixes])
    p.add_argument("--questions", nargs="+", help="JSONL files (default: <lake>/eval/*.jsonl)")
    p.add_argument(
        "--strategies",
        nargs="+",
        help="strategies to compare with the default: names (see docs/eval.md), 'all' (the full "
        "list) or 'standard' (a quick set, the default)",
    )
    p.add_argument("--mode", choices=MODES, default="hybrid", help="retrieval mode")
    p.add_argument("--offsets", type=positive_int, default=4, help="start offsets (size-based)")
    draw = (
        "questions drawn from the lake itself (table, section and, with --llm-url, written "
        "questions; docs/eval.md): default 80 when the lake has no question file, else 0"
    )
    p.add_argument("--draw", type=non_negative_int, help=draw)
    p.add_argument("--draw-seed", type=int, default=0, help="seed of the draw (default 0)")
    p.add_argument(
        "--llm-url",
        help="OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1) that writes a "
        "question for some drawn units (optional; cached in <lake>/cache)",
    )
    p.add_argument("--llm-model", default="", help="model name sent to --llm-url")
    p.add_argument(
        "--llm-api-key-env", default="OPENAI_API_KEY", help="env var holding its API key"
    )
    models = p.add_mutually_exclusive_group()
    models.add_argument("--model", help="the model to score (default: the one search uses)")
    models.add_argument(
        "--models",
        help="compare models side by side, comma-separated (e.g. "
        "all-MiniLM-L6-v2,multilingual-e5-small): each indexes the default policy in a "
        "scratch folder",
    )
    p.add_argument("--json", action="store_true", help='print {"strategies": {...}} as JSON')
    p.add_argument("--write", action="store_true", help="also write reports/<timestamp>/")
    fresh = "evaluate again even when nothing changed since the last eval (default: reuse it)"
    p.add_argument("--fresh", action="store_true", help=fresh)
    p.add_argument("-v", "--verbose", action="store_true", help="full report with tag table")

    p = command("status", common)
    check = (
        "build and check the embedding paths now (seconds) instead of reading what runs recorded"
    )
    p.add_argument("--check-runtime", action="store_true", help=check)
    command("backfill", common)
    lake_only = Parser(add_help=False)
    lake_only.add_argument("--lake", help="data lake root (default: $TRECHO_LAKE, else data_lake/)")
    p = command("ui", [lake_only, model])
    p.add_argument("--host", default="127.0.0.1", help="listen address")
    p.add_argument("--port", type=int, default=3000, help="listen port")
    p = command("drop-model", [store, prefixes])
    p.add_argument("--model", required=True, help="the model whose table and cache to drop")

    limits = Parser(add_help=False)  # what one request may ask for, and query embedding
    most = "most hits a request may ask for"
    limits.add_argument("--max-k", type=int, default=LIMITS.max_k, help=most)
    limits.add_argument(
        "--max-query-chars", type=int, default=LIMITS.max_query_chars, help="longest query"
    )
    limits.add_argument("--threads", type=int, default=1, help="threads embedding one query")
    cache = "remember the vectors of this many recent queries (0: none)"
    limits.add_argument("--query-cache", type=int, default=1024, help=cache)
    p = command("serve", [*common, limits])
    p.add_argument(
        "--max-body", type=int, default=LIMITS.max_body_bytes, help="largest request, in bytes"
    )
    p.add_argument("--host", default="127.0.0.1", help="listen address (loopback)")
    p.add_argument("--port", type=int, default=8000, help="listen port")
    p.add_argument("--max-connections", type=int, default=2048, help="open connections (then 503)")
    timeout = "seconds a request (head and body) may take to arrive (then 408)"
    p.add_argument("--request-timeout", type=float, default=10.0, help=timeout)
    allow = "a Host name a loopback server also answers to (e.g. a proxy's); repeatable"
    p.add_argument("--allow-host", action="append", metavar="NAME", help=allow)

    p = command("mcp", [*common, limits])
    p.set_defaults(max_body=LIMITS.max_body_bytes)  # stdio has no request body to limit
    return parser
