"""A small Python client of `trecho serve`, for RAG applications (the standard library's
HTTP, and trecho's `SearchRequest`: a bad request is refused before it is sent).

    from rag_assets.serve.client import TrechoClient, context_block

    client = TrechoClient()      # TRECHO_URL, else http://127.0.0.1:8000; TRECHO_SERVE_TOKEN
    hits = client.search("qual o limite de vibração?", k=3)
    prompt = context_block(hits) + "\\n\\nQuestion: qual o limite de vibração?"

Each hit is a dict exactly as `trecho search --json` prints it; `citation(hit)` formats
where it comes from (title, version, section path, pages).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from rag_assets.core.request import Limits, SearchRequest, search_request


class TrechoError(RuntimeError):
    """The server refused a request (the message is its `detail`) or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


DEFAULT_URL = "http://127.0.0.1:8000"
"""Where `trecho serve` listens by default."""


def server_url(url: str | None = None) -> str:
    """The server to call: `url`, else TRECHO_URL, else `DEFAULT_URL`."""
    return url or os.environ.get("TRECHO_URL") or DEFAULT_URL


class TrechoClient:
    """Calls a running `trecho serve`: search, the documents list, health."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        limits: Limits | None = None,
    ) -> None:
        """`base_url` defaults to TRECHO_URL, else http://127.0.0.1:8000; `token` to
        TRECHO_SERVE_TOKEN (sent as a bearer token when set); `limits`: the server's, when
        it runs with other ones than the defaults (`trecho serve --max-k ...`)."""
        self.base_url = server_url(base_url).rstrip("/")
        self.token = token if token is not None else os.environ.get("TRECHO_SERVE_TOKEN")
        self.timeout = timeout
        self.limits = limits or Limits()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(
            self.base_url + path, data=data, headers=headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("detail", exc.reason)
            except (ValueError, AttributeError):
                detail = exc.reason
            raise TrechoError(f"{exc.code}: {detail}", exc.code) from None
        except urllib.error.URLError as exc:
            raise TrechoError(f"{self.base_url}: {exc.reason}") from None

    def search(self, query: str | SearchRequest, **fields: Any) -> list[dict[str, Any]]:
        """The hits of a search: a `SearchRequest`, or a query and the request's other
        fields (`k`, `mode`, `documents`, `versions`, `as_of`, `expand`, `min_score`,
        `model`), checked here by `search_request` within the client's limits, so a bad
        request is refused before it is sent. Only hits whose cosine is at least
        `min_score` (default: the server's) come back: an empty list means the documents
        hold no answer."""
        if isinstance(query, SearchRequest):
            request = query if not fields else search_request(query.fields() | fields, self.limits)
        else:
            request = search_request({"query": query, **fields}, self.limits)
        return list(self._call("POST", "/search", request.fields())["hits"])

    def documents(self) -> list[dict[str, Any]]:
        """Every version the server answers from (`GET /documents`)."""
        return list(self._call("GET", "/documents")["versions"])

    def health(self) -> dict[str, Any]:
        """The active model, rows and index state (`GET /health`)."""
        return dict(self._call("GET", "/health"))


def citation(hit: dict[str, Any]) -> str:
    """Where a hit comes from: title, version, section path and pages."""
    pages = f"p. {hit['page_start']}" + (
        f"-{hit['page_end']}" if hit["page_end"] != hit["page_start"] else ""
    )
    section = f", {hit['path']}" if hit.get("path") else ""
    return f"{hit['title'] or hit['doc_id']} ({hit['version']}){section}, {pages}"


def context_block(hits: Sequence[dict[str, Any]], max_parent_chars: int = 1500) -> str:
    """The retrieved passages numbered [1], [2], ... with their citations, ready to put in
    an LLM prompt; the model can then cite its sources by number.

    A hit fetched with `expand=True` gives its whole parent unit (the article, section or
    table around the chunk) when that is at most `max_parent_chars` long, else the chunk
    itself (a chunk at the top of a document has the whole document as its parent).
    """
    blocks = []
    for n, hit in enumerate(hits, start=1):
        parent = hit.get("parent_text") or ""
        text = parent if 0 < len(parent) <= max_parent_chars else hit.get("body") or hit["text"]
        blocks.append(f"[{n}] {citation(hit)}\n{text.strip()}")
    return "\n\n".join(blocks)
