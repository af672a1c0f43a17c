"""The eval: questions, strategies side by side, metrics, regressions and the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_assets.core.faces import lazy_names

# The names other packages use from modules the face does not load: each imported from
# its module on first use, so that importing the package costs no more than the modules
# a caller asks for (`_LAZY`; the imports below are for type checkers and readers).
if TYPE_CHECKING:
    from rag_assets.core.eval.drawn import DrawSettings
    from rag_assets.core.eval.evaluation import (
        ALL,
        STANDARD,
        EvalOptions,
        resolve_strategies,
        strategy_families,
    )
    from rag_assets.core.eval.metrics import ChunkDamage, chunk_damage, orphans
    from rag_assets.core.eval.regression import Regression, hit3_regression, previous_report
    from rag_assets.core.eval.report import models_table, render_markdown, write_report
    from rag_assets.core.eval.report.markdown import markdown_table, tag_table
    from rag_assets.core.eval.runner import (
        indexed_versions,
        question_files,
        question_writer,
        report_sources,
        run_eval,
        run_eval_models,
    )

__all__ = [
    "DrawSettings",
    "question_writer",
    "report_sources",
    "ALL",
    "STANDARD",
    "ChunkDamage",
    "EvalOptions",
    "Regression",
    "chunk_damage",
    "hit3_regression",
    "indexed_versions",
    "markdown_table",
    "models_table",
    "orphans",
    "previous_report",
    "question_files",
    "render_markdown",
    "resolve_strategies",
    "run_eval",
    "run_eval_models",
    "strategy_families",
    "tag_table",
    "write_report",
]

_LAZY: dict[str, str] = {
    "DrawSettings": "rag_assets.core.eval.drawn",
    "question_writer": "rag_assets.core.eval.runner",
    "report_sources": "rag_assets.core.eval.runner",
    "ALL": "rag_assets.core.eval.evaluation",
    "ChunkDamage": "rag_assets.core.eval.metrics",
    "EvalOptions": "rag_assets.core.eval.evaluation",
    "Regression": "rag_assets.core.eval.regression",
    "STANDARD": "rag_assets.core.eval.evaluation",
    "chunk_damage": "rag_assets.core.eval.metrics",
    "hit3_regression": "rag_assets.core.eval.regression",
    "indexed_versions": "rag_assets.core.eval.runner",
    "markdown_table": "rag_assets.core.eval.report.markdown",
    "models_table": "rag_assets.core.eval.report",
    "orphans": "rag_assets.core.eval.metrics",
    "previous_report": "rag_assets.core.eval.regression",
    "question_files": "rag_assets.core.eval.runner",
    "render_markdown": "rag_assets.core.eval.report",
    "resolve_strategies": "rag_assets.core.eval.evaluation",
    "run_eval": "rag_assets.core.eval.runner",
    "run_eval_models": "rag_assets.core.eval.runner",
    "strategy_families": "rag_assets.core.eval.evaluation",
    "tag_table": "rag_assets.core.eval.report.markdown",
    "write_report": "rag_assets.core.eval.report",
}


__getattr__ = lazy_names(__name__, _LAZY)
