"""The MCP server for agents (the official `mcp` SDK): `search_documents` and
`list_documents`, the same answers as `POST /search` and `GET /documents`.

Two transports: stdio (`trecho mcp`, an agent launches the process) and streamable HTTP
(`trecho serve` answers MCP at `/mcp`, next to the JSON API, one model load for both).
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from rag_assets.serve.engine import Engine, RequestError

INSTRUCTIONS = (
    "Search versioned documents (laws, manuals, policies) indexed by trecho. Call "
    "list_documents to see which documents and versions exist, then search_documents "
    "with a question; cite each hit by its title, version, section path and pages."
)


def build_mcp(engine: Engine) -> MCPServer:
    """An MCP server whose two tools answer from `engine`."""
    server = MCPServer("trecho", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool()
    def search_documents(
        query: str,
        k: int = 5,
        mode: Literal["hybrid", "vector", "fts"] = "hybrid",
        documents: list[str] | None = None,
        versions: list[str] | None = None,
        as_of: str | None = None,
        expand: bool = False,
        min_score: float | None = None,
    ) -> dict[str, Any]:
        """The k chunks that best answer `query`, among the versions in force on `as_of`
        (YYYY-MM-DD, default today). Each hit carries its citation: `title`, `version`,
        `path` (section), `page_start`-`page_end`, and `text`; `expand` adds the whole
        parent unit (`parent_text`). `documents`/`versions` restrict the search to those
        doc ids / version names (see list_documents). `mode`: hybrid (default), vector or
        fts (exact words). Only hits whose `cosine` to the query is at least `min_score`
        come back (default: the model's; -1 keeps every hit): no hit means the documents
        hold no answer, say so rather than guess."""
        try:
            return engine.search(query, k, mode, documents, versions, as_of, expand, min_score)
        except RequestError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    def list_documents() -> dict[str, Any]:
        """Every document version search answers from: doc_id, version, title, status,
        valid_from/valid_to, whether it is in force today, and its number of chunks."""
        return engine.documents()

    return server
