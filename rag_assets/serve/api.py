"""The HTTP JSON API of `trecho serve` (FastAPI on uvicorn; OpenAPI docs at `/docs`).

Routes: `POST /search`, `GET /documents`, `GET /health`, and the MCP server's streamable
HTTP endpoint at `/mcp`. Every answer is JSON; every refusal is a 4xx with
`{"detail": "<what is wrong>"}`. With a bearer token configured (`TRECHO_SERVE_TOKEN`)
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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_assets.serve.engine import Engine, RequestError
from rag_assets.serve.mcp_server import build_mcp

access_log = logging.getLogger("trecho.access")


class SearchBody(BaseModel):
    """A search: the question, how many hits, how to retrieve them, and filters."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="the question, in the documents' language")
    k: int = Field(5, description="how many hits (1 to the server's --max-k, default 50)")
    mode: Literal["hybrid", "vector", "fts"] = Field(
        "hybrid", description="hybrid (vector + full-text, fused by RRF), vector or fts"
    )
    documents: list[str] | None = Field(None, description="only these doc ids")
    versions: list[str] | None = Field(None, description="only these versions (e.g. v7)")
    as_of: str | None = Field(
        None, description="validity date YYYY-MM-DD: versions in force that day (default today)"
    )
    expand: bool = Field(False, description="add each hit's whole parent unit (parent_text)")
    min_score: float | None = Field(
        None,
        description="drop hits whose cosine to the query is below this, -1 to 1 (default: "
        "the model's, or TRECHO_MIN_SCORE; -1 keeps every hit; not with mode fts): no hit "
        "means the documents hold no answer",
    )


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
    """Refuse request bodies over `max_bytes` with 413, before the app reads them."""

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
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        detail = f"request body over {self.max_bytes} bytes"
        response = JSONResponse({"detail": detail}, status_code=413)
        await response(scope, _no_body, send)
        _log(scope, 413, 0.0, {"error": detail})


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
        except _TooLarge:  # BodyLimit answers and logs it
            raise
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
        if self.token is not None and scope["type"] == "http" and scope["path"] == "/mcp":
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


class _TooLarge(Exception):
    pass


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


def create_app(engine: Engine, token: str | None = None, host: str = "127.0.0.1") -> FastAPI:
    """The API over `engine`, with the MCP server at `/mcp`; `token`, when given, is
    required as a bearer token; `host` is where the server listens (on loopback, MCP
    refuses requests whose Host or Origin is not loopback: DNS rebinding)."""
    mcp = build_mcp(engine)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp", host=host)

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
        request.state.log["error"] = str(exc)
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
        detail = "; ".join(parts) or "invalid request"
        request.state.log["error"] = detail
        return JSONResponse({"detail": detail}, status_code=422)

    @app.post("/search", response_model=SearchAnswer, dependencies=guarded)
    def search(body: SearchBody, request: Request) -> dict[str, Any]:
        """The k best chunks for a question, with citations (see `trecho search --json`)."""
        request.state.log.update(mode=body.mode, k=body.k, query_chars=len(body.query))
        answer = engine.search(
            body.query,
            k=body.k,
            mode=body.mode,
            documents=body.documents,
            versions=body.versions,
            as_of=body.as_of,
            expand=body.expand,
            min_score=body.min_score,
        )
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
    app.add_middleware(AccessLog)
    app.add_middleware(McpAuth, token=token)
    app.add_middleware(BodyLimit, max_bytes=engine.limits.max_body_bytes)
    return app
