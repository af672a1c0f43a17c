"""The one chunker interface every strategy implements, what a chunk's header says, and
how a chunk is built from a span of text (`ChunkBuilder`).

A chunker is a `Chunker` called as `chunker(source, counter) -> list[Chunk]`: it reads one
document version (its text, structure tree and linearized table rows) and returns chunks
whose spans point into that version's text, so that the eval can compare any two
strategies on the same extracted text with the same judge.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from rag_assets.core.embedding import TokenCounter
from rag_assets.core.errors import ConfigError, UserError
from rag_assets.core.lake import Chunk, DocText, Node
from rag_assets.core.structure import squash
from rag_assets.core.tables import TableRow

HEADER_MODES = ("off", "path", "full")
PATH_SEP = " > "


@dataclass(frozen=True)
class DocInfo:
    """What the context header says about the document version.

    `header_name` is how the header names the document: the doc id unless set (e.g. to the
    title). Measured on the sample corpus with all-MiniLM-L6-v2, a long title repeated in
    every chunk costs hit@3 (see docs/stages.md): the default is the short id.
    """

    partition_key: str
    doc_id: str
    version: str
    title: str
    valid_from: dt.date | None = None
    header_name: str | None = None


def make_header(info: DocInfo, path: str, mode: str = "full") -> str:
    """`[document | section path | version (valid from)]` (`full`; the date only when the
    sidecar gives one), `[document | section path]` (`path`) or nothing (`off`).

    The date lets an LLM reading the chunk tell which text was in force when, without
    looking anything up."""
    if mode not in HEADER_MODES:
        raise ConfigError(f"header mode {mode!r} must be one of {HEADER_MODES}")
    if mode == "off":
        return ""
    parts = [info.header_name or info.doc_id]
    if path:
        parts.append(path)
    if mode == "full":
        since = f" ({info.valid_from.isoformat()})" if info.valid_from else ""
        parts.append(info.version + since)
    return "[" + " | ".join(parts) + "]"


def chunk_text(header: str, body: str) -> str:
    """What a chunk embeds: its header, a newline and its body (the body alone without one)."""
    return f"{header}\n{body}" if header else body


@dataclass(frozen=True)
class ChunkBuilder:
    """Makes the chunks of one document version for one strategy, from text spans.

    Every chunker builds its `Chunk` records here, so what a chunk's text is (header, a
    newline, body), how its tokens are counted and when it is `truncated` (the model
    reads fewer tokens than it holds) are decided in one place.
    """

    doc: DocText
    counter: TokenCounter
    strategy: str
    partition_key: str
    doc_id: str
    version: str

    @classmethod
    def of(cls, info: DocInfo, doc: DocText, counter: TokenCounter, strategy: str) -> ChunkBuilder:
        """The builder for the version `info` names."""
        return cls(doc, counter, strategy, info.partition_key, info.doc_id, info.version)

    def chunk(
        self,
        chunk_id: str,
        start: int,
        end: int,
        header: str,
        body: str,
        *,
        kind: str = "text",
        parent_id: str | None = None,
        path: str = "",
        ordinal: int = 0,
        tokens: int | None = None,
    ) -> Chunk:
        """The chunk of `body` (spanning `doc.text[start:end]`) under `header`.

        `tokens` is the count of the chunk's text when the caller already has it (counted
        in a batch); otherwise it is counted here.
        """
        text = chunk_text(header, body)
        if tokens is None:
            tokens = self.counter.count(text)
        page_start, page_end = self.doc.pages_of(start, end)
        return Chunk(
            chunk_id=chunk_id,
            partition_key=self.partition_key,
            doc_id=self.doc_id,
            version=self.version,
            strategy=self.strategy,
            parent_id=parent_id,
            ordinal=ordinal,
            kind=kind,
            path=path,
            header=header,
            body=body,
            text=text,
            token_count=tokens,
            truncated=tokens > self.counter.max_tokens,
            char_start=start,
            char_end=end,
            page_start=page_start,
            page_end=page_end,
        )


@dataclass
class Source:
    """One document version as every chunker reads it."""

    info: DocInfo
    doc: DocText
    nodes: list[Node] = field(default_factory=list)
    rows: list[TableRow] = field(default_factory=list)
    doc_type: str | None = None


class NoTextUnits(UserError):
    """A version in which the chunker found nothing to cut: it cannot be indexed, and its
    run fails saying why (`no text units found: ...`), never counts as indexed with 0
    chunks."""


def heading_lines(source: Source) -> set[str]:
    """The printed lines of a version that are its sections' headings: a part, chapter or
    section's marker and title lines (`CAPÍTULO I` over `DAS DISPOSIÇÕES GERAIS`)."""
    out: set[str] = set()
    for node in source.nodes:
        if node.kind not in ("part", "chapter", "section"):
            continue
        heading = squash(f"{node.label} {node.title}")
        for line in node.text.splitlines():
            if squash(line) and squash(line) in heading:
                out.add(line.strip())
    return out


def headings_only(source: Source) -> bool:
    """Whether every printed line of a version is a section heading: it has nothing to
    index but headings, whatever their style (numbered, legal markers, bold)."""
    lines = [line.strip() for line in source.doc.text.splitlines() if line.strip()]
    heads = heading_lines(source)
    return bool(lines) and all(line in heads for line in lines)


def no_units_reason(source: Source) -> str:
    """Why a version gives no chunk, in words a user can act on (`NoTextUnits`)."""
    lines = [line.strip() for line in source.doc.text.splitlines() if line.strip()]
    pages = max(1, len(source.doc.page_starts))
    if not lines:
        return f"its {pages} page(s) hold no text (a scan needs OCR)"
    if headings_only(source):
        sections = sum(1 for n in source.nodes if n.kind in ("part", "chapter", "section"))
        return (
            f"every one of its {len(lines)} lines reads as a section heading "
            f"({sections} sections, no body text under any)"
        )
    return (
        f"its {len(lines)} lines of text ({len(source.nodes)} structure nodes, "
        f"{len(source.rows)} table rows) gave the chunker no unit to cut"
    )


class Chunker(ABC):
    """One chunking strategy: `chunker(source, counter)` gives a version's chunks.

    Concrete strategies are frozen dataclasses of their settings; `name` is the strategy
    name their chunks carry and `trecho eval` reports (see the registry in `__init__`)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The strategy name (`structural`, `legal-point`, `fixed_tokens-256-o0`...)."""

    @abstractmethod
    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """The chunks of one document version, spans into its text."""
