"""Each model's defaults for ranking and answering: the fusion constant, the vector list's
weight in hybrid fusion and the lowest cosine a served hit may have (min_score)."""

from __future__ import annotations

from pathlib import Path

from rag_assets.core.embedding import MINILM, Embedder
from rag_assets.core.index.fusion import RRF_K

RRF_K_E5 = 10
"""The fusion constant for the bundled e5. With k = 60 two 40-candidate lists fuse
nearly flat (rank 1 scores 1/61, rank 8 1/68), so the vector list had to weigh 8 to
lead, which left full text no say even when it ranks the answer first on the law's own
term; with k = 10 the top ranks of each list count (rank 1 1/11, rank 8 1/18)
and a vector weight of 2 keeps the lead (docs/models.md)."""
VECTOR_WEIGHT_E5 = 2.0
"""The vector retriever's weight in hybrid fusion for the bundled e5 (full text: 1).
Measured on the LGPD + CDC dev questions (docs/models.md): with equal weights the
full-text list pulls down e5's right answers to lay questions that share no word with
the law; MiniLM keeps equal weights (and k = 60)."""


def default_vector_weight(embedder: Embedder) -> float:
    """The vector retriever's weight in hybrid fusion when none is given (the setting
    TRECHO_VECTOR_WEIGHT gives one): VECTOR_WEIGHT_E5 for a bundled e5 variant, else 1
    (plain reciprocal rank fusion)."""
    return VECTOR_WEIGHT_E5 if embedder.variant else 1.0


MIN_SCORE_E5 = 0.82
"""The default `min_score` for the bundled e5 (a cosine), measured on the sample lake's
eval questions (docs/eval.md, abstention): the highest threshold that keeps hit@3 within
0.02 (0.83 drops one of 34 answers). e5's cosines are compressed (0.74-0.83 for questions
far from every document, such as "qual a capital da França?", 0.85-0.90 for the answers
and for questions about other laws), so it turns away the off-topic, not the near-topic."""
MIN_SCORE_MINILM = 0.40
"""The default `min_score` for all-MiniLM-L6-v2, whose cosines run lower and wider
(0.51-0.69 for the eval's out-of-scope questions, 0.17 for an English question far from
every document), measured as MIN_SCORE_E5 (0.425 drops one of 34 answers; docs/eval.md)."""
NO_MIN_SCORE = -1.0
"""A `min_score` that keeps every hit (cosines are at least -1): other models, which were
not measured."""


def default_min_score(embedder: Embedder) -> float:
    """The lowest cosine a hit may have to be returned by `trecho search`, `POST /search`
    and MCP when no `min_score` is given (the setting TRECHO_MIN_SCORE gives one): chosen
    per model by measurement on the eval's out-of-scope and in-scope questions
    (docs/eval.md), NO_MIN_SCORE for a model not measured."""
    if embedder.variant:
        return MIN_SCORE_E5
    if Path(embedder.model).name == MINILM:
        return MIN_SCORE_MINILM
    return NO_MIN_SCORE


def default_rrf_k(embedder: Embedder) -> int:
    """The fusion constant: RRF_K_E5 for a bundled e5 variant, else RRF_K."""
    return RRF_K_E5 if embedder.variant else RRF_K
