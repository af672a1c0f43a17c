"""What `trecho eval` computes: the strategies compared on the index search uses (or a
model named), or several models side by side, each in a scratch folder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rag_assets.core.eval import (
    DrawSettings,
    EvalOptions,
    question_writer,
    resolve_strategies,
    run_eval,
    run_eval_models,
    strategy_families,
)
from rag_assets.core.index import Index
from rag_assets.core.lake import Lake, LakeError
from rag_assets.settings import Settings


@dataclass(frozen=True)
class Asked:
    """What `trecho eval`'s flags ask: the `strategies` (names, `all` or `standard`;
    None: `standard`) at `offsets` start offsets, the search `mode`, and where its
    `progress` lines go; the questions drawn from the lake (`draw`, and the `llm` that
    writes some)."""

    strategies: Sequence[str] | None
    offsets: int
    mode: str
    progress: Callable[[str], None]
    draw: DrawSettings = DrawSettings()
    llm: tuple[str | None, str, str | None] = (None, "", None)
    """The LLM that writes drawn questions: (url, model, API key); no url: none."""

    def families(self, embedder: Any) -> dict[str, dict[str, Any]]:
        """The strategies compared, built for `embedder`'s model (a bad name:
        ConfigError)."""
        return strategy_families(resolve_strategies(self.strategies), self.offsets, embedder)

    def options(self, settings: Settings | None = None) -> EvalOptions:
        """The eval's mode and progress; with `settings`, their vector weight and score
        floor (a scratch index's: without them, the live index's)."""
        return EvalOptions(
            mode=self.mode,  # type: ignore[arg-type]
            progress=self.progress,
            vector_weight=settings.vector_weight if settings else None,
            min_score=settings.min_score if settings else None,
        )


def evaluate(
    settings: Settings, lake: Lake, index: Index, files: Sequence[Any], asked: Asked, reuse: bool
) -> Any:
    """What `asked` names, against the default, on `index`'s model (the last result
    reused when nothing changed since, with `reuse`)."""
    options = replace(asked.options(), strategies=asked.families(index.embedder))
    url, model, key = asked.llm
    writer = question_writer(lake, index.embedder.token_counter(), url, model, key)
    result = run_eval(
        lake,
        index.embedder,
        index,
        files,
        options,
        history=settings.keep_history,
        reuse=reuse,
        draw=replace(asked.draw, writer=writer),
    )
    for failure in writer.failures[:3] if writer else ():
        asked.progress(f"no question written: {failure}")
    return result


def evaluate_models(
    settings: Settings, lake: Lake, models: Sequence[str], files: Sequence[Any], asked: Asked
) -> dict[str, Any]:
    """`evaluate` for each model of `models` (by `Settings.embedder`, each indexing the
    default policy in a scratch folder), by model id; an unknown model fails before any
    work."""
    resolve_strategies(asked.strategies)  # a bad name fails before any model loads
    try:
        embedders = [settings.embedder(m.strip()) for m in models if m.strip()]
        for embedder in embedders:
            embedder.token_counter()  # an unknown model fails here, before any work
        return run_eval_models(
            lake,
            embedders,
            files,
            asked.families,
            asked.options(settings),
            history=settings.keep_history,
            draw=asked.draw,
        )
    except OSError as exc:  # a file the eval reads (a bad value: already a ConfigError)
        raise LakeError(str(exc)) from exc
