"""The MCP server for agents (the official `mcp` SDK): `search_documents` and
`list_documents`, the same answers as `POST /search` and `GET /documents`.

Two transports: stdio (`trecho mcp`, an agent launches the process) and streamable HTTP
(`trecho serve` answers MCP at `/mcp`, next to the JSON API, one model load for both).
What an agent reads (each tool's and parameter's description, each refusal) is plain
one line of plain text written for it (no docstring indentation), and a refusal names
the tool (`Error executing tool search_documents: ...`), never an HTTP route.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from rag_assets.serve.engine import Engine, RequestError

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


def _refusal(exc: RequestError) -> ToolError:
    """A refusal for an agent (the SDK puts `Error executing tool <name>: ` before it):
    what is wrong, any HTTP route the engine's message points to named as its tool."""
    message = str(exc)
    for route, name in ROUTES.items():
        message = message.replace(route, name)
    return ToolError(message)


def build_mcp(engine: Engine) -> MCPServer:
    """An MCP server whose two tools answer from `engine`."""
    server = MCPServer("trecho", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(description=SEARCH)
    def search_documents(
        query: Annotated[str, Field(description="the question, in the documents' language")],
        k: Annotated[int, Field(description="how many hits (1 to the server's --max-k)")] = 5,
        mode: Annotated[
            Literal["hybrid", "vector", "fts"],
            Field(description="hybrid (vector + full text), vector, or fts (exact words)"),
        ] = "hybrid",
        documents: Annotated[
            list[str] | None, Field(description="only these doc ids (see list_documents)")
        ] = None,
        versions: Annotated[
            list[str] | None, Field(description="only these versions, e.g. v7")
        ] = None,
        as_of: Annotated[
            str | None,
            Field(description="validity date YYYY-MM-DD: the versions in force that day"),
        ] = None,
        expand: Annotated[
            bool, Field(description="add each hit's whole parent unit as parent_text")
        ] = False,
        min_score: Annotated[
            float | None,
            Field(
                description="lowest cosine to the query a hit may have, -1 to 1 (default: "
                "the model's; -1 keeps every hit; not with mode fts)"
            ),
        ] = None,
    ) -> dict[str, Any]:
        try:
            return engine.search(query, k, mode, documents, versions, as_of, expand, min_score)
        except RequestError as exc:
            raise _refusal(exc) from exc

    @server.tool(description=LIST)
    def list_documents() -> dict[str, Any]:
        try:
            return engine.documents()
        except RequestError as exc:
            raise _refusal(exc) from exc

    return server
