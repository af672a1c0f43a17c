"""The eval's questions and their judgement: the question file format, each question's
ranked hits judged by span overlap (`judge`), and the figures over a run's questions
(`summarize`: hit@k, MRR, answer completeness, twins; `abstention`: what a `min_score`
does to out-of-scope and scored questions, and its `sweep_thresholds`).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag_assets.core.corpus import Version
from rag_assets.core.eval.metrics import (
    Span,
    answer_complete,
    answers,
    first_relevant_rank,
    hit_at,
    label_spans,
    rank_above,
    reciprocal_rank,
    twin_confused,
)
from rag_assets.core.index import Hit
from rag_assets.core.lake import LakeError, Node


def digest(*parts: object) -> str:
    """A short stable digest of `parts` (JSON): the ids of drawn questions, cache keys."""
    return hashlib.sha1(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Question:
    """One eval question (docs/eval.md format). A hit is relevant when it overlaps a unit
    of the document labelled as `expected` or `also_accepted`, or one of the `units` (node
    ids: the questions drawn from the lake); with `match="text"`, when it is a chunk of
    the document holding every `answer_contains` string (a drawn table question: the value
    with its heading and row label). No `expected`, `units` or text match: out of scope."""

    id: str
    question: str
    doc_id: str | None
    expected: tuple[str, ...]
    also_accepted: tuple[str, ...] = ()
    answer_contains: tuple[str, ...] = ()
    not_relevant: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    match: str = "span"

    @property
    def in_scope(self) -> bool:
        """Whether the corpus holds an answer (else the search should abstain)."""
        return bool(self.expected or self.units) or (
            self.match == "text" and bool(self.answer_contains)
        )


def load_questions(path: Path) -> list[Question]:
    """Read a JSONL question file; a bad line is an error naming the file and line."""
    questions: list[Question] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            questions.append(
                Question(
                    id=str(raw["id"]),
                    question=str(raw["question"]),
                    doc_id=raw.get("doc_id"),
                    expected=tuple(raw.get("expected") or ()),
                    also_accepted=tuple(raw.get("also_accepted") or ()),
                    answer_contains=tuple(raw.get("answer_contains") or ()),
                    not_relevant=tuple(raw.get("not_relevant") or ()),
                    tags=tuple(raw.get("tags") or ()),
                    units=tuple(raw.get("units") or ()),
                    match=str(raw.get("match") or "span"),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise LakeError(f"{path}:{number}: not a valid question ({exc})") from exc
    return questions


@dataclass
class JudgedHit:
    """One retrieved chunk of a question, as the eval judged it: where it is, its scores
    (the fused rank score, the cosine and BM25 where measured) and whether it is relevant."""

    chunk_id: str
    doc_id: str
    version: str
    path: str
    score: float
    cosine: float | None
    bm25: float | None
    relevant: bool


@dataclass
class QuestionResult:
    """How one strategy did on one question (with its hits, for the per-question table
    and the abstention figures)."""

    id: str
    tags: tuple[str, ...]
    doc_id: str | None
    rank: int | None
    answerable: bool
    complete: bool | None
    tokens3: int
    twin: bool | None
    top: list[str] = field(default_factory=list)
    question: str = ""
    expected: tuple[str, ...] = ()
    hits: list[JudgedHit] = field(default_factory=list)

    @property
    def out_of_scope(self) -> bool:
        """No answer in the corpus (an empty `expected`: the `fora_do_escopo` questions):
        a search should return nothing above its min_score."""
        return not self.expected

    def to_json(self) -> dict[str, Any]:
        """The result as `metrics.json`'s `per_question` holds it."""
        return {
            "id": self.id,
            "question": self.question,
            "tags": list(self.tags),
            "doc_id": self.doc_id,
            "expected": list(self.expected),
            "answerable": self.answerable,
            "rank": self.rank,
            "hits": [asdict(h) for h in self.hits],
        }


def own_spans(nodes: Sequence[Node], ids: set[str]) -> list[Span]:
    """The spans of the units `ids` without their child units (a section's text before
    its first subsection or table): what a question drawn from a unit's own words asks."""
    first_child: dict[str, int] = {}
    for n in nodes:
        if n.parent_id in ids:
            first_child[n.parent_id] = min(first_child.get(n.parent_id, n.char_end), n.char_start)
    return [
        (n.char_start, max(n.char_start + 1, first_child.get(n.node_id, n.char_end)))
        for n in nodes
        if n.node_id in ids
    ]


def _judged(hit: Hit, relevant: bool) -> JudgedHit:
    return JudgedHit(
        hit.chunk_id,
        hit.doc_id,
        hit.version,
        hit.path,
        round(hit.score, 6),
        hit.cosine,
        hit.bm25,
        relevant,
    )


def _holds(hit: Hit, question: Question) -> bool:
    return hit.doc_id == question.doc_id and answer_complete([hit.text], question.answer_contains)


def judge(question: Question, hits: Sequence[Hit], versions: dict[str, Version]) -> QuestionResult:
    """Score one question's ranked hits by span overlap with the expected units (or, for a
    `match="text"` question, by the first chunk of its document holding every
    `answer_contains` string)."""
    doc_versions = [v for v in versions.values() if v.info.doc_id == question.doc_id]
    located = [(h.partition_key, h.char_start, h.char_end) for h in hits]
    twin = None
    if question.match == "text":
        answerable = bool(doc_versions) and question.in_scope
        flags = [answerable and _holds(h, question) for h in hits]
        complete = any(flags[:3]) if answerable else None
    else:
        relevant: dict[str, list[Span]] = {}
        twins: dict[str, list[Span]] = {}
        units = set(question.units)
        for v in doc_versions:
            key = v.info.partition_key
            relevant[key] = label_spans(v.nodes, (*question.expected, *question.also_accepted))
            relevant[key] += own_spans(v.nodes, units) if units else []
            twins[key] = label_spans(v.nodes, question.not_relevant)
        answerable = question.in_scope and any(relevant.values())
        flags = [answerable and first_relevant_rank([loc], relevant) == 1 for loc in located]
        complete = (
            answer_complete([h.text for h in hits[:3]], question.answer_contains)
            if question.answer_contains and answerable
            else None
        )
        twin = twin_confused(located, relevant, twins) if question.not_relevant else None
    top3 = list(hits[:3])
    return QuestionResult(
        id=question.id,
        tags=question.tags,
        doc_id=question.doc_id,
        rank=next((i for i, f in enumerate(flags, start=1) if f), None),
        answerable=answerable,
        complete=complete,
        tokens3=sum(h.token_count for h in top3),
        twin=twin,
        top=[h.chunk_id for h in top3],
        question=question.question,
        expected=question.expected or question.units or question.answer_contains,
        hits=[_judged(h, f) for h, f in zip(hits, flags, strict=True)],
    )


def _mean(values: Sequence[float]) -> float:
    return round(statistics.mean(values), 4) if values else 0.0


def mean_measured(values: Sequence[float | None]) -> float | None:
    """The mean of the measured values, or None where nothing measured it (never a 0 that
    reads as a failure)."""
    measured = [v for v in values if v is not None]
    return round(statistics.mean(measured), 4) if measured else None


def range_measured(values: Sequence[float | None]) -> tuple[float, float] | None:
    """(min, max) of the measured values, None where nothing measured them."""
    measured = [v for v in values if v is not None]
    return (min(measured), max(measured)) if measured else None


def by_tag(
    results: Sequence[QuestionResult], min_score: float | None = None
) -> dict[str, dict[str, float | None]]:
    """`summarize` of the questions carrying each tag, by tag."""
    tags = sorted({t for r in results for t in r.tags})
    return {t: summarize([r for r in results if t in r.tags], min_score) for t in tags}


NO_QUESTIONS = "no questions"
NOT_MEASURED = {
    "hit@1": NO_QUESTIONS,
    "hit@3": NO_QUESTIONS,
    "hit@5": NO_QUESTIONS,
    "mrr@10": NO_QUESTIONS,
    "tokens@3": NO_QUESTIONS,
    "answer_complete@3": "no question with answer_contains",
    "twin_confusion": "no question with not_relevant",
    "hit@3_min_score": NO_QUESTIONS,
    "refused_in_scope": NO_QUESTIONS,
    "answered_out_of_scope": "no out-of-scope question",
}
"""Why a metric is None (`null` in the JSON, – in the report): nothing measured it."""


def not_measured(metrics: Mapping[str, float | None]) -> dict[str, str]:
    """The metrics of `metrics` that are None, each with the reason."""
    return {m: NOT_MEASURED.get(m, NO_QUESTIONS) for m, v in metrics.items() if v is None}


def abstention(results: Sequence[QuestionResult], min_score: float) -> dict[str, float | None]:
    """What a search with `min_score` does on these questions: `answered_out_of_scope`,
    the share of out-of-scope questions that still get a hit (it should abstain);
    `refused_in_scope`, the share of scored questions that get none (it should answer);
    and `hit@3` of the scored questions once the hits below it are dropped."""
    outside = [r for r in results if r.out_of_scope]
    scored = [r for r in results if r.answerable]

    def cosines(r: QuestionResult) -> list[float | None]:
        return [h.cosine for h in r.hits]

    return {
        "min_score": min_score,
        "out_of_scope_questions": float(len(outside)),
        "answered_out_of_scope": mean_measured(
            [float(answers(cosines(r), min_score)) for r in outside]
        ),
        "refused_in_scope": mean_measured(
            [float(not answers(cosines(r), min_score)) for r in scored]
        ),
        "hit@3": mean_measured(
            [
                hit_at(rank_above([h.relevant for h in r.hits], cosines(r), min_score), 3)
                for r in scored
            ]
        ),
    }


def sweep_thresholds(results: Sequence[QuestionResult], min_score: float | None) -> list[float]:
    """The thresholds of the abstention sweep: steps of 0.01 (0.02 or 0.05 when the range
    is wide) over the range of the questions' best cosines, where the figures move, and
    `min_score` itself."""
    best = [max(c) for r in results if (c := [h.cosine for h in r.hits if h.cosine is not None])]
    if not best:
        return [] if min_score is None else [min_score]
    low, high = np.floor(min(best) * 100) / 100 - 0.01, np.ceil(max(best) * 100) / 100
    step = next(s for s in (0.01, 0.02, 0.05, 0.1) if (high - low) / s <= 30)
    grid = {round(float(t), 2) for t in np.arange(low, high + step / 2, step)}
    if min_score is not None:
        grid.add(round(min_score, 4))
    return sorted(grid)


def summarize(
    results: Sequence[QuestionResult], min_score: float | None = None
) -> dict[str, float | None]:
    """Retrieval metrics over the answerable questions of one run; with `min_score`, also
    the abstention figures at it (`abstention`: `answered_out_of_scope`,
    `refused_in_scope`, `hit@3_min_score`, `out_of_scope_questions`). A metric no question
    measured is None (`NOT_MEASURED` says why)."""
    scored = [r for r in results if r.answerable]
    complete = [1.0 if r.complete else 0.0 for r in scored if r.complete is not None]
    twins = [1.0 if r.twin else 0.0 for r in results if r.twin is not None]
    figures: dict[str, float | None] = {}
    if min_score is not None:
        at = abstention(results, min_score)
        figures = {
            "out_of_scope_questions": at["out_of_scope_questions"],
            "answered_out_of_scope": at["answered_out_of_scope"],
            "refused_in_scope": at["refused_in_scope"],
            "hit@3_min_score": at["hit@3"],
        }
    return figures | {
        "questions": float(len(scored)),
        "hit@1": mean_measured([hit_at(r.rank, 1) for r in scored]),
        "hit@3": mean_measured([hit_at(r.rank, 3) for r in scored]),
        "hit@5": mean_measured([hit_at(r.rank, 5) for r in scored]),
        "mrr@10": mean_measured([reciprocal_rank(r.rank, 10) for r in scored]),
        "answer_complete@3": mean_measured(complete),
        "tokens@3": None if not scored else round(_mean([float(r.tokens3) for r in scored]), 1),
        "twin_confusion": mean_measured(twins),
        # how many questions the last two are over (0: not measured, None above)
        "answer_complete_questions": float(len(complete)),
        "twin_questions": float(len(twins)),
    }


def question_from_json(raw: dict[str, Any]) -> QuestionResult:
    """A `per_question` entry of `metrics.json` back as a QuestionResult (what the report
    reads of it; the other fields are not stored)."""
    return QuestionResult(
        id=raw["id"],
        tags=tuple(raw.get("tags", ())),
        doc_id=raw.get("doc_id"),
        rank=raw.get("rank"),
        answerable=bool(raw.get("answerable")),
        complete=None,
        tokens3=0,
        twin=None,
        question=raw.get("question", ""),
        expected=tuple(raw.get("expected", ())),
        hits=[JudgedHit(**h) for h in raw.get("hits", [])],
    )
