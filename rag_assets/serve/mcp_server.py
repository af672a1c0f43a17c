"""The MCP server for agents (the official `mcp` SDK): `search_documents` and
`list_documents`, the same answers as `POST /search` and `GET /documents`.

Two transports: stdio (`trecho mcp`, an agent launches the process) and streamable HTTP
(`trecho serve` answers MCP at `/mcp`, next to the JSON API, one model load for both).

A tool's arguments are checked by `search_request` before the SDK reads them (strict
types, no unknown argument), so MCP refuses what `POST /search` and `trecho search`
refuse, with the same words. Over stdio and over HTTP (`serve.mcp_http`), every line
the SDK alone would drop or read as a notification, leaving the client waiting, is
answered with a JSON-RPC error (`not_text`): bytes that are not UTF-8, a line that is
not JSON, JSON nested too deep or too long, JSON that is not a request (`[]`, `42`,
`{}`), a request holding a lone surrogate (`"\\ud800"`: JSON, but not Unicode text), an
id that is no integer or string (`"id": {"a": 1}`), with a null id where the id cannot
be echoed.

What an agent reads (each tool's and parameter's description, each refusal) is one
line of plain text written for it (no docstring indentation); a refusal says what is
wrong in the words `POST /search` uses, the same whether the arguments or the index
refused it (no `Error executing tool search_documents:` before some of them), and
names a tool, never an HTTP route.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from rag_assets.core.lake import json_kind
from rag_assets.core.request import RequestError, SearchRequest, printable, search_request
from rag_assets.serve.boot import Answers

INSTRUCTIONS = (
    "Search versioned documents (laws, manuals, policies) indexed by trecho. Call "
    "list_documents to see which documents and versions exist, then search_documents "
    "with a question; cite each hit by its title, version, section path and pages."
)


def _plain(text: str) -> str:
    """A description as one line of plain text (no docstring indentation or wrapping)."""
    return " ".join(text.split())


SEARCH = _plain(
    """
    The k chunks that best answer a question, among the document versions in force on a
    date (default today). Each hit carries its citation: title, version, path (section),
    page_start-page_end, and text; with expand, parent_text is the whole parent unit (the
    article, section, or a table's rows each read under its header). Only hits whose
    cosine to the query is at least min_score come back: no hit means the documents hold
    no answer, so say so rather than guess.
    """
)
LIST = _plain(
    """
    Every document version search answers from: doc_id, version, title, status,
    valid_from/valid_to, whether it is in force today, and its number of chunks.
    """
)
ROUTES = {"POST /search": "search_documents", "GET /documents": "list_documents"}
"""The JSON API's routes, as the MCP tools that give the same answer."""


class Refusal(ToolError):
    """A request refused, as an agent reads it: the words of `POST /search`'s refusal,
    with no prefix (`TrechoMCP.call_tool` takes off the one the SDK puts before an error
    raised within a tool)."""


def _refusal(exc: RequestError) -> Refusal:
    """A refusal for an agent: what is wrong, any HTTP route the engine's message points
    to named as its tool."""
    message = str(exc)
    for route, name in ROUTES.items():
        message = message.replace(route, name)
    return Refusal(message)


class TrechoMCP(MCPServer):
    """The SDK's server, with each call's arguments checked first (module doc): a
    search's by `search_request`, the one check of every edge, within the engine's
    limits; the tool then gets the `SearchRequest` itself."""

    def __init__(self, engine: Answers, **options: Any) -> None:
        super().__init__("trecho", **options)
        self.engine = engine

    async def list_tools(self) -> list[Any]:
        """The tools, `search_documents` taking a `SearchRequest`'s fields."""
        tools = await super().list_tools()
        for tool in tools:
            if tool.name == "search_documents":
                tool.input_schema = SEARCH_ARGUMENTS
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Refuse arguments `POST /search` would refuse (a tool error saying why), then
        call the tool; its refusals (an unknown document) read as these do, without the
        SDK's `Error executing tool <name>: ` before them."""
        if name == "search_documents":
            try:
                arguments = {"request": search_request(arguments, self.engine.limits)}
            except RequestError as exc:
                raise _refusal(exc) from exc
        elif name == "list_documents" and arguments:
            given = ", ".join(map(repr, arguments))
            raise Refusal(printable(f"list_documents takes no arguments, got {given}"))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:  # a refusal from within a tool: as the others, no prefix
            if isinstance(exc.__cause__, Refusal):
                raise exc.__cause__ from None
            raise


SEARCH_ARGUMENTS = SearchRequest.model_json_schema()
"""What `search_documents` takes: the fields of a `SearchRequest`."""


def build_mcp(engine: Answers) -> MCPServer:
    """An MCP server whose two tools answer from `engine`."""
    server = TrechoMCP(engine, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(description=SEARCH)
    def search_documents(request: SearchRequest) -> dict[str, Any]:
        try:
            return engine.search(request)
        except RequestError as exc:
            raise _refusal(exc) from exc

    @server.tool(description=LIST)
    def list_documents() -> dict[str, Any]:
        try:
            return engine.documents()
        except RequestError as exc:
            raise _refusal(exc) from exc

    return server


def run_stdio(server: MCPServer) -> None:
    """Serve `server` over stdin/stdout until the client closes stdin."""
    anyio.run(_serve_stdio, server)


async def _serve_stdio(server: MCPServer) -> None:
    # bytes that are not UTF-8 are kept as lone surrogates (not replaced, which would
    # search for U+FFFD), so that `not_text` refuses their line, as HTTP refuses them
    sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape")
    lines = AnsweredLines(anyio.wrap_file(sys.stdin))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_on(write_stream)
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())


class AnsweredLines:
    """stdin's lines for the SDK's stdio reader, less those it would drop without an
    answer or read as a notification, which are answered here (`not_text`): bytes that
    are not UTF-8 and a line that is not JSON (JSON-RPC's parse error, -32700, null id,
    as over HTTP), JSON holding a lone surrogate (which the SDK's parser refuses: not
    Unicode), JSON that is no JSON-RPC message (`[]`, `42`, `{}`) and a message whose id
    is no integer or string (invalid request, -32600). Every line gets an answer: a
    client never waits for ever."""

    def __init__(self, lines: Any) -> None:
        self.lines = lines
        self.ready = anyio.Event()
        self.write: Any = None

    def answer_on(self, write_stream: Any) -> None:
        """Where the answers go: the transport's stream to stdout."""
        self.write = write_stream
        self.ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            refusal = not_text(line)
            if refusal is None:
                yield line
                continue
            await self.ready.wait()
            await self.write.send(SessionMessage(refusal))


def not_text(line: str) -> mcp_types.JSONRPCError | None:
    """The error answer to `line` when the SDK would leave it unanswered (it drops every
    line it cannot read as a JSON-RPC message); None for a line it reads, or a blank one.

    - bytes that are not UTF-8 (read as lone surrogates, `surrogateescape`): parse
      error (-32700), null id, naming the first bad byte, as HTTP does;
    - not JSON at all: parse error (-32700), null id (no id can be read from it);
    - JSON holding a lone surrogate: invalid params (-32602) naming it;
    - any other JSON that is not a JSON-RPC message (`[]`, `42`, `{}`, a request
      without `jsonrpc`): invalid request (-32600);
    - a message with an id that is no integer or string (`{"a": 1}`, `1.5`, `null`,
      `true`), which the SDK reads as a notification and never answers: invalid
      request (-32600), null id;
    - a line over `MAX_LINE_CHARS` or JSON nested over `MAX_NESTING` levels: invalid
      request (-32600), null id, refused before any parser reads it.

    The answer carries the line's id when it has one that can be echoed (an integer, or
    a string that is text), else null, as JSON-RPC says for an id that cannot be read.
    """
    undecoded = _undecoded(line)
    if undecoded:
        return _error(mcp_types.PARSE_ERROR, undecoded)
    too_big = oversized(line)
    if too_big:
        return _error(mcp_types.INVALID_REQUEST, too_big)
    try:
        read = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        read = None
    if read is not None:  # a message; a notification must not carry an id the SDK ignores
        if not isinstance(read, mcp_types.JSONRPCNotification):
            return None
        bad = _bad_id(json.loads(line))
        return (
            _error(mcp_types.INVALID_REQUEST, f"not a JSON-RPC 2.0 request: {bad}") if bad else None
        )
    try:
        message = json.loads(line)
    except ValueError as exc:
        if not line.strip():
            return None  # a blank line: nothing was sent
        error = mcp_types.ErrorData(
            code=mcp_types.PARSE_ERROR, message=f"the line is not JSON: {printable(str(exc))}"
        )
        return mcp_types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    text = json.dumps(message, ensure_ascii=False)
    bad = next((ch for ch in text if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        error = mcp_types.ErrorData(
            code=mcp_types.INVALID_PARAMS,
            message=f"the request is not valid text: it holds a lone surrogate "
            f"(U+{ord(bad):04X}), which no Unicode text holds; send UTF-8 text",
        )
    else:
        error = mcp_types.ErrorData(
            code=mcp_types.INVALID_REQUEST,
            message=f"not a JSON-RPC 2.0 request: {_what(message)}",
        )
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=_echoed_id(message), error=error)


MAX_LINE_CHARS = 1_000_000
"""A line longer than this is refused unread: no request to a search tool is that long."""
MAX_NESTING = 64
"""JSON nested deeper than this is refused before any parser recurses into it (Python's
`json` gives up near 1,000 levels with a RecursionError, which ended the server)."""


def oversized(line: str) -> str:
    """Why a line is refused before it is parsed (too long, nested too deep); "" if not."""
    if len(line) > MAX_LINE_CHARS:
        return f"the line is {len(line):,} characters long, over the limit of {MAX_LINE_CHARS:,}"
    if line.count("[") + line.count("{") <= MAX_NESTING:  # no deeper than its openers
        return ""
    depth = deepest = 0
    quoted = escaped = False
    for char in line:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_NESTING:
                return f"the JSON nests deeper than {MAX_NESTING} levels, the limit"
        elif char in "]}":
            depth -= 1
    return ""


def _error(code: int, message: str) -> mcp_types.JSONRPCError:
    """A JSON-RPC error answer with a null id (none can be read from what was sent)."""
    error = mcp_types.ErrorData(code=code, message=message)
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=None, error=error)


def not_utf8(data: bytes | bytearray, at: int, what: str = "the request body") -> str:
    """Why `data` (a request body, a line) that is not UTF-8 is refused, naming its first
    bad byte (at offset `at`): the words of HTTP and stdio alike."""
    return (
        f"{what} is not UTF-8 text (byte 0x{data[at]:02x} at byte {at}); send JSON encoded as UTF-8"
    )


def _undecoded(line: str) -> str:
    """Why a stdin line holding bytes that are not UTF-8 (kept as lone surrogates by
    `surrogateescape`: valid UTF-8 never decodes to one) is refused; "" if it holds none."""
    try:
        line.encode("utf-8")
        return ""
    except UnicodeEncodeError as exc:  # at the first lone surrogate: a byte kept
        first = exc.start
    data = line.encode("utf-8", "surrogateescape")
    return not_utf8(data, len(line[:first].encode("utf-8", "surrogateescape")), "the line")


def _bad_id(message: Any) -> str:
    """What is wrong with the id of `message` (a JSON object) when it has one that is no
    integer or string (JSON-RPC's ids; MCP's never null); "" when it is fine or absent."""
    if not isinstance(message, dict) or "id" not in message:
        return ""
    request_id = message["id"]
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return ""
    shown = printable(json.dumps(request_id, ensure_ascii=False))
    shown = "" if request_id is None else f" ({shown[:37]}{'...' if len(shown) > 37 else ''})"
    return f"its id is {json_kind(request_id)}{shown}; an id is an integer or a string"


def _echoed_id(message: Any) -> int | str | None:
    """The id of `message` as an answer may carry it: an integer, or a string that is
    text (a lone surrogate cannot be written back); None otherwise."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if isinstance(request_id, str) and printable(request_id) != request_id:
        return None
    return request_id


def _what(message: Any) -> str:
    """Why `message` (JSON, not a JSON-RPC message) is not a request, in a few words."""
    if not isinstance(message, dict):
        return f"the line is {json_kind(message)}, not an object"
    if message.get("jsonrpc") != "2.0":
        return 'it lacks "jsonrpc": "2.0"'
    if "method" not in message and "result" not in message and "error" not in message:
        return 'it has no "method"'
    if bad := _bad_id(message):
        return bad
    return "a member has the wrong type or is not allowed"
