"""The strategies by name: `REGISTRY`, `build_chunker`, and the default policy as a
chunker (`PolicyChunker`, which builds the strategy its policy picks)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rag_assets.core.chunking.base import Chunker, Source
from rag_assets.core.chunking.legal import LegalChunker
from rag_assets.core.chunking.policy import Policy
from rag_assets.core.chunking.rows import TableRowsChunker
from rag_assets.core.chunking.semantic import SemanticChunker
from rag_assets.core.chunking.sized import SizedChunker
from rag_assets.core.chunking.structural import StructuralChunker
from rag_assets.core.chunking.whole import WholeChunker
from rag_assets.core.embedding import Embedder, TokenCounter
from rag_assets.core.errors import ConfigError
from rag_assets.core.lake import Chunk

SIZED = re.compile(r"^(fixed_chars|fixed_tokens|recursive)-(\d+)-o(\d+)(?:-s(\d+))?$")

Factory = Callable[[Embedder | None, int, str], Chunker]
"""Builds a strategy from (embedder, target tokens, header mode)."""


def _semantic(embedder: Embedder | None, target_tokens: int, header_mode: str) -> Chunker:
    if embedder is None:
        raise ConfigError("the semantic strategy needs the embedder")
    return SemanticChunker(embedder, header_mode=header_mode)


REGISTRY: dict[str, Factory] = {
    "default": lambda e, t, h: PolicyChunker(Policy(target_tokens=t, header_mode=h), e),
    "structural": lambda e, t, h: StructuralChunker(t, repack=True, header_mode=h),
    "structural-no-repack": lambda e, t, h: StructuralChunker(t, repack=False, header_mode=h),
    "legal-article": lambda e, t, h: LegalChunker("article", h),
    "legal-paragraph": lambda e, t, h: LegalChunker("paragraph", h),
    "legal-point": lambda e, t, h: LegalChunker("point", h),
    "table_rows": lambda e, t, h: TableRowsChunker(pack=False, header_mode=h),
    "table_rows-packed": lambda e, t, h: TableRowsChunker(pack=True, header_mode=h),
    "semantic": _semantic,
    "whole": lambda e, t, h: WholeChunker(h),
}
"""Every fixed strategy name and how to build it."""
NAMED = tuple(REGISTRY)


def build_chunker(
    name: str,
    embedder: Embedder | None = None,
    target_tokens: int = 200,
    header_mode: str = "full",
) -> Chunker:
    """The strategy called `name` (see the module docstring); a clear error if unknown."""
    if name.endswith("-noheader"):
        name, header_mode = name.removesuffix("-noheader"), "off"
    sized = SIZED.match(name)
    if sized:
        kind, size, overlap, offset = sized.groups()
        return SizedChunker(kind, int(size), int(overlap), int(offset or 0), header_mode)
    if name in REGISTRY:
        return REGISTRY[name](embedder, target_tokens, header_mode)
    raise ConfigError(
        f"unknown chunking strategy {name!r}: use one of {', '.join(NAMED)}, "
        "fixed_chars-<size>-o<overlap>, fixed_tokens-<size>-o<overlap>[-s<offset>], "
        "recursive-<size>-o<overlap>, optionally with -noheader"
    )


@dataclass(frozen=True)
class PolicyChunker(Chunker):
    """The policy as a chunker (strategy `default`): each document chunked by the
    strategy `choose` picks."""

    policy: Policy = field(default_factory=Policy)
    embedder: Embedder | None = None

    @property
    def name(self) -> str:
        """`default`."""
        return "default"

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """The chunks of the strategy the policy picks for this version."""
        policy = self.policy
        name = policy.choose(source)
        return build_chunker(name, self.embedder, policy.target_tokens, policy.header_mode)(
            source, counter
        )
