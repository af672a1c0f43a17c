"""The eval: the same questions, the same extracted text and the same embedder, asked of
several chunking strategies side by side, scoring both retrieval and chunk damage.

The default policy is evaluated on the live index (what users query); every other
strategy is chunked from the same extracted text and indexed in a scratch LanceDB folder.
Size-based strategies run over several start offsets and report mean and range, because
where the first cut falls moves their scores. Out-of-scope questions (no `expected`) are
not scored for retrieval but give the abstention figures: with the served `min_score`,
how often a search answers when it should not, and refuses when it should answer.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from rag_assets.core.chunking import SIZED, Chunker, build_chunker, offsets_for
from rag_assets.core.corpus import Version
from rag_assets.core.embedding import Embedder, RememberingEmbedder
from rag_assets.core.eval.drawn import kinds_of
from rag_assets.core.eval.metrics import chunk_damage
from rag_assets.core.eval.questions import (
    Question,
    QuestionResult,
    abstention,
    by_tag,
    judge,
    mean_measured,
    not_measured,
    question_from_json,
    range_measured,
    summarize,
    sweep_thresholds,
)
from rag_assets.core.eval.scratch import (
    EmbedClock,
    embed_memo,
    index_scratch,
    naming,
    remembered_queries,
)
from rag_assets.core.index import EmbeddingCache, Index, Mode
from rag_assets.core.lake import Chunk
from rag_assets.core.request import SearchRequest

METRICS = (
    "hit@1",
    "hit@3",
    "hit@5",
    "mrr@10",
    "answer_complete@3",
    "tokens@3",
    "orphans",
    "mid_line_starts",
    "truncated",
    "unnamed_tables",
    "flagged_tables",
    "off_heading_paths",
    "twin_confusion",
)


STANDARD = (
    "structural-no-repack",
    "legal-article",
    "fixed_tokens-512-o64",
    "fixed_tokens-256-o0",
)
"""A quick comparison: `trecho eval --strategies standard`, and its default."""

ALL = (
    "fixed_tokens-512-o64",
    "fixed_tokens-512-o128",
    "fixed_tokens-256-o0",
    "fixed_tokens-128-o0",
    "recursive-512-o64",
    "structural",
    "structural-no-repack",
    "legal-article",
    "legal-paragraph",
    "legal-point",
    "default-noheader",
    "fixed_tokens-512-o64-noheader",
)
"""Every strategy of the full report, compared with the default policy (`--strategies all`):
the common recipe (512-token windows, overlap 64 or 128), smaller windows, LangChain-style
recursive splitting at the same size, the structure-aware families, and the default policy
and the common recipe without the context header (what the header is worth)."""

ALIASES: dict[str, tuple[str, ...]] = {"all": ALL, "standard": STANDARD}


def resolve_strategies(names: Sequence[str] | None) -> list[str]:
    """Strategy names to compare with the default: aliases (`all`, `standard`) expanded,
    `default` dropped (it is always evaluated), duplicates removed, order kept.

    No names means `standard`, the quick comparison.
    """
    out: list[str] = []
    for name in names or ("standard",):
        for item in ALIASES.get(name, (name,)):
            if item != "default" and item not in out:
                out.append(item)
    return out


def strategy_families(
    names: Sequence[str] = STANDARD, offsets: int = 4, embedder: Embedder | None = None
) -> dict[str, dict[str, Chunker]]:
    """Strategies by name → {variant: chunker}; fixed windows run over `offsets` start
    offsets (mean and range reported), unless the name fixes one (`-s<n>`)."""
    families: dict[str, dict[str, Chunker]] = {}
    for name in names:
        sized = SIZED.match(name.removesuffix("-noheader"))
        if sized and sized.group(1) != "recursive" and sized.group(4) is None:
            size = int(sized.group(2))
            suffix = "-noheader" if name.endswith("-noheader") else ""
            base = name.removesuffix("-noheader")
            families[name] = {
                f"s{o}": build_chunker(f"{base}-s{o}{suffix}", embedder)
                for o in offsets_for(size, offsets)
            }
        else:
            families[name] = {"": build_chunker(name, embedder)}
    return families


def _damage(chunks: Sequence[Chunk], versions: dict[str, Version]) -> dict[str, float | None]:
    rows = [row for v in versions.values() for row in v.rows]
    texts = {k: v.doc.text for k, v in versions.items()}
    damage = chunk_damage(chunks, rows, texts, {k: v.nodes for k, v in versions.items()})
    found = [v.bookmarks for v in versions.values()]
    bookmarks = {"bookmarks": sum(t for _, t in found), "bookmarks_found": sum(f for f, _ in found)}
    return {k: float(v) for k, v in (damage.as_dict() | bookmarks).items()}


def run_chunks(
    chunks: Sequence[Chunk],
    versions: dict[str, Version],
    questions: Sequence[Question],
    index: Index,
    k: int,
    mode: Mode,
    min_score: float | None = None,
) -> tuple[dict[str, float | None], list[QuestionResult]]:
    """Search every question in an index holding `chunks` (every hit: no min_score);
    metrics, with the abstention figures at `min_score` when given, + per-question
    results."""
    # exact: an ANN index would make the figures depend on its state, not on the chunks
    hits = index.search_many(
        [SearchRequest(query=q.question, k=k, mode=mode) for q in questions], exact=True
    )
    results = [judge(q, h, versions) for q, h in zip(questions, hits, strict=True)]
    metrics = summarize(results, min_score)
    metrics.update(_damage(chunks, versions))
    return metrics, results


def by_document(
    chunks: Sequence[Chunk], versions: dict[str, Version], results: Sequence[QuestionResult]
) -> dict[str, dict[str, float | None]]:
    """Retrieval metrics of each document's questions and the damage of its chunks, per
    doc_id: which document drags a strategy down."""
    out: dict[str, dict[str, float | None]] = {}
    for doc_id in sorted({v.info.doc_id for v in versions.values()}):
        mine = {k: v for k, v in versions.items() if v.info.doc_id == doc_id}
        out[doc_id] = summarize([r for r in results if r.doc_id == doc_id]) | _damage(
            [c for c in chunks if c.partition_key in mine], mine
        )
    return out


@dataclass
class EvalResult:
    """Per strategy: the metrics (mean over offsets) and, for size-based ones, the range,
    the metrics of each start offset, and breakdowns by question tag and by document. A
    metric no question measured is None (`null` in the JSON, – in the report; `not_measured`
    says why)."""

    strategies: dict[str, dict[str, float | None]]
    ranges: dict[str, dict[str, tuple[float, float]]]
    by_tag: dict[str, dict[str, dict[str, float | None]]]
    questions: int
    mode: str
    by_doc: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    offsets: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    model: str = ""
    """The model id the run embedded with."""
    index_time: dict[str, float] = field(default_factory=dict)
    """When the default policy was indexed by the run itself (`--models`): its chunk texts
    embedded (`texts`) and the seconds that took (`seconds`)."""
    min_score: float | None = None
    """The min_score the abstention figures are measured at (the served default; None in
    mode fts: no cosine)."""
    sweep: list[dict[str, float | None]] = field(default_factory=list)
    """The default policy's abstention figures (`abstention`) at each threshold of
    `sweep_thresholds`."""
    per_question: list[QuestionResult] = field(default_factory=list)
    """The default policy's result on each question, with its hits."""
    uncovered: list[str] = field(default_factory=list)
    """The indexed documents no scored question is about."""
    start_offsets: int = 1
    """How many start offsets the size-based strategies ran at (1: one run, no range)."""
    reused: str = ""
    """When this result was reused (`core.eval.reuse`): when the eval it comes from
    wrote it (empty: computed now)."""
    drawn: str = ""
    """The draw of questions from the lake as sources name it (`drawn (80, seed 0)`)."""
    kinds: dict[str, int] = field(default_factory=dict)
    """Questions asked of each drawn kind (`table`, `section`, `written`; `core.eval.drawn`)."""

    @property
    def not_measured(self) -> dict[str, str]:
        """The default policy's metrics no question measured, each with the reason."""
        return not_measured(self.strategies.get("default", {}))

    def to_json(self) -> dict[str, Any]:
        """`{"strategies": {name: {metric: value}}, ...}` as `trecho eval --json` prints."""
        return {
            "strategies": self.strategies,
            "ranges": {s: {m: list(r) for m, r in v.items()} for s, v in self.ranges.items()},
            "by_tag": self.by_tag,
            "by_doc": self.by_doc,
            "offsets": self.offsets,
            "questions": self.questions,
            "mode": self.mode,
            "model": self.model,
            "index_time": self.index_time,
            "min_score": self.min_score,
            "sweep": self.sweep,
            "per_question": [r.to_json() for r in self.per_question],
            "uncovered": self.uncovered,
            "start_offsets": self.start_offsets,
            "drawn": self.drawn,
            "kinds": self.kinds,
            "not_measured": self.not_measured,
        }

    @classmethod
    def from_json(cls, payload: dict[str, Any]) -> EvalResult:
        """The result back from `metrics.json` (as `to_json` wrote it)."""
        return cls(
            strategies=payload["strategies"],
            ranges={
                s: {m: (r[0], r[1]) for m, r in v.items()}
                for s, v in payload.get("ranges", {}).items()
            },
            by_tag=payload.get("by_tag", {}),
            questions=int(payload.get("questions", 0)),
            mode=str(payload.get("mode", "")),
            by_doc=payload.get("by_doc", {}),
            offsets=payload.get("offsets", {}),
            model=str(payload.get("model", "")),
            index_time=payload.get("index_time", {}),
            min_score=payload.get("min_score"),
            sweep=payload.get("sweep", []),
            per_question=[question_from_json(q) for q in payload.get("per_question", [])],
            uncovered=payload.get("uncovered", []),
            start_offsets=int(payload.get("start_offsets", 1)),
            drawn=str(payload.get("drawn", "")),
            kinds=payload.get("kinds", {}),
        )


def _mean_tables(
    tables: Sequence[dict[str, dict[str, float | None]]],
) -> dict[str, dict[str, float | None]]:
    """Mean, key by key, of per-document tables of several start offsets."""
    keys = [k for k in tables[0]] if tables else []
    return {k: {m: mean_measured([t[k][m] for t in tables]) for m in tables[0][k]} for k in keys}


def _quiet(_: str) -> None:
    """No progress lines."""


@dataclass(frozen=True)
class EvalOptions:
    """How an eval runs, the same for every strategy it compares: `strategies` (name ->
    start offset -> chunker; None: `strategy_families`' standard set), the top `k`
    searched, the search `mode`, a `progress` line per step, the `vector_weight` a
    scratch index fuses with when there is no live index (None: the model's default) and
    the `min_score` the abstention figures are measured at (None: the live index's)."""

    strategies: dict[str, dict[str, Chunker]] | None = None
    k: int = 10
    mode: Mode = "hybrid"
    progress: Callable[[str], None] = _quiet
    vector_weight: float | None = None
    min_score: float | None = None


def evaluate(
    versions: dict[str, Version],
    questions: Sequence[Question],
    embedder: Embedder,
    live_index: Index | None,
    live_chunks: Sequence[Chunk] | None,
    options: EvalOptions = EvalOptions(),
    cache: EmbeddingCache | None = None,
    keep: EmbeddingCache | None = None,
) -> EvalResult:
    """Evaluate the default policy (live index) and every other strategy side by side
    (`options`: which, and how).

    Every strategy is cut first and its distinct chunk texts are embedded (one call per
    strategy, so a backend's line about them names it), skipping those `cache` (the
    live index's) or `keep` (the eval's own, filled here) holds.
    Every scratch index fuses with the live index's vector weight (without a live index:
    `options.vector_weight`). The abstention figures are measured at
    `options.min_score` and, for the default policy, over a sweep of thresholds.
    """
    strategies = options.strategies
    strategies = strategy_families(embedder=embedder) if strategies is None else strategies
    k, mode, progress = options.k, options.mode, options.progress
    vector_weight, min_score = options.vector_weight, options.min_score
    counter = embedder.token_counter()
    result = EvalResult({}, {}, {}, 0, mode, model=embedder.model_id)
    memo: dict[str, np.ndarray] = {}
    # each question embedded once, whatever the strategies compared
    queries = RememberingEmbedder(embedder, max(1, len(questions)))
    scratch = cast(Embedder, queries)
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="trecho-eval-"))
        if live_index is None or live_chunks is None:
            default = build_chunker("default", embedder)
            live_chunks = [c for v in versions.values() for c in default(v, counter)]
            clock = EmbedClock()
            with naming("eval default policy (scratch index)"):
                live_index = index_scratch(
                    live_chunks,
                    versions,
                    scratch,
                    Path(tmp) / "default",
                    memo,
                    clock,
                    vector_weight,
                )
            result.index_time = {"texts": float(clock.texts), "seconds": round(clock.seconds, 2)}
        stack.enter_context(remembered_queries(live_index, queries))
        progress("default")
        floor = live_index.min_score_for(mode, min_score)
        result.min_score = floor
        metrics, results = run_chunks(live_chunks, versions, questions, live_index, k, mode, floor)
        result.strategies["default"] = metrics
        result.by_tag["default"] = by_tag(results, floor)
        result.per_question = results
        result.sweep = [abstention(results, t) for t in sweep_thresholds(results, floor)]
        covered = {r.doc_id for r in results if r.answerable}
        result.uncovered = sorted({v.info.doc_id for v in versions.values()} - covered)
        result.by_doc["default"] = by_document(live_chunks, versions, results)
        cut = {
            (name, variant): [c for v in versions.values() for c in chunker(v, counter)]
            for name, variants in strategies.items()
            for variant, chunker in variants.items()
        }
        texts = list(dict.fromkeys(c.text for chunks in cut.values() for c in chunks))
        if texts:
            progress(f"embedding {len(texts)} distinct chunk texts of {len(cut)} runs")
        for name in strategies:  # one call per strategy: a cut at the limit names it
            mine = [c.text for (n, _), chunks in cut.items() if n == name for c in chunks]
            with naming(f"eval baseline {name}"):
                embed_memo(embedder, mine, memo, cache=cache, keep=keep)
        for name, variants in strategies.items():
            runs: dict[str, dict[str, float | None]] = {}
            docs: list[dict[str, dict[str, float | None]]] = []
            all_results: list[QuestionResult] = []
            for variant in variants:
                progress(f"{name} {variant}".strip())
                chunks = cut[(name, variant)]
                folder = Path(tmp) / f"{name}-{variant}"
                index = index_scratch(
                    chunks, versions, scratch, folder, memo, vector_weight=live_index.vector_weight
                )
                metrics, results = run_chunks(chunks, versions, questions, index, k, mode, floor)
                runs[variant or name] = metrics
                docs.append(by_document(chunks, versions, results))
                all_results.extend(results)
            first = next(iter(runs.values()))
            result.strategies[name] = {
                m: mean_measured([r[m] for r in runs.values()]) for m in first
            }
            if len(runs) > 1:
                spans = {m: range_measured([r[m] for r in runs.values()]) for m in first}
                result.ranges[name] = {m: span for m, span in spans.items() if span is not None}
                result.offsets[name] = runs
                result.start_offsets = max(result.start_offsets, len(runs))
            result.by_tag[name] = by_tag(all_results, floor)
            result.by_doc[name] = _mean_tables(docs)
    result.questions = int(result.strategies["default"]["questions"] or 0)
    result.kinds = kinds_of(questions)
    return result
