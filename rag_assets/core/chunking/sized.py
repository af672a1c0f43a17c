"""Size-based baseline chunkers: cut by characters or tokens, knowing no structure.

These are the common recipes (fixed windows with overlap, LangChain-style recursive
splitting) that the structure-aware default is measured against. They are kept faithful
to how people use them, damage included: a 512-token window is reported `truncated` by a
256-token model rather than clamped, because that loss is what the eval must show.

Every chunk's `char_start`/`char_end` is an exact span into `doc.text` with
`body == doc.text[char_start:char_end]` (whitespace trimmed off the window, the span moved
with it), so the eval can judge these chunks by overlap like any other strategy. Where the
first cut falls changes the scores a lot, so fixed windows take a `start_offset` and
`offsets_for` spreads several over one window for mean/range reporting.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from rag_assets.core.chunking.base import Chunker, Source, make_header
from rag_assets.core.chunking.spans import (
    Span,
    build_chunks,
    check_window,
    token_offsets,
    windows,
)
from rag_assets.core.embedding import TokenCounter
from rag_assets.core.errors import ConfigError
from rag_assets.core.lake import Chunk, DocText

DEFAULT_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", ". ", " ")


def offsets_for(size: int, n: int = 4) -> list[int]:
    """`n` start offsets spread evenly over `[0, size)`, e.g. (512, 4) -> [0, 128, 256, 384].

    Size-based scores move with where the first cut falls; the eval runs each offset and
    reports mean and range instead of trusting one run. Duplicates (n > size) are dropped.
    """
    if size <= 0:
        raise ConfigError(f"size must be > 0, got {size}")
    if n <= 0:
        raise ConfigError(f"n (number of offsets) must be > 0, got {n}")
    return sorted({(i * size) // n for i in range(n)})


def fixed_chars(
    doc: DocText,
    partition_key: str,
    counter: TokenCounter,
    header: str = "",
    size: int = 1000,
    overlap: int = 200,
    start_offset: int = 0,
) -> list[Chunk]:
    """Windows of `size` characters stepping `size - overlap` (the oldest recipe).

    With `start_offset > 0` the first chunk is `text[:start_offset]` and the regular windows
    start there, so every offset covers the whole text.
    Strategy `fixed_chars-{size}-o{overlap}-s{start_offset}`.
    """
    check_window(size, overlap, start_offset)
    spans = windows(len(doc.text), size, overlap, start_offset)
    name = f"fixed_chars-{size}-o{overlap}-s{start_offset}"
    return build_chunks(doc, spans, name, partition_key, counter, header)


def fixed_tokens(
    doc: DocText,
    partition_key: str,
    counter: TokenCounter,
    header: str = "",
    size: int = 512,
    overlap: int = 64,
    start_offset: int = 0,
) -> list[Chunk]:
    """Windows of `size` model tokens stepping `size - overlap`; `start_offset` in tokens.

    The text is tokenized once; a chunk spans from its first token's start to its last
    token's end. `size` counts body tokens only, as the common recipe does, so windows
    longer than the model's limit come out `truncated` (not clamped: the eval must see it).
    Strategy `fixed_tokens-{size}-o{overlap}-s{start_offset}`.
    """
    check_window(size, overlap, start_offset)
    offsets = token_offsets(counter, doc.text)
    spans = [
        (offsets[i][0], offsets[j - 1][1])
        for i, j in windows(len(offsets), size, overlap, start_offset)
    ]
    name = f"fixed_tokens-{size}-o{overlap}-s{start_offset}"
    return build_chunks(doc, spans, name, partition_key, counter, header)


def _split_keep(text: str, start: int, end: int, sep: str) -> list[Span]:
    """Split `text[start:end]` on `sep`, the separator kept at the end of the piece before it
    (a sentence keeps its full stop, a line its newline), so pieces tile the span exactly."""
    out: list[Span] = []
    i = start
    while True:
        j = text.find(sep, i, end)
        if j == -1:
            break
        out.append((i, j + len(sep)))
        i = j + len(sep)
    if i < end:
        out.append((i, end))
    return out


def _greedy_merge(
    pieces: Sequence[Span], span_len: Callable[[int, int], int], size: int, overlap: int
) -> list[Span]:
    """LangChain's merge on contiguous pieces; `span_len(i, j)` is the length of pieces
    `i..j` joined. A span is closed when the next piece would overflow `size`; the next one
    starts with the closed span's trailing pieces that fit in `overlap`."""
    out: list[Span] = []
    first = 0  # index of the first piece of the open span; the open span ends before `k`
    for k in range(len(pieces)):
        if first < k and span_len(first, k) > size:
            out.append((pieces[first][0], pieces[k - 1][1]))
            while first < k and (span_len(first, k - 1) > overlap or span_len(first, k) > size):
                first += 1
    if pieces:
        out.append((pieces[first][0], pieces[-1][1]))
    return out


class _Recursive:
    """LangChain-style recursive splitter working on spans of one text.

    Like `RecursiveCharacterTextSplitter`: pick the first separator present, split, merge
    adjacent pieces that fit up to `size` with up to `overlap` of trailing pieces repeated,
    and recurse with the next separators into pieces still too long. Unlike it, merged spans
    are checked against their real token count, and a piece no separator can break is
    hard-cut (by chars or tokens), so no chunk ever exceeds `size`.
    """

    def __init__(
        self,
        text: str,
        counter: TokenCounter,
        size: int,
        overlap: int,
        separators: Sequence[str],
        length: Literal["tokens", "chars"],
    ) -> None:
        self.text = text
        self.counter = counter
        self.size = size
        self.overlap = overlap
        self.separators = tuple(separators)
        self.length = length
        self._overhead = counter.overhead if length == "tokens" else 0
        self._cache: dict[Span, int] = {}

    def measure(self, start: int, end: int) -> int:
        """Length of `text[start:end]`: chars, or bare tokens (count minus overhead)."""
        if self.length == "chars":
            return end - start
        key = (start, end)
        if key not in self._cache:
            self._cache[key] = self.counter.count(self.text[start:end]) - self._overhead
        return self._cache[key]

    def measure_many(self, spans: Sequence[Span]) -> list[int]:
        """`measure` for many spans, tokens counted in one tokenizer call."""
        if self.length == "chars":
            return [e - s for s, e in spans]
        todo = [sp for sp in spans if sp not in self._cache]
        counts = self.counter.count_many([self.text[s:e] for s, e in todo])
        for sp, n in zip(todo, counts, strict=True):
            self._cache[sp] = n - self._overhead
        return [self._cache[sp] for sp in spans]

    def split(self, start: int, end: int, separators: Sequence[str]) -> list[Span]:
        """Chunk spans (untrimmed) covering `text[start:end]`, each at most `size` long."""
        sep: str | None = None
        rest: Sequence[str] = ()
        for i, cand in enumerate(separators):
            if cand == "":
                break
            if self.text.find(cand, start, end) != -1:
                sep, rest = cand, separators[i + 1 :]
                break
        if sep is None:
            return self.hard_split(start, end)
        pieces = _split_keep(self.text, start, end, sep)
        lengths = self.measure_many(pieces)
        out: list[Span] = []
        good: list[Span] = []
        good_len: list[int] = []
        for piece, n in zip(pieces, lengths, strict=True):
            if n <= self.size:
                good.append(piece)
                good_len.append(n)
                continue
            if good:
                out.extend(self.merge(good, good_len))
                good, good_len = [], []
            out.extend(self.split(piece[0], piece[1], rest))
        if good:
            out.extend(self.merge(good, good_len))
        return out

    def merge(self, pieces: Sequence[Span], lengths: Sequence[int]) -> list[Span]:
        """Join adjacent pieces (each <= size) into spans <= size, carrying the trailing
        pieces that fit in `overlap` into the next span (LangChain's merge).

        Piece lengths are summed first (one tokenizer call per level, as LangChain does);
        the merged spans are then measured for real, and if any overshoots (a separator
        inside a word, so tokens are not additive) the group is merged on exact lengths.
        """
        prefix = [0]
        for n in lengths:
            prefix.append(prefix[-1] + n)
        out = _greedy_merge(pieces, lambda i, j: prefix[j + 1] - prefix[i], self.size, self.overlap)
        if self.length == "chars" or max(self.measure_many(out), default=0) <= self.size:
            return out
        return _greedy_merge(
            pieces,
            lambda i, j: self.measure(pieces[i][0], pieces[j][1]),
            self.size,
            self.overlap,
        )

    def hard_split(self, start: int, end: int) -> list[Span]:
        """Cut a span no separator can break into windows of `size` (with `overlap`)."""
        if self.measure(start, end) <= self.size:
            return [(start, end)]
        if self.length == "chars":
            return [
                (start + i, start + j) for i, j in windows(end - start, self.size, self.overlap, 0)
            ]
        offsets = [(start + s, start + e) for s, e in self.counter.offsets(self.text[start:end])]
        out: list[Span] = []
        i, n = 0, len(offsets)
        while i < n:
            j = min(i + self.size, n)
            # A window cut between word pieces may re-tokenize longer on its own: shrink it.
            while j - i > 1 and self.measure(offsets[i][0], offsets[j - 1][1]) > self.size:
                j -= 1
            out.append((offsets[i][0], offsets[j - 1][1]))
            if j >= n:
                break
            i = max(i + 1, j - self.overlap)
        return out


def recursive(
    doc: DocText,
    partition_key: str,
    counter: TokenCounter,
    header: str = "",
    size: int = 512,
    overlap: int = 64,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
    length: Literal["tokens", "chars"] = "tokens",
) -> list[Chunk]:
    """LangChain-style recursive splitting: paragraphs, then lines, sentences, words.

    `size`/`overlap` are bare tokens of the model's tokenizer (`length="tokens"`, no header,
    no special tokens, as LangChain's `from_huggingface_tokenizer` counts) or characters.
    Separators stay attached to the end of their piece. Strategy
    `recursive_{length}-{size}-o{overlap}`, plus `-sep<hash>` for non-default separators.
    """
    check_window(size, overlap)
    if length not in ("tokens", "chars"):
        raise ConfigError(f"length must be 'tokens' or 'chars', got {length!r}")
    if isinstance(separators, str) or not separators:
        raise ConfigError(f"separators must be a non-empty sequence of strings, got {separators!r}")
    seps = tuple(separators)
    name = f"recursive_{length}-{size}-o{overlap}"
    if seps != DEFAULT_SEPARATORS:
        name += "-sep" + hashlib.sha256(repr(seps).encode("utf-8")).hexdigest()[:8]
    splitter = _Recursive(doc.text, counter, size, overlap, seps, length)
    spans = splitter.split(0, len(doc.text), seps) if doc.text.strip() else []
    return build_chunks(doc, spans, name, partition_key, counter, header)


WINDOWS: dict[str, Callable[..., list[Chunk]]] = {
    "fixed_chars": fixed_chars,
    "fixed_tokens": fixed_tokens,
}
"""The fixed-window kinds, which take a start offset (`recursive` has none to move)."""


@dataclass(frozen=True)
class SizedChunker(Chunker):
    """A size-based baseline (`fixed_chars`, `fixed_tokens` or `recursive`, `size` and
    `overlap` in its unit, fixed windows starting at `offset`); its header names only the
    document and version."""

    kind: str
    size: int
    overlap: int
    offset: int = 0
    header_mode: str = "full"

    def __post_init__(self) -> None:
        if self.kind != "recursive" and self.kind not in WINDOWS:
            raise ConfigError(
                f"size-based kind {self.kind!r} must be one of {[*WINDOWS, 'recursive']}"
            )
        if self.kind == "recursive" and self.offset:
            # it cuts at separators: an offset would be ignored, yet named in the report
            raise ConfigError(f"recursive splitting has no start offset, got -s{self.offset}")
        check_window(self.size, self.overlap, self.offset)  # when built, not at chunk time

    @property
    def name(self) -> str:
        """`<kind>-<size>-o<overlap>`, with `-s<offset>` when the windows start later."""
        return f"{self.kind}-{self.size}-o{self.overlap}" + (
            f"-s{self.offset}" if self.offset else ""
        )

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """The version's text cut by size, knowing no structure."""
        info = source.info
        header = make_header(info, "", self.header_mode)
        common = (source.doc, info.partition_key, counter)
        if self.kind == "recursive":
            return recursive(*common, header=header, size=self.size, overlap=self.overlap)
        return WINDOWS[self.kind](
            *common, header=header, size=self.size, overlap=self.overlap, start_offset=self.offset
        )
