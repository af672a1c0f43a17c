"""Reciprocal rank fusion of the retrievers' ranked lists, and their tie order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RRF_K = 60
"""Reciprocal rank fusion constant: score = sum over retrievers of 1 / (RRF_K + rank)."""


def tie_order(score: float, row: dict[str, Any]) -> tuple[float, str, str]:
    """Rank order of one retriever's rows: best score first, equal scores (rows of one
    table share BM25 scores) by key and chunk id, so the same index state always gives
    the same ranking, whatever order the store returned them in."""
    return (-round(score, 6), str(row["partition_key"]), str(row["chunk_id"]))


Ranked = list[tuple[float, dict[str, Any]]]
"""One retriever's answer: (score, row) pairs, best first (`tie_order`)."""


@dataclass
class Fused:
    """One chunk of a fused ranking: its row as the retrievers read it (key columns and
    row id), its fused score, each retriever's rank and its own score (cosine, BM25)."""

    row: dict[str, Any]
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def cosine(self) -> float | None:
        """The cosine of the vector retriever (or of the cited articles' list: the same
        query vector), None when only full text found the chunk."""
        return self.scores.get("vector", self.scores.get("citation"))


def rrf(
    ranked: dict[str, Ranked],
    k: int,
    weights: dict[str, float] | None = None,
    rrf_k: int = RRF_K,
) -> list[Fused]:
    """Reciprocal rank fusion of several ranked lists, keeping each retriever's rank;
    a retriever's `weights` entry (1 when absent) multiplies its 1 / (rrf_k + rank)."""
    fused: dict[tuple[str, str], Fused] = {}
    for retriever, rows in ranked.items():
        weight = (weights or {}).get(retriever, 1.0)
        for rank, (score, row) in enumerate(rows, start=1):
            entry = fused.setdefault((row["partition_key"], row["chunk_id"]), Fused(row))
            entry.score += weight / (rrf_k + rank)
            entry.ranks[retriever] = rank
            entry.scores[retriever] = score
    order = sorted(
        fused.values(), key=lambda f: (-f.score, min(f.ranks.values()), f.row["chunk_id"])
    )
    return order[:k]
