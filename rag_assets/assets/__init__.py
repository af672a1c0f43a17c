"""One thin asset module per stage: the asset reads its config and resources, calls one
pipeline function (`rag_assets.core.pipeline`), and turns its result into metadata and
checks.

The model-dependent assets (chunks, embeddings: their code versions carry the model) are
built once, for the configured model, by `all_assets` (what `build_definitions` calls);
`PARTITIONED` is `partitioned` for the default model, built on first use
(`core.stages.PIPELINE` as assets: tests/test_stages.py holds them equal).
"""

from __future__ import annotations

import functools
from typing import Any

from dagster import AssetsDefinition

from rag_assets.assets.chunks import build_chunks
from rag_assets.assets.conventions import conventional
from rag_assets.assets.embeddings import build_embeddings
from rag_assets.assets.eval_report import eval_report
from rag_assets.assets.linearized_tables import linearized_tables
from rag_assets.assets.page_text import page_text
from rag_assets.assets.raw_pdf import raw_pdf
from rag_assets.assets.structure_tree import structure_tree

EXTRACTION_ASSETS = [raw_pdf, page_text, structure_tree, linearized_tables]
"""The assets that do not depend on the model (`core.stages.EXTRACTION`)."""


def partitioned(model_id: str, max_tokens: int) -> list[AssetsDefinition]:
    """The partitioned assets in pipeline order, the model-dependent ones built for the
    model `model_id` (its token limit `max_tokens`: part of the chunks code version)."""
    return [*EXTRACTION_ASSETS, build_chunks(model_id, max_tokens), build_embeddings(model_id)]


def all_assets(model_id: str, max_tokens: int) -> list[AssetsDefinition]:
    """Every asset of the code location for one model: `partitioned` and the report,
    with owners, kinds, tags and the report's freshness (`conventions.conventional`)."""
    return conventional([*partitioned(model_id, max_tokens), eval_report])


@functools.cache
def _default() -> list[AssetsDefinition]:
    """`partitioned` for the default model, built once on first use."""
    from rag_assets.core.embedding import Embedder

    model = Embedder()
    return partitioned(model.model_id, model.max_tokens)


def __getattr__(name: str) -> Any:
    """`PARTITIONED` for the default model (built on first use)."""
    if name == "PARTITIONED":
        return _default()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EXTRACTION_ASSETS",
    "all_assets",
    "eval_report",
    "linearized_tables",
    "page_text",
    "partitioned",
    "raw_pdf",
    "structure_tree",
]
