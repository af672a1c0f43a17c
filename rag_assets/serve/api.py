"""The HTTP JSON API of `trecho serve` (FastAPI on uvicorn; OpenAPI docs at `/docs`).

Routes: `POST /search`, `GET /documents`, `GET /health`, and the MCP server's streamable
HTTP endpoint at `/mcp`. Every answer is JSON; every refusal is a 4xx with
`{"detail": "<what is wrong>"}`. On loopback every route refuses a foreign `Host` or
`Origin` (DNS rebinding, `HostCheck`). With a bearer token configured (`TRECHO_SERVE_TOKEN`)
those four require `Authorization: Bearer <token>`; `/docs` and `/openapi.json` stay open
(they describe, they do not read the index). `/docs` works offline: Swagger UI's script and
stylesheet are served from the `fastapi-offline` package at `/docs-assets/`, not a CDN.
Each request is logged as one JSON line on
the `trecho.access` logger (stderr).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_assets.core.hosts import is_loopback_host
from rag_assets.core.request import (
    RequestError,
    SearchRequest,
    describe,
    printable,
    search_request,
)
from rag_assets.serve.bodies import replaying, whole_body
from rag_assets.serve.boot import Answers
from rag_assets.serve.mcp_http import MCP_PATH, McpBodies
from rag_assets.serve.mcp_server import build_mcp, not_utf8, oversized

access_log = logging.getLogger("trecho.access")

SEARCH_BODY = {
    "required": True,
    "content": {"application/json": {"schema": SearchRequest.model_json_schema()}},
}
"""`POST /search`'s body in the OpenAPI document: a `SearchRequest`, which the route
checks itself (`search_request`, within the server's limits), as every edge does."""


class SearchAnswer(BaseModel):
    """The hits, each as `trecho search --json` prints it, and what the search used."""

    query: str
    mode: str
    k: int
    as_of: str
    model: str = Field(description="the model id whose table answered")
    min_score: float | None = Field(
        None, description="the lowest cosine a hit could have (None in mode fts)"
    )
    hits: list[dict[str, Any]] = Field(
        description="chunk_id, partition_key, doc_id, version, title, path (section), "
        "page_start, page_end, text, score (rank fusion), cosine, bm25, retrievers, ranks, "
        "... (+ parent_text)"
    )


class BodyLimit:
    """Refuse request bodies over `max_bytes` with 413, before the app reads them: the
    body is read here (declared by Content-Length or chunked) and handed on whole. A body
    of the JSON API that is not UTF-8 is refused here too, with the 422 docs/serve.md
    gives text that is not Unicode (MCP's endpoint answers its own parse error)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._refuse(scope, send)
            return
        body = await whole_body(receive, self.max_bytes)
        if body is None:  # the client left before the body came
            return
        if len(body) > self.max_bytes:
            await self._refuse(scope, send)
            return
        if not scope.get("path", "").startswith(MCP_PATH):  # MCP's: `McpBodies`
            try:
                too_deep = oversized(body.decode("utf-8"))
            except UnicodeDecodeError as exc:
                await self._refuse(scope, send, 422, not_utf8(body, exc.start))
                return
            if too_deep:  # refused before FastAPI's parser recurses into it
                await self._refuse(scope, send, 422, f"the body is refused unread: {too_deep}")
                return
        await self.app(scope, replaying(body, receive), send)

    async def _refuse(self, scope: Scope, send: Send, status: int = 413, detail: str = "") -> None:
        detail = detail or f"request body over {self.max_bytes} bytes"
        response = JSONResponse({"detail": detail}, status_code=status)
        await response(scope, _no_body, send)
        _log(scope, status, 0.0, {"error": detail})


class HostCheck:
    """On a loopback server, refuse a request whose `Host` is not one of `names` (421) or
    whose `Origin` is set and not one of them (403): a web page on another site, even one
    whose name resolves to 127.0.0.1 (DNS rebinding), cannot read the index through the
    user's browser. The same rule as the MCP endpoint's (`transport_security`)."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            host = headers.get(b"host", b"").decode("latin-1")
            origin = headers.get(b"origin")
            refusal = None
            if host_name(host) not in self.names:
                refusal = (421, f"Host {host!r} is not a name of this server")
            elif origin is not None and origin_name(origin.decode("latin-1")) not in self.names:
                refusal = (403, f"Origin {origin.decode('latin-1')!r} may not call this server")
            if refusal is not None:
                status, detail = refusal
                detail += f" (it answers to {', '.join(sorted(self.names))}; see --allow-host)"
                detail = printable(detail)
                await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)
                _log(scope, status, 0.0, {"error": detail})
                return
        await self.app(scope, receive, send)


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def served_names(host: str, allowed: Sequence[str] = ()) -> frozenset[str] | None:
    """The host names a server listening on `host` answers to: on loopback, the loopback
    names and `allowed` (`--allow-host`, e.g. a reverse proxy's name); None (any name)
    on another address, where a token is required anyway."""
    if not is_loopback_host(host):
        return None
    return LOOPBACK_NAMES | {host.lower()} | {name.lower().strip("[]") for name in allowed}


def host_name(host: str) -> str:
    """The name in a `Host` header (`localhost:8000` -> `localhost`, `[::1]:80` -> `::1`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def origin_name(origin: str) -> str | None:
    """The host name of an `Origin` header (`http://localhost:3000` -> `localhost`);
    None for `null` or another scheme than http(s)."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return None
    return host_name(rest.split("/", 1)[0])


def mcp_security(names: frozenset[str] | None) -> TransportSecuritySettings:
    """The MCP SDK's DNS-rebinding settings for the same `names` (None: off)."""
    if names is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [f"[{n}]" if ":" in n else n for n in sorted(names)]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for h in hosts for form in (h, f"{h}:*")],
        allowed_origins=[
            f"{scheme}://{form}"
            for h in hosts
            for scheme in ("http", "https")
            for form in (h, f"{h}:*")
        ],
    )


class AccessLog:
    """One access log line per request, once its answer is sent (a plain ASGI middleware:
    Starlette's `BaseHTTPMiddleware` would add a task and a stream to every request).
    Routes add fields to `request.state.log` (mode, k, hits, error)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        extra: dict[str, Any] = {}
        scope.setdefault("state", {})["log"] = extra
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            extra.setdefault("error", f"{type(exc).__name__}: {exc}")
            _log(scope, 500, (time.perf_counter() - start) * 1e3, extra)
            raise
        _log(scope, status, (time.perf_counter() - start) * 1e3, extra)


class McpAuth:
    """Require the bearer token on `/mcp` (the API routes check it themselves)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is not None and scope["type"] == "http" and scope["path"] == MCP_PATH:
            given = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not _token_matches(given.removeprefix("Bearer ").strip(), self.token):
                response = JSONResponse(
                    {"detail": UNAUTHORIZED}, status_code=401, headers=CHALLENGE
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


UNAUTHORIZED = "missing or wrong bearer token (send Authorization: Bearer <TRECHO_SERVE_TOKEN>)"
CHALLENGE = {"WWW-Authenticate": "Bearer"}


def _token_matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _log(scope: Scope, status: int, ms: float, extra: dict[str, Any]) -> None:
    client = scope.get("client")
    entry = {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "client": f"{client[0]}:{client[1]}" if client else None,
        "method": scope.get("method"),
        "path": scope.get("path"),
        "status": status,
        "ms": round(ms, 1),
        **extra,
    }
    access_log.info(json.dumps(entry, ensure_ascii=False))


DOCS_ASSETS = "/docs-assets"
"""Where Swagger UI's script, stylesheet and icon are served from (open, as `/docs`)."""


def _offline_docs(app: FastAPI) -> None:
    """`/docs`: Swagger UI from assets served by this server (the `fastapi-offline`
    package's copy of swagger-ui-dist), so the page renders where there is no internet,
    which is where an index often runs."""
    from importlib.resources import files

    from fastapi.staticfiles import StaticFiles

    static = files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(static)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
        )


def create_app(
    engine: Answers,
    token: str | None = None,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
) -> FastAPI:
    """The API over `engine`, with the MCP server at `/mcp`; `token`, when given, is
    required as a bearer token; `host` is where the server listens: on loopback, every
    route refuses a request whose Host or Origin is not a loopback name or one of
    `allowed_hosts` (DNS rebinding, `HostCheck`)."""
    names = served_names(host, allowed_hosts)
    mcp = build_mcp(engine)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, transport_security=mcp_security(names)
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    app = FastAPI(
        title="trecho",
        description="Search a trecho index: hybrid, vector or full-text retrieval over "
        "versioned documents, with citations (title, version, section path, pages). "
        "MCP (streamable HTTP) at /mcp.",
        version="1",
        lifespan=lifespan,
        docs_url=None,  # served by `_offline_docs`, from local assets
    )
    _offline_docs(app)
    bearer = HTTPBearer(auto_error=False)

    def authorize(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if token is not None and not _token_matches(
            credentials.credentials if credentials else None, token
        ):
            raise HTTPException(401, UNAUTHORIZED, headers=CHALLENGE)

    guarded = [Depends(authorize)]

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> JSONResponse:
        detail = printable(str(exc))
        request.state.log["error"] = detail
        return JSONResponse({"detail": detail}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json" and not kind.endswith("+json"):  # FastAPI read no JSON
            sent = f"sent as {kind!r}" if kind else "sent without a Content-Type"
            detail = printable(f"the body is {sent}; send JSON with Content-Type: application/json")
            status = 415
        else:
            detail, status = describe(exc.errors()), 422
        request.state.log["error"] = detail
        return JSONResponse({"detail": detail}, status_code=status)

    @app.post(
        "/search",
        response_model=SearchAnswer,
        dependencies=guarded,
        openapi_extra={"requestBody": SEARCH_BODY},
    )
    def search(body: dict[str, Any], request: Request) -> dict[str, Any]:
        """The k best chunks for a question, with citations (see `trecho search --json`);
        the body is a `SearchRequest`, checked once (`search_request`)."""
        asked = search_request(body, engine.limits)
        request.state.log.update(mode=asked.mode, k=asked.k, query_chars=len(asked.query))
        answer = engine.search(asked)
        request.state.log["hits"] = len(answer["hits"])
        return answer

    @app.get("/documents", dependencies=guarded)
    def documents() -> dict[str, Any]:
        """Every version search answers from: status, validity, in force today, chunks."""
        return engine.documents()

    @app.get("/health", dependencies=guarded)
    def health() -> dict[str, Any]:
        """The active model, its table's rows and index state."""
        return engine.health()

    app.router.routes.extend(mcp_app.routes)
    app.add_middleware(McpBodies)
    app.add_middleware(AccessLog)
    app.add_middleware(McpAuth, token=token)
    app.add_middleware(BodyLimit, max_bytes=engine.limits.max_body_bytes)
    if names is not None:
        app.add_middleware(HostCheck, names=names)
    return app
