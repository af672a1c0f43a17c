"""Chunking strategies behind one interface, and a registry to build them by name.

Every strategy is a `Chunker`: `(Source, TokenCounter) -> list[Chunk]` (see `base.py`).
Names, as `trecho eval --strategies` and the chunks asset take them:

- `default`: the policy (`policy.py`): per document, by sidecar `type` or by structure
- `structural`, `structural-no-repack`: tree units packed up to a budget, or one per chunk
- `legal-article`, `legal-paragraph`, `legal-point`: one chunk per article / numbered
  paragraph / point, each prefixed with its article's lead
- `table_rows`, `table_rows-packed`: linearized table rows only
- `semantic`: breaks where the embedder's similarity between sentences drops
- `whole`: the document as one chunk when it fits the model
- `fixed_chars-<size>-o<overlap>`, `fixed_tokens-<size>-o<overlap>` (start offset `-s<n>`),
  `recursive-<size>-o<overlap>`: the size-based baselines
- any name + `-noheader`: the same strategy without the context header
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag_assets.core.chunking.base import Chunker, Source, make_header
from rag_assets.core.chunking.legal import legal_chunker
from rag_assets.core.chunking.rows import table_rows_chunker
from rag_assets.core.chunking.sized import fixed_chars, fixed_tokens, recursive
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.chunking.whole import whole_chunker
from rag_assets.core.embedding import Embedder
from rag_assets.core.schemas import Chunk
from rag_assets.core.tokens import TokenCounter

SIZED = re.compile(r"^(fixed_chars|fixed_tokens|recursive)-(\d+)-o(\d+)(?:-s(\d+))?$")
NAMED = (
    "default",
    "structural",
    "structural-no-repack",
    "legal-article",
    "legal-paragraph",
    "legal-point",
    "table_rows",
    "table_rows-packed",
    "semantic",
    "whole",
)


def structural_chunker(
    target_tokens: int = 200, repack: bool = True, header_mode: str = "full", name: str = ""
) -> Chunker:
    """Tree units packed up to `target_tokens` (or one unit per chunk without repack)."""
    strategy = name or ("structural" if repack else "structural-no-repack")

    def chunker(source: Source, counter: TokenCounter) -> list[Chunk]:
        return structural_chunks(
            source.doc,
            source.nodes,
            source.rows,
            source.info,
            counter,
            target_tokens=target_tokens,
            repack=repack,
            header_mode=header_mode,
            strategy=strategy,
        )

    chunker.__name__ = strategy
    return chunker


def sized_chunker(
    kind: str, size: int, overlap: int, offset: int = 0, header_mode: str = "full"
) -> Chunker:
    """A size-based baseline; its header names only the document and version."""
    functions: dict[str, Callable[..., list[Chunk]]] = {
        "fixed_chars": fixed_chars,
        "fixed_tokens": fixed_tokens,
    }

    def chunker(source: Source, counter: TokenCounter) -> list[Chunk]:
        info = source.info
        header = make_header(info, "", header_mode)
        common = (source.doc, info.partition_key, info.doc_id, info.version, counter)
        if kind == "recursive":
            return recursive(*common, header=header, size=size, overlap=overlap)
        return functions[kind](
            *common, header=header, size=size, overlap=overlap, start_offset=offset
        )

    chunker.__name__ = f"{kind}-{size}-o{overlap}" + (f"-s{offset}" if offset else "")
    return chunker


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
        return sized_chunker(kind, int(size), int(overlap), int(offset or 0), header_mode)
    if name == "default":
        from rag_assets.core.chunking.policy import Policy, policy_chunker

        return policy_chunker(
            Policy(target_tokens=target_tokens, header_mode=header_mode), embedder
        )
    if name in ("structural", "structural-no-repack"):
        return structural_chunker(target_tokens, name == "structural", header_mode)
    if name.startswith("legal-") and name in NAMED:
        return legal_chunker(name.split("-", 1)[1], header_mode)  # type: ignore[arg-type]
    if name in ("table_rows", "table_rows-packed"):
        return table_rows_chunker(name.endswith("packed"), header_mode)
    if name == "whole":
        return whole_chunker(header_mode)
    if name == "semantic":
        if embedder is None:
            raise ValueError("the semantic strategy needs the embedder")
        from rag_assets.core.chunking.semantic import semantic_chunker

        return semantic_chunker(embedder, header_mode=header_mode)
    raise ValueError(
        f"unknown chunking strategy {name!r}: use one of {', '.join(NAMED)}, "
        "fixed_chars-<size>-o<overlap>, fixed_tokens-<size>-o<overlap>[-s<offset>], "
        "recursive-<size>-o<overlap>, optionally with -noheader"
    )
