"""`trecho serve`, `mcp` and `ui`: the commands that run until stopped."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rag_assets.cli.common import db_of, err, lake_of, switch_named
from rag_assets.core.lake import LakeError


def engine_of(args: argparse.Namespace) -> Any:
    """The search engine of `serve` and `mcp` (`serve.boot.start_engine`): checked now,
    loading in the background while the server already answers."""
    from rag_assets.serve import Limits
    from rag_assets.serve.boot import start_engine

    lake = lake_of(args)
    limits = Limits(args.max_k, args.max_query_chars, args.max_body)
    prompts = (args.query_prefix, args.passage_prefix)
    configured = args.settings.embedder(args.model, *prompts, server=True)
    return start_engine(
        args.settings,
        lake,
        db_of(args, lake),
        limits,
        configured,
        threads=args.threads,
        query_cache=args.query_cache,
        say=lambda s: err(f"trecho: {s}"),
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
    engine = engine_of(args)
    required = ", bearer token required" if token else ""
    err(f"trecho: serving http://{args.host}:{args.port} (docs /docs, MCP /mcp{required})")
    run_http(engine, args.host, args.port, token, connections, args.allow_host or ())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdin/stdout (an agent launches this command)."""
    from rag_assets.serve import run_stdio

    run_stdio(engine_of(args))
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    """Start the Dagster UI on the lake's instance (DAGSTER_HOME, else `<lake>/.dagster`)
    with its `dagster.yaml` written first; runs until Ctrl-C or SIGTERM."""
    from rag_assets.cli.ui import run_ui

    lake = lake_of(args)
    home = Path(args.settings.dagster_home or lake.dagster_home)
    given = {
        "TRECHO_MODEL": args.model,
        "TRECHO_QUERY_PREFIX": args.query_prefix,
        "TRECHO_PASSAGE_PREFIX": args.passage_prefix,
    }
    model = {name: value for name, value in given.items() if value is not None}
    if (switched := switch_named(args, lake)) is not None:  # the lake's model from now on
        err(f"trecho ui: {switched}")
    return run_ui(str(lake.root), home, model, args.host, args.port, err)
