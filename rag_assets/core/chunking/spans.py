"""Spans of a text cut by size, and spans made into chunks: what the size-based
cutters (`sized`: fixed windows, recursive splitting) share.

A span is `(start, end)` into `doc.text`; `build_chunks` trims each to its stripped body
(moving the span with it), so `body == doc.text[char_start:char_end]` holds for every
chunk."""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.chunking.base import ChunkBuilder, chunk_text
from rag_assets.core.embedding import TokenCounter
from rag_assets.core.errors import ConfigError
from rag_assets.core.lake import Chunk, DocText, split_key

Span = tuple[int, int]


def check_window(size: int, overlap: int, start_offset: int = 0) -> None:
    """Reject window arguments that would loop forever or lose text."""
    if size <= 0:
        raise ConfigError(f"size must be > 0, got {size}")
    if overlap < 0:
        raise ConfigError(f"overlap must be >= 0, got {overlap}")
    if overlap >= size:
        raise ConfigError(f"overlap ({overlap}) must be smaller than size ({size})")
    if not 0 <= start_offset < size:
        raise ConfigError(f"start_offset must be in [0, size={size}), got {start_offset}")


def windows(n: int, size: int, overlap: int, start_offset: int) -> list[Span]:
    """Index windows over `range(n)`: an optional head `[0, start_offset)`, then `size`-long
    windows stepping `size - overlap` until one reaches the end (no tail fully inside the
    previous window)."""
    out: list[Span] = []
    if n <= 0:
        return out
    if start_offset > 0:
        out.append((0, min(start_offset, n)))
    step = size - overlap
    i = start_offset
    while i < n:
        out.append((i, min(i + size, n)))
        if i + size >= n:
            break
        i += step
    return out


def build_chunks(
    doc: DocText,
    spans: Sequence[Span],
    strategy: str,
    partition_key: str,
    counter: TokenCounter,
    header: str,
) -> list[Chunk]:
    """Trim each span to its stripped body, drop empty ones and make the Chunk records of
    the version `partition_key` names (`<doc_id>@<version>`)."""
    trimmed: list[tuple[int, int, str]] = []
    for start, end in spans:
        seg = doc.text[start:end]
        body = seg.strip()
        if not body:
            continue
        s = start + (len(seg) - len(seg.lstrip()))
        trimmed.append((s, s + len(body), body))
    counts = counter.count_many([chunk_text(header, body) for _, _, body in trimmed])
    build = ChunkBuilder(doc, counter, strategy, partition_key, *split_key(partition_key))
    return [
        build.chunk(f"{partition_key}#{strategy}/{n}", s, e, header, body, ordinal=n, tokens=k)
        for n, ((s, e, body), k) in enumerate(zip(trimmed, counts, strict=True))
    ]


def token_offsets(counter: TokenCounter, text: str) -> list[Span]:
    """Char span of every token of `text`, checked to reach the end of the text.

    The tokenizer is called without `max_length`; should it still be configured to truncate,
    the tail would silently vanish from every baseline, so that is an error.
    """
    offsets = [(int(s), int(e)) for s, e in counter.offsets(text)]
    last_end = offsets[-1][1] if offsets else 0
    if any(ch.isalnum() for ch in text[last_end:]):
        raise RuntimeError(
            f"tokenizer stopped at char {last_end} of {len(text)}: it truncates long texts; "
            "disable truncation on the tokenizer before chunking by tokens"
        )
    return offsets
