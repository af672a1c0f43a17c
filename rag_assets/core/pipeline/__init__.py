"""The pipeline: every stage's body, free of Dagster, one function (or one method) a
stage, each reading what `stages.READS` names, writing its stage's output and returning
what its asset turns into metadata and checks; the stages' code versions; model
switching.

- `extraction`: raw_pdf (`read_raw`, `register_version`), page_text (`extract_pages`),
  structure_tree (`build_structure`), linearized_tables (`linearize_version`)
- `cutting`: chunks (`Cutting.cut_version`)
- `indexing`: embeddings (`Indexing.index_version`, with the version's lifecycle)
- `models`: switching models (progress, promote once complete, drop)
- `code_versions`: every stage's code version, defined once

The pipeline sits on top of the core: it uses the lake, the corpus, chunking, the index,
the lifecycle and the eval's damage counts; only the assets, the orchestration and the
CLI stand on it.
"""

from __future__ import annotations

from rag_assets.core.pipeline.code_versions import (
    CODE_VERSIONS,
    EVAL_REPORT_CODE_VERSION,
    chunks_code_version,
    embeddings_code_version,
    stage_code_versions,
)
from rag_assets.core.pipeline.cutting import Cut, Cutting
from rag_assets.core.pipeline.extraction import (
    Extracted,
    Linearized,
    Structured,
    build_structure,
    extract_pages,
    linearize_version,
    read_raw,
    register_version,
)
from rag_assets.core.pipeline.indexing import Indexed, Indexing
from rag_assets.core.pipeline.models import (
    DROP_GRACE_S,
    ModelProgress,
    drop_model,
    model_progress,
    promote_if_complete,
    switch_model,
)

__all__ = [
    "CODE_VERSIONS",
    "DROP_GRACE_S",
    "Cut",
    "Cutting",
    "Extracted",
    "Indexed",
    "Indexing",
    "EVAL_REPORT_CODE_VERSION",
    "Linearized",
    "ModelProgress",
    "Structured",
    "build_structure",
    "chunks_code_version",
    "drop_model",
    "embeddings_code_version",
    "extract_pages",
    "linearize_version",
    "model_progress",
    "promote_if_complete",
    "switch_model",
    "read_raw",
    "register_version",
    "stage_code_versions",
]
