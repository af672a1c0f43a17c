"""The `trecho` command line: the parser of every subcommand and its argument types.

Usage errors are one line naming the flag (`trecho search: argument -k: must be 1 or more,
got 0 (--help for usage)`), exit code 2, as every other user error."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable, Mapping
from typing import NoReturn

Handler = Callable[[argparse.Namespace], int]
"""A subcommand: the parsed arguments in, the exit code out."""

DESCRIPTION = "trecho: materialize the pipeline, search the index, run the eval."


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


def cosine(text: str) -> float:
    """A cosine similarity, from -1 to 1 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a cosine is from -1 to 1, got {value}")
    return value


def iso_date(text: str) -> dt.date:
    """A YYYY-MM-DD date (argparse type)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def build_parser(handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The argument parser of every subcommand, each bound to its handler in `handlers`
    (by command name, `-` as `_`)."""
    parser = Parser(prog="trecho", description=DESCRIPTION)
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
    p.set_defaults(func=handlers["materialize"])

    p = sub.add_parser("search", parents=[common], help="search the index")
    p.add_argument("query", help="the question (checked as POST /search checks it)")
    p.add_argument("-k", type=positive_int, default=5, help="hits to return (1 to 50)")
    p.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid")
    p.add_argument("--doc", help="only this doc_id")
    p.add_argument("--version", help="only this version")
    p.add_argument("--as-of", type=iso_date, help="validity date YYYY-MM-DD (default: today)")
    p.add_argument("--json", action="store_true", help="print a JSON array of hits")
    p.add_argument("--exact", action="store_true", help="scan every vector (skip the ANN index)")
    p.add_argument("--expand", action="store_true", help="also give each hit's parent unit")
    p.add_argument(
        "--min-score",
        type=cosine,
        help="drop hits whose cosine to the query is below this (default: the model's, or "
        "$TRECHO_MIN_SCORE; -1 keeps every hit; not with --mode fts)",
    )
    p.set_defaults(func=handlers["search"])

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
    p.set_defaults(func=handlers["eval"])

    for name, func, text in (
        ("backfill", handlers["backfill"], "fill the configured model's table (model change)"),
        ("drop-model", handlers["drop_model"], "drop --model's table and cache (not the active)"),
        ("status", handlers["status"], "what is live and indexed"),
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
    p.add_argument("--max-connections", type=int, default=2048, help="open connections (then 503)")
    timeout = "seconds a request (head and body) may take to arrive (then 408)"
    p.add_argument("--request-timeout", type=float, default=10.0, help=timeout)
    allow = "a Host name a loopback server also answers to (e.g. a proxy's); repeatable"
    p.add_argument("--allow-host", action="append", metavar="NAME", help=allow)
    p.set_defaults(func=handlers["serve"])

    p = sub.add_parser("mcp", parents=[common, limits], help="MCP server on stdio, for agents")
    p.set_defaults(func=handlers["mcp"])
    return parser
