"""Asset checks, evaluated inside the stage that produces what they check.

Partitioned stages report their checks per document version in the same step, so a
blocking failure stops that version before anything downstream (embeddings) is written.
"""

from __future__ import annotations

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec

CHUNKS_FIT_MODEL = "chunks_fit_model"
NO_ORPHAN_TABLE_VALUES = "no_orphan_table_values"
NO_MID_LINE_STARTS = "no_mid_line_starts"
INDEX_MATCHES_CHUNKS = "index_matches_chunks"
UNTITLED_TEXT_SHARE = "untitled_text_share_low"
UNTITLED_THRESHOLD = 0.5

chunk_checks = [
    AssetCheckSpec(
        CHUNKS_FIT_MODEL,
        asset="chunks",
        blocking=True,
        description="No chunk is longer than the embedding model reads (nothing truncated).",
    ),
    AssetCheckSpec(
        NO_ORPHAN_TABLE_VALUES,
        asset="chunks",
        blocking=True,
        description="Every table value sits in a chunk with its column header.",
    ),
    AssetCheckSpec(
        NO_MID_LINE_STARTS,
        asset="chunks",
        description="No chunk starts inside a line and inside a sentence.",
    ),
]

embedding_checks = [
    AssetCheckSpec(
        INDEX_MATCHES_CHUNKS,
        asset="embeddings",
        description="LanceDB holds exactly this version's chunks (none missing, none stale).",
    )
]

structure_checks = [
    AssetCheckSpec(
        UNTITLED_TEXT_SHARE,
        asset="structure_tree",
        description=f"At most {UNTITLED_THRESHOLD:.0%} of the text sits outside any titled unit.",
    )
]


def count_check(name: str, count: int, what: str, warn_only: bool = False) -> AssetCheckResult:
    """A check that passes when `count` is zero."""
    return AssetCheckResult(
        check_name=name,
        passed=count == 0,
        severity=AssetCheckSeverity.WARN if warn_only else AssetCheckSeverity.ERROR,
        metadata={what: count},
    )
