"""The whole-document chunker: one chunk per document version when the model reads it all.

Short documents (a one-page notice, a policy) answer best whole: no cut can separate a
value from its context. When the document, header included, does not fit the model's
maximum, nothing would be read past that maximum, so the strategy falls back to the
structure-aware chunker packed up to the model's maximum (`structural_chunks` with
`repack=True`, `target_tokens=counter.max_tokens`): the largest chunks that are never
truncated (packing stays within one section, article or table, as the default's does).
Those chunks are still labelled strategy `whole`, so the eval reports what this strategy
produces on each document, split or not; their `parent_id` is then their section,
article or table node, as in the default (a parent the LLM can be handed), not the root.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.core.chunking.base import ChunkBuilder, Chunker, Source, chunk_text, make_header
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.embedding import TokenCounter
from rag_assets.core.lake import Chunk

STRATEGY = "whole"


@dataclass(frozen=True)
class WholeChunker(Chunker):
    """Strategy `whole` (see the module doc for the fallback)."""

    header_mode: str = "full"

    @property
    def name(self) -> str:
        """`whole`."""
        return STRATEGY

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """The document as one chunk when it fits the model, else the packed structural
        chunks.

        The single chunk's id is `<partition_key>#doc`, its `parent_id` the document root
        node's id (the partition key when the tree is empty), its span the trimmed text.
        """
        header_mode = self.header_mode
        info, doc = source.info, source.doc
        header = make_header(info, "", header_mode)
        stripped = doc.text.strip()
        if not stripped:
            return []
        start = len(doc.text) - len(doc.text.lstrip())
        end = start + len(stripped)
        tokens = counter.count(chunk_text(header, stripped))
        if tokens > counter.max_tokens:
            return structural_chunks(
                source,
                counter,
                target_tokens=counter.max_tokens,
                repack=True,
                header_mode=header_mode,
                strategy=STRATEGY,
            )
        root = next((n for n in source.nodes if n.kind == "document"), None)
        build = ChunkBuilder.of(info, doc, counter, STRATEGY)
        whole = build.chunk(
            f"{info.partition_key}#doc",
            start,
            end,
            header,
            stripped,
            kind="document",
            parent_id=root.node_id if root else info.partition_key,
            tokens=tokens,
        )
        return [whole]
