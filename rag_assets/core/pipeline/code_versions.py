"""Every stage's code version, in one place: what Dagster shows stale and what the
reconcile plan compares with the version each partition last ran with.

The strings are those the assets carried before they moved here, byte for byte: a
changed string marks every partition of its stage (and the stages after it) stale. Bump
one only when the stage's output changes; say so in docs/design.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from rag_assets.core.stages import (
    CHUNKS,
    EMBEDDINGS,
    LINEARIZED_TABLES,
    PAGE_TEXT,
    RAW_PDF,
    STRUCTURE_TREE,
)

CODE_VERSIONS: Mapping[str, str] = MappingProxyType(
    {
        RAW_PDF: "1",
        PAGE_TEXT: "5",  # 5: the logical tables joined once and stored (issue 58)
        STRUCTURE_TREE: "3",
        LINEARIZED_TABLES: "4",
        CHUNKS: "2",
        EMBEDDINGS: "2",
    }
)
"""Each partitioned stage's own code version (chunks and embeddings: before the model's
part is added, `chunks_code_version`, `embeddings_code_version`)."""


EVAL_REPORT_CODE_VERSION = "1"
"""The eval report's code version: bump it when the report's figures would change for
the same index and questions (Dagster then shows it stale)."""


def chunks_code_version(model_id: str, max_tokens: int) -> str:
    """The chunks stage's code version for a model: chunks are cut to its tokenizer and
    token limit, so a model change shows `chunks` stale in the UI with `embeddings`, and
    the reconcile plan re-cuts them (extraction kept)."""
    return f"{CODE_VERSIONS[CHUNKS]}+{model_id}+{max_tokens}t"


def embeddings_code_version(model_id: str) -> str:
    """The embeddings stage's code version for `model_id`: a model change shows every
    partition as changed, and the reconcile plan re-embeds it."""
    return f"{CODE_VERSIONS[EMBEDDINGS]}+{model_id}"


def stage_code_versions(model_id: str, max_tokens: int) -> dict[str, str]:
    """The code version of each stage a version's run goes through, for the configured
    model (its id and token limit): what the definitions give the assets."""
    current = dict(CODE_VERSIONS)
    current[CHUNKS] = chunks_code_version(model_id, max_tokens)
    current[EMBEDDINGS] = embeddings_code_version(model_id)
    return current
