"""Chunking strategies behind one interface, and a registry to build them by name.

Every strategy is a `Chunker` (see `base.py`), called as `chunker(source, counter)`;
`REGISTRY` maps each fixed name to how it is built, size-based names are parsed.
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

from rag_assets.core.chunking.base import (
    Chunker,
    DocInfo,
    NoTextUnits,
    Source,
    headings_only,
    no_units_reason,
)
from rag_assets.core.chunking.contextual import ReplyCache, Situator, SituatorConfig
from rag_assets.core.chunking.policy import Policy
from rag_assets.core.chunking.registry import NAMED, REGISTRY, SIZED, PolicyChunker, build_chunker
from rag_assets.core.chunking.sized import offsets_for

__all__ = [
    "NAMED",
    "REGISTRY",
    "SIZED",
    "Chunker",
    "NoTextUnits",
    "Policy",
    "PolicyChunker",
    "ReplyCache",
    "Situator",
    "SituatorConfig",
    "Source",
    "build_chunker",
    "headings_only",
    "no_units_reason",
    "DocInfo",
    "offsets_for",
]
