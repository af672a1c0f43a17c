"""What `trecho eval` computes: the strategies compared on the index search uses (or a
model named), or several models side by side, each in a scratch folder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rag_assets.core.eval.evaluation import resolve_strategies, strategy_families
from rag_assets.core.eval.runner import run_eval, run_eval_models
from rag_assets.core.index import Index
from rag_assets.core.lake.layout import Lake, LakeError
from rag_assets.settings import Settings


def evaluate(
    settings: Settings,
    lake: Lake,
    index: Index,
    files: Sequence[Any],
    strategies: Sequence[str] | None,
    offsets: int,
    mode: str,
    progress: Callable[[str], None],
    reuse: bool = True,
) -> Any:
    """Every strategy of `strategies` (names, `all` or `standard`; None: `standard`) at
    `offsets` start offsets, against the default, on `index`'s model (the last result
    reused when nothing changed since, with `reuse`)."""
    names = resolve_strategies(strategies)
    families = strategy_families(names, offsets, index.embedder)  # a bad one: ConfigError
    return run_eval(
        lake,
        index.embedder,
        index,
        files,
        families,
        mode=mode,  # type: ignore[arg-type]
        progress=progress,
        history=settings.keep_history,
        reuse=reuse,
    )


def evaluate_models(
    settings: Settings,
    lake: Lake,
    models: Sequence[str],
    files: Sequence[Any],
    strategies: Sequence[str] | None,
    offsets: int,
    mode: str,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """`evaluate` for each model of `models` (by `Settings.embedder`, each indexing the
    default policy in a scratch folder), by model id; an unknown model fails before any
    work."""
    names = resolve_strategies(strategies)
    try:
        embedders = [settings.embedder(m.strip()) for m in models if m.strip()]
        for embedder in embedders:
            embedder.token_counter()  # an unknown model fails here, before any work
        return run_eval_models(
            lake,
            embedders,
            files,
            lambda e: strategy_families(names, offsets, e),
            mode=mode,  # type: ignore[arg-type]
            progress=progress,
            history=settings.keep_history,
            vector_weight=settings.vector_weight,
            min_score=settings.min_score,
        )
    except OSError as exc:  # a file the eval reads (a bad value: already a ConfigError)
        raise LakeError(str(exc)) from exc
