"""The default chunking policy: which strategy each document gets.

By sidecar `type` when the policy maps it; otherwise by the structure found: a document
with articles gets `with_articles`, anything else `otherwise`. Both default to
`structural`: tree units packed up to the token budget, which inside an article means
its §/inciso groups under the article's lead, and one table row per chunk.

Why not `legal-point` for laws: measured side by side on the sample corpus (34 scored
questions, hybrid retrieval, bundled model), `legal-point` reached hit@3 0.53 where
`structural` reached 0.62 with the same 0 damage; `legal-article` (articles split to fit)
0.65 at 17% more tokens sent. Set `with_articles` (or a type mapping) to change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rag_assets.core.chunking.base import Source

DEFAULT_BY_TYPE: dict[str, str] = {}


@dataclass(frozen=True)
class Policy:
    """The knobs of the default policy."""

    target_tokens: int = 200
    header_mode: str = "full"
    by_type: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_BY_TYPE))
    with_articles: str = "structural"
    otherwise: str = "structural"

    def choose(self, source: Source) -> str:
        """The strategy name for one document version."""
        if source.doc_type and source.doc_type in self.by_type:
            return self.by_type[source.doc_type]
        if any(n.kind == "article" for n in source.nodes):
            return self.with_articles
        return self.otherwise
