"""The MCP endpoint's bodies checked before the SDK reads them (`McpBodies`), so that
MCP over HTTP answers what MCP over stdio answers, in the same words (`mcp_server.not_text`):
a body that is not UTF-8 or not JSON, JSON nested too deep, JSON that is not a JSON-RPC
message, an id that is no integer or string (the SDK read `"id": {"a": 1}` as a
notification and answered a bodyless 202). Each is refused with a JSON-RPC error (null
id) and status 400; a body sent with another Content-Type than JSON gets 415 saying so.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from rag_assets.core.request import printable
from rag_assets.serve.bodies import replaying, whole_body
from rag_assets.serve.mcp_server import not_text, not_utf8

MCP_PATH = "/mcp"


class McpBodies:
    """Check each `POST /mcp` body (read whole: `BodyLimit` has bounded it) as stdio
    checks a line, and answer the ones the SDK would drop, mis-read or parse unbounded
    with a JSON-RPC error; the rest go on to the SDK unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != MCP_PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await whole_body(receive, None)
        if body is None:  # the client left before the body came
            return
        refusal = _refusal(dict(scope["headers"]).get(b"content-type"), bytes(body))
        if refusal is not None:
            status, answer = refusal
            logged = scope.setdefault("state", {}).setdefault("log", {})  # (`AccessLog`'s)
            logged["error"] = answer["error"]["message"]
            await JSONResponse(answer, status_code=status)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


def _refusal(content_type: bytes | None, body: bytes) -> tuple[int, dict] | None:
    """(status, JSON-RPC error) for a body the SDK should not read; None for one it may."""
    kind = (content_type or b"").split(b";", 1)[0].strip().decode("latin-1")
    if "application/json" not in (part.strip() for part in kind.split(",")):  # as the SDK
        sent = f"sent as {kind!r}" if kind else "sent without a Content-Type"
        message = f"the request body is {sent}; MCP takes JSON: send Content-Type: application/json"
        return 415, _error(-32600, printable(message))  # the SDK's code for it
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return 400, _error(-32700, not_utf8(body, exc.start))
    answer = not_text(text)
    if answer is not None:
        return 400, answer.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return None


def _error(code: int, message: str) -> dict:
    """A JSON-RPC error answer with a null id."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
