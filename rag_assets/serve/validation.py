"""What a search may ask for, checked once for the CLI (`trecho search`), the HTTP API
(`POST /search`) and MCP (`search_documents`), so the three refuse the same requests with
the same words.

Two steps, because the second needs the index: `check_request` (the fields' types, no
unknown field, the query is text with a word in it and within the size limit, `k` in
range, the date a date) and `check_in_index` (the documents and versions exist, the
query fits in what the model reads). A failure is a `RequestError` (a `UserError`: the
CLI prints it as one line, exit 2; the API answers its `status`; MCP a tool error).

Text that is not Unicode (a lone surrogate: JSON's `"\\ud800"` escape, or bytes that are
not UTF-8 in a command-line argument) is refused, never cleaned: a cleaned query would
search for something the user did not type. Every message this module writes is itself
valid text (`printable`), so a refusal never fails to be sent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.embedding.tokens import TokenCounter
from rag_assets.core.errors import UserError
from rag_assets.core.index import MODES


class RequestError(UserError, ValueError):
    """A request the server refuses; the message says what is wrong.

    `status` is the HTTP status it maps to: 422 for a malformed or out-of-range value,
    404 for a document or version the index does not hold, 413 for a query too long.
    """

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(printable(message))
        self.status = status


@dataclass(frozen=True)
class Limits:
    """What one request may ask for (`trecho serve --max-k/--max-query-chars/--max-body`;
    `trecho search` uses the defaults)."""

    max_k: int = 50
    max_query_chars: int = 2000
    max_body_bytes: int = 64 * 1024


class SearchRequest(BaseModel):
    """A search: the question, how many hits, how to retrieve them, and filters. Strict:
    no unknown field, and no value converted (`"k": true` or `"k": "3"` is refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)

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


@dataclass(frozen=True)
class Search:
    """A checked search: what the index is asked."""

    query: str
    k: int
    mode: str
    documents: list[str] | None
    versions: list[str] | None
    as_of: dt.date | None
    expand: bool
    min_score: float | None = None
    """As asked (None: the index's default, `Index.min_score_for`)."""


def printable(text: str) -> str:
    """`text` with any lone surrogate written as its escape (`\\ud800`): text that can be
    encoded, so a message quoting a bad value can still be sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(errors: Iterable[Mapping[str, Any]]) -> str:
    """Validation errors (pydantic's or FastAPI's) as one line: `field: what is wrong`,
    joined by `; ` (the API's and MCP's words for a malformed request)."""
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    return printable("; ".join(parts) or "invalid request")


def parse_search(arguments: Mapping[str, Any]) -> SearchRequest:
    """A search's fields (a JSON object's) as a `SearchRequest`; RequestError naming
    each wrong or unknown field otherwise."""
    try:
        return SearchRequest.model_validate(dict(arguments))
    except ValidationError as exc:
        raise RequestError(describe(exc.errors())) from None


def check_text(text: str, what: str = "query") -> None:
    """Refuse text holding a lone surrogate (not Unicode: no UTF-8 encoding exists)."""
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udfff":
            raise RequestError(
                f"{what} is not valid text: character {i + 1} is a lone surrogate "
                f"(U+{ord(ch):04X}), which no Unicode text holds: send the {what} as "
                "UTF-8 text"
            )


def check_query(query: str, max_chars: int) -> str:
    """The query stripped; RequestError when it is not text, is empty, holds no word
    (letter or digit) or is over `max_chars` characters."""
    check_text(query)
    if not query.strip():
        raise RequestError("query is empty: give the question to search for")
    if len(query) > max_chars:
        raise RequestError(
            f"query is {len(query)} characters long; the limit is {max_chars}", status=413
        )
    if not any(ch.isalnum() for ch in query):
        raise RequestError(f"query {query.strip()!r} has no word to search for")
    return query.strip()


def check_request(request: SearchRequest, limits: Limits) -> Search:
    """Every check that needs no index: the query, `k` within 1..`limits.max_k`, the
    mode, the date, and the filters' text."""
    query = check_query(request.query, limits.max_query_chars)
    k = request.k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limits.max_k:
        raise RequestError(f"k must be between 1 and {limits.max_k}, got {k!r}")
    if request.mode not in MODES:
        raise RequestError(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
    for what, names in (("document id", request.documents), ("version", request.versions)):
        for name in names or ():
            check_text(name, what)
    floor = request.min_score
    if floor is not None and not -1 <= floor <= 1:
        raise RequestError(f"min_score must be a cosine from -1 to 1, got {floor!r}")
    day = None
    if request.as_of is not None:
        try:
            day = dt.date.fromisoformat(request.as_of)
        except ValueError:
            raise RequestError(f"as_of {request.as_of!r} is not a date (YYYY-MM-DD)") from None
    return Search(
        query, k, request.mode, request.documents, request.versions, day, request.expand, floor
    )


def check_in_index(
    search: Search, held: Iterable[tuple[str, str]], embedder: Embedder | None
) -> Search:
    """The checks against the index: every document and version asked for is among
    `held` ((doc_id, version) pairs: 404 otherwise), and, unless the search is full-text,
    the query fits in what `embedder`'s model reads (no embedder: not checked)."""
    pairs = list(held)
    if search.documents is not None:
        known = {doc for doc, _ in pairs}
        unknown = [d for d in search.documents if d not in known]
        if unknown:
            raise RequestError(
                f"unknown document {', '.join(map(repr, unknown))}; the index holds "
                f"{', '.join(sorted(known)) or 'nothing yet'}",
                status=404,
            )
    if search.versions is not None:
        docs = search.documents
        held_versions = {v for doc, v in pairs if docs is None or doc in docs}
        unknown = [v for v in search.versions if v not in held_versions]
        if unknown:
            scope = f" of {', '.join(docs)}" if docs else ""
            raise RequestError(
                f"unknown version {', '.join(map(repr, unknown))}{scope}; the index holds "
                f"{', '.join(sorted(held_versions)) or 'none'}",
                status=404,
            )
    if search.mode != "fts" and embedder is not None:
        check_tokens(embedder, search.query)
    return search


def min_score_floor(index: Any, search: Search) -> float | None:
    """The `min_score` the search applies: the one asked, else the index's default
    (`Index.min_score_for`); None in mode fts, where one asked is refused."""
    try:
        return index.min_score_for(search.mode, search.min_score)
    except UserError as exc:
        raise RequestError(str(exc)) from None


def check_tokens(embedder: Embedder, query: str) -> None:
    """Refuse a query longer than the model reads (the rest would silently be ignored).

    A query too short to reach the limit is not tokenized (a fresh `trecho search` then
    builds no tokenizer): a token holds at least one character, or a word's leading
    marker, so a text of n characters makes at most 2n tokens, plus the special ones."""
    prefix = embedder.effective_query_prefix
    if 2 * (len(query) + len(prefix)) + 2 <= embedder.max_tokens:
        return
    counter = TokenCounter(
        embedder.info.tokenizer, embedder.max_tokens, embedder.effective_query_prefix
    )
    tokens = counter.count(query)
    if tokens > embedder.max_tokens:
        raise RequestError(
            f"query is {tokens} tokens long; model {embedder.model_id} reads at most "
            f"{embedder.max_tokens} (the rest would be ignored): shorten it, or use "
            "mode fts"
        )


def search_fields(
    query: str,
    k: int = 5,
    mode: str = "hybrid",
    documents: Sequence[str] | None = None,
    versions: Sequence[str] | None = None,
    as_of: str | dt.date | None = None,
    expand: bool = False,
    min_score: float | None = None,
) -> dict[str, Any]:
    """A search's arguments as the JSON object `parse_search` reads (a date as text)."""
    fields: dict[str, Any] = {"query": query, "k": k, "mode": mode, "expand": expand}
    if min_score is not None:
        fields["min_score"] = min_score
    if documents is not None:
        fields["documents"] = list(documents) if not isinstance(documents, str) else documents
    if versions is not None:
        fields["versions"] = list(versions) if not isinstance(versions, str) else versions
    if as_of is not None:
        fields["as_of"] = as_of.isoformat() if isinstance(as_of, dt.date) else as_of
    return fields
