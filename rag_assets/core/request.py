"""One search, as every edge asks it: `SearchRequest`, built and checked once by
`search_request` (HTTP body, MCP arguments, CLI flags, client call), then carried as it
is to the index (`Index.search`); nothing downstream checks it again.

Two steps, because the second needs the index: `search_request` (the fields' types, no
unknown field, the query is text with a word in it and within the size limit, `k` in
range, the date a date, `min_score` a cosine) and `check_in_index` (the documents and
versions exist, the query fits in what the model reads, the `min_score` the index
applies when none is asked). A failure is a `RequestError` (a `UserError`: the CLI
prints it as one line, exit 2; the API answers its `status`; MCP a tool error). The
limits of a request are `Limits`, defined here once (`trecho serve --max-k ...`).

Text that is not Unicode (a lone surrogate: JSON's `"\\ud800"` escape, or bytes that are
not UTF-8 in a command-line argument) is refused, never cleaned: a cleaned query would
search for something the user did not type. Every message this module writes is itself
valid text (`printable`), so a refusal never fails to be sent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from rag_assets.core.errors import UserError

if TYPE_CHECKING:
    from rag_assets.core.embedding import Embedder

Mode = Literal["hybrid", "vector", "fts"]
MODES: tuple[str, ...] = ("hybrid", "vector", "fts")


@dataclass(frozen=True)
class Limits:
    """What one request may ask for: the one definition of the search limits
    (`trecho serve --max-k/--max-query-chars/--max-body` change them; `trecho search`
    and the client use these defaults)."""

    max_k: int = 50
    max_query_chars: int = 2000
    max_body_bytes: int = 64 * 1024


class RequestError(UserError, ValueError):
    """A request refused; the message says what is wrong.

    `status` is the HTTP status it maps to: 422 for a malformed or out-of-range value,
    404 for a document or version the index does not hold, 413 for a query too long.
    """

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(printable(message))
        self.status = status


TOO_LONG = "too_long"
"""The error type of a query over the limit (answered 413)."""


def _refuse(message: str, kind: str = "request") -> PydanticCustomError:
    return PydanticCustomError(kind, printable(message))


class SearchRequest(BaseModel):
    """A search: the question, how many hits, how to retrieve them, filters, the lowest
    cosine, the parent text, the model. Strict: no unknown field, and no value converted
    (`"k": true` or `"k": "3"` is refused). Built by `search_request` (or the constructor,
    default limits), never changed after: frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    query: str = Field(description="the question, in the documents' language")
    k: int = Field(5, description="how many hits (1 to the server's --max-k, default 50)")
    mode: Mode = Field(
        "hybrid", description="hybrid (vector + full text, fused by rank), vector or fts"
    )
    documents: list[str] | None = Field(None, description="only these doc ids")
    versions: list[str] | None = Field(None, description="only these versions (e.g. v7)")
    as_of: dt.date | None = Field(
        None, description="validity date YYYY-MM-DD: versions in force that day (default today)"
    )
    expand: bool = Field(False, description="add each hit's whole parent unit (parent_text)")
    min_score: float | None = Field(
        None,
        description="drop hits whose cosine to the query is below this, -1 to 1 (default: "
        "the model's, or TRECHO_MIN_SCORE; -1 keeps every hit; not with mode fts): no hit "
        "means the documents hold no answer",
    )
    model: str | None = Field(
        None, description="the model whose table answers (default: the one search uses)"
    )

    @field_validator("query")
    @classmethod
    def _query(cls, query: str, info: ValidationInfo) -> str:
        limits = _limits(info)
        check_text(query)
        if not query.strip():
            raise _refuse("query is empty: give the question to search for")
        if len(query) > limits.max_query_chars:
            raise _refuse(
                f"query is {len(query)} characters long; the limit is {limits.max_query_chars}",
                TOO_LONG,
            )
        if not any(ch.isalnum() for ch in query):
            raise _refuse(f"query {query.strip()!r} has no word to search for")
        return query.strip()

    @field_validator("k")
    @classmethod
    def _k(cls, k: int, info: ValidationInfo) -> int:
        most = _limits(info).max_k
        if not 1 <= k <= most:
            raise _refuse(f"k must be between 1 and {most}, got {k!r}")
        return k

    @field_validator("documents", "versions")
    @classmethod
    def _names(cls, names: list[str] | None, info: ValidationInfo) -> list[str] | None:
        what = "document id" if info.field_name == "documents" else "version"
        for name in names or ():
            check_text(name, what)
        return names

    @field_validator("as_of", mode="before")
    @classmethod
    def _as_of(cls, day: Any) -> Any:
        if isinstance(day, str):
            try:
                return dt.date.fromisoformat(day)
            except ValueError:
                raise _refuse(f"as_of {day!r} is not a date (YYYY-MM-DD)") from None
        return day

    @field_validator("min_score")
    @classmethod
    def _min_score(cls, floor: float | None, info: ValidationInfo) -> float | None:
        if floor is not None and not -1 <= floor <= 1:
            raise _refuse(f"min_score must be a cosine from -1 to 1, got {floor!r}")
        if floor is not None and info.data.get("mode") == "fts":
            raise _refuse(
                "min_score is a cosine similarity and mode fts has none: use mode hybrid "
                "or vector, or leave min_score out"
            )
        return floor

    def fields(self) -> dict[str, Any]:
        """The request as the JSON object `search_request` reads (what was set only)."""
        return self.model_dump(mode="json", exclude_defaults=True) | {"query": self.query}


def _limits(info: ValidationInfo) -> Limits:
    context = info.context or {}
    return context.get("limits") or Limits()


def search_request(fields: Mapping[str, Any], limits: Limits | None = None) -> SearchRequest:
    """The one way an edge turns what it was asked into a `SearchRequest`: every check
    that needs no index, within `limits` (default `Limits()`); RequestError naming each
    wrong or unknown field otherwise (413 for a query over the limit)."""
    try:
        return SearchRequest.model_validate(dict(fields), context={"limits": limits})
    except ValidationError as exc:
        errors = exc.errors()
        status = 413 if any(e["type"] == TOO_LONG for e in errors) else 422
        raise RequestError(describe(errors), status) from None


def printable(text: str) -> str:
    """`text` with any lone surrogate written as its escape (`\\ud800`): text that can be
    encoded, so a message quoting a bad value can still be sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(errors: Iterable[Mapping[str, Any]]) -> str:
    """Validation errors (pydantic's or FastAPI's) as one line: `field: what is wrong`,
    joined by `; ` (the words of every edge for a malformed request)."""
    parts = []
    for error in errors:
        if error.get("type") == "json_invalid":  # FastAPI's: `loc` holds the offset
            offset = next((p for p in error.get("loc", ()) if isinstance(p, int)), None)
            why = (error.get("ctx") or {}).get("error") or error.get("msg", "invalid")
            at = f" at character {offset + 1}" if offset is not None else ""
            parts.append(f"the body is not JSON: {why}{at}; send a JSON object")
            continue
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        message = error.get("msg", "invalid")
        parts.append(message if message.startswith(where) else f"{where}: {message}")
    return printable("; ".join(parts) or "invalid request")


def check_text(text: str, what: str = "query") -> None:
    """Refuse text holding a lone surrogate (not Unicode: no UTF-8 encoding exists)."""
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udfff":
            raise _refuse(
                f"{what} is not valid text: character {i + 1} is a lone surrogate "
                f"(U+{ord(ch):04X}), which no Unicode text holds: send the {what} as "
                "UTF-8 text"
            )


def check_in_index(
    request: SearchRequest,
    held: Iterable[tuple[str, str]],
    embedder: Embedder | None,
    min_score: float | None,
) -> SearchRequest:
    """The checks against the index: every document and version asked for is among
    `held` ((doc_id, version) pairs: 404 otherwise), and, unless the search is full-text,
    the query fits in what `embedder`'s model reads (no embedder: not checked). Returns
    the request the index runs: with the index's `min_score` (`Index.min_score_for`)
    when none was asked and the mode has a cosine."""
    pairs = list(held)
    if request.documents is not None:
        known = {doc for doc, _ in pairs}
        unknown = [d for d in request.documents if d not in known]
        if unknown:
            raise RequestError(
                f"unknown document {', '.join(map(repr, unknown))}; the index holds "
                f"{', '.join(sorted(known)) or 'nothing yet'}",
                status=404,
            )
    if request.versions is not None:
        docs = request.documents
        held_versions = {v for doc, v in pairs if docs is None or doc in docs}
        unknown = [v for v in request.versions if v not in held_versions]
        if unknown:
            scope = f" of {', '.join(docs)}" if docs else ""
            raise RequestError(
                f"unknown version {', '.join(map(repr, unknown))}{scope}; the index holds "
                f"{', '.join(sorted(held_versions)) or 'none'}",
                status=404,
            )
    if request.mode != "fts" and embedder is not None:
        check_tokens(embedder, request.query)
    if request.min_score is None and min_score is not None and request.mode != "fts":
        return request.model_copy(update={"min_score": min_score})
    return request


def check_tokens(embedder: Embedder, query: str) -> None:
    """Refuse a query longer than the model reads (the rest would silently be ignored).

    A query too short to reach the limit is not tokenized (a fresh `trecho search` then
    builds no tokenizer): a token holds at least one character, or a word's leading
    marker, so a text of n characters makes at most 2n tokens, plus the special ones."""
    prefix = embedder.effective_query_prefix
    if 2 * (len(query) + len(prefix)) + 2 <= embedder.max_tokens:
        return
    from rag_assets.core.embedding import TokenCounter

    counter = TokenCounter(embedder.info.tokenizer, embedder.max_tokens, prefix)
    tokens = counter.count(query)
    if tokens > embedder.max_tokens:
        raise RequestError(
            f"query is {tokens} tokens long; model {embedder.model_id} reads at most "
            f"{embedder.max_tokens} (the rest would be ignored): shorten it, or use "
            "mode fts"
        )
