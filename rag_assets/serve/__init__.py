"""`trecho serve` (HTTP JSON API + MCP at /mcp) and `trecho mcp` (MCP on stdio): the index
as a long-running service, the model loaded once. See docs/serve.md.

Importing this package is light (no LanceDB, torch or model): a server answers before
its engine has loaded (`serve.boot.StartingEngine`); `Engine` is imported on first use."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag_assets.core.faces import lazy_names
from rag_assets.core.request import Limits, RequestError, SearchRequest, search_request
from rag_assets.serve.connections import ConnectionLimits
from rag_assets.serve.exposure import TOKEN_ENV, query_threads

if TYPE_CHECKING:
    from rag_assets.serve.boot import Answers
    from rag_assets.serve.engine import Engine

__all__ = [
    "ConnectionLimits",
    "Engine",
    "Limits",
    "RequestError",
    "SearchRequest",
    "TOKEN_ENV",
    "query_threads",
    "run_http",
    "run_stdio",
    "search_request",
]


# `Engine`, imported when first asked for (it brings LanceDB and the index)
__getattr__ = lazy_names(__name__, {"Engine": "rag_assets.serve.engine"})


def _access_logs() -> None:
    """Access log lines (JSON) to stderr, one per request, nothing else added."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("trecho.access")
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False


def run_http(
    engine: Answers,
    host: str,
    port: int,
    token: str | None,
    connections: ConnectionLimits | None = None,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Serve the JSON API and MCP (streamable HTTP) until interrupted, within
    `connections` (serve/connections.py: connection cap, request deadline, head size);
    on loopback, only to the Host names of loopback and `allowed_hosts`."""
    import uvicorn

    from rag_assets.serve.api import create_app
    from rag_assets.serve.connections import fit_open_files, uvicorn_options

    _access_logs()
    app = create_app(engine, token=token, host=host, allowed_hosts=allowed_hosts)
    limits = fit_open_files(connections or ConnectionLimits())
    options = uvicorn_options(limits)
    _begin_loading(engine)
    uvicorn.run(app, host=host, port=port, access_log=False, log_level="warning", **options)


def run_stdio(engine: Answers) -> None:
    """Serve MCP over stdin/stdout until the client closes it."""
    from rag_assets.serve.mcp_server import build_mcp
    from rag_assets.serve.mcp_server import run_stdio as serve_stdio

    server = build_mcp(engine)
    _begin_loading(engine)
    serve_stdio(server)


def _begin_loading(engine: Answers) -> None:
    """Start a `StartingEngine`'s load once the server's own code is imported, just
    before it listens: the two would otherwise share the interpreter (one core at a
    time) and the first answer would wait for both."""
    from rag_assets.serve.boot import StartingEngine

    if isinstance(engine, StartingEngine):
        engine.start()
