"""Running the eval on a lake: the versions in the index, the question files, one model
or several (the CLI and the eval asset)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from rag_assets.core.chunking import Situator
from rag_assets.core.corpus import Version, load_chunks, load_version
from rag_assets.core.embedding import Embedder, TokenCounter
from rag_assets.core.eval.drawn import DrawSettings, draw_questions
from rag_assets.core.eval.evaluation import (
    Chunker,
    EvalOptions,
    EvalResult,
    evaluate,
    strategy_families,
)
from rag_assets.core.eval.questions import Question, load_questions
from rag_assets.core.eval.reuse import VECTORS, inputs_digest, keep_result, result_path, reused
from rag_assets.core.eval.written import QuestionWriter
from rag_assets.core.index import (
    EmbeddingCache,
    Index,
)
from rag_assets.core.lake import Lake, LakeError, LakePath
from rag_assets.core.lifecycle import scan_versions
from rag_assets.core.stages import CHUNKS, FOLDERS


def indexed_versions(lake: Lake, index: Index, history: bool = False) -> dict[str, Version]:
    """Every live version that has reached the index, loaded from the lake (`history`:
    superseded versions kept, the `keep_history` setting)."""
    live = scan_versions(lake, history).live
    counts = index.partition_counts() if index.exists() else {}
    return {k: load_version(lake, k) for k in live if counts.get(k)}


def question_files(lake: Lake, given: Sequence[Path] | None = None) -> list[LakePath]:
    """The question files to use: those given, else every `eval/*.jsonl` of the lake."""
    files = list(given) if given else sorted(lake.eval_dir.glob("*.jsonl"))
    for path in files:
        if not path.is_file():
            raise LakeError(f"{path}: question file not found")
    return files


WRITTEN_CACHE = "drawn-questions"
"""The folder under the lake's local cache holding the questions an LLM wrote."""


def question_writer(
    lake: Lake, counter: TokenCounter, url: str | None, model: str = "", api_key: str | None = None
) -> QuestionWriter | None:
    """The LLM that writes questions for the draw (any OpenAI-compatible endpoint at `url`,
    called as the contextual step calls it), its questions cached in the lake's local
    cache by document, passage, model and prompt; None without a `url`."""
    if not url:
        return None
    cache = lake.local_cache_dir / WRITTEN_CACHE
    situator = Situator(url, model or "default", counter, Path(cache), api_key=api_key)
    return QuestionWriter(situator.ask, situator.model, Path(cache))


def report_sources(files: Sequence[LakePath], result: EvalResult) -> list[str]:
    """What the report says its questions came from: the question files' names, and the
    draw (`drawn (80, seed 0)`) when questions were drawn from the lake. Reports compare
    hit@3 only with reports of the same sources."""
    return [f.name for f in files] + ([result.drawn] if result.drawn else [])


def asked_questions(
    files: Sequence[LakePath], versions: dict[str, Version], draw: DrawSettings
) -> tuple[list[Question], str]:
    """The questions of `files` about the indexed documents, and those drawn from the
    versions (`draw.count`: by default only when there is no question file), with the
    draw's label (empty: nothing drawn)."""
    docs = {v.info.doc_id for v in versions.values()}
    questions: list[Question] = [
        q for path in files for q in load_questions(path) if q.doc_id is None or q.doc_id in docs
    ]
    count = draw.count(bool(files))
    drawn = draw_questions(versions, count, draw)
    return [*questions, *drawn], (draw.label(len(drawn)) if count else "")


def run_eval(
    lake: Lake,
    embedder: Embedder,
    index: Index,
    files: Sequence[LakePath],
    options: EvalOptions = EvalOptions(),
    history: bool = False,
    reuse: bool = True,
    draw: DrawSettings = DrawSettings(),
) -> EvalResult:
    """Evaluate the lake's indexed versions on the questions of `files` and those drawn
    from the lake (`draw`, with the LLM that writes some when it has one) (`options`: the
    strategies, mode and progress; the index's own vector weight and score floor).

    The baseline strategies' chunk vectors are kept by content and model under
    `<lake>/cache/eval-vectors` (a text embedded once is not embedded again by a later
    eval, whatever model switch happened between). With `reuse`, when nothing the eval
    reads changed since the last one of this model and mode (`core.eval.reuse`), that
    result is returned, its `reused` saying since when."""
    versions = indexed_versions(lake, index, history)
    if not versions:
        raise LakeError(f"{lake.root}: nothing is indexed yet; run `trecho materialize` first")
    questions, drawn = asked_questions(files, versions, draw)
    live_chunks = [c for key in versions for c in load_chunks(lake, key)]
    strategies = options.strategies
    strategies = strategy_families(embedder=embedder) if strategies is None else strategies
    mode, progress = options.mode, options.progress
    settings = {
        "model": embedder.model_id,
        "prefixes": [embedder.query_prefix, embedder.passage_prefix],
        "mode": mode,
        "vector_weight": index.vector_weight,
        "min_score": index.min_score_for(mode, None),
        "rrf_k": getattr(index, "rrf_k", None),
        "rows": index.partition_counts() if index.exists() else {},
    }
    live = [c.content_hash for c in live_chunks]
    digest = inputs_digest(versions, live, questions, settings, strategies)
    kept = result_path(lake.local_cache_dir, embedder.model_id, mode)
    if reuse and (found := reused(kept, digest)) is not None:
        result, written = found
        result.reused = written
        result.drawn = drawn
        progress(f"reused the result of {written}: no index row, question or code changed")
        return result
    index.update_indexes(max_lag_rows=0)  # BM25 over every row, as the scratch indexes
    result = evaluate(
        versions,
        questions,
        embedder,
        index,
        live_chunks,
        replace(options, strategies=strategies),
        cache=EmbeddingCache(index.uri, embedder),  # the live chunks' vectors, reused
        keep=EmbeddingCache(lake.local_cache_dir / VECTORS, embedder),
    )
    result.drawn = drawn
    keep_result(kept, digest, result)
    return result


def run_eval_models(
    lake: Lake,
    embedders: Sequence[Embedder],
    files: Sequence[LakePath],
    strategies: Callable[[Embedder], dict[str, dict[str, Chunker]]],
    options: EvalOptions = EvalOptions(),
    history: bool = False,
    draw: DrawSettings = DrawSettings(),
) -> dict[str, EvalResult]:
    """The eval of several models side by side, by model id: for each, every live version
    already extracted is chunked by the default policy for that model's tokenizer and
    indexed in a scratch folder (timed: the model's index time), then the `strategies`
    built for it are compared as in `run_eval` (`options`: mode, progress, vector weight,
    abstention at `min_score`, None: each model's default; its `strategies` is not read;
    `draw`: questions drawn from the lake, the same for every model)."""
    keys = [
        k for k in scan_versions(lake, history).live if lake.stage_path(FOLDERS[CHUNKS], k).exists()
    ]
    if not keys:
        raise LakeError(f"{lake.root}: nothing is extracted yet; run `trecho materialize` first")
    versions = {k: load_version(lake, k) for k in keys}
    questions, drawn = asked_questions(files, versions, replace(draw, writer=None))
    results: dict[str, EvalResult] = {}
    for embedder in embedders:
        results[embedder.model_id] = evaluate(
            versions,
            questions,
            embedder,
            None,
            None,
            replace(
                options,
                strategies=strategies(embedder),
                progress=lambda s, m=embedder.model_id: options.progress(f"{m}: {s}"),
            ),
        )
        results[embedder.model_id].drawn = drawn
    return results
