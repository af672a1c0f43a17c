"""Asset checks, evaluated inside the stage that produces what they check.

Partitioned stages report their checks per document version in the same step, so a
blocking failure stops that version before anything downstream (embeddings) is written.
The eval report's checks run in its step too: a blocking failure fails the run after the
report is written, so the report that shows the damage is there to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, MetadataValue

from rag_assets.core.eval.regression import Regression
from rag_assets.core.stages import CHUNKS, EMBEDDINGS, LINEARIZED_TABLES, STRUCTURE_TREE

CHUNKS_FIT_MODEL = "chunks_fit_model"
NO_ORPHAN_TABLE_VALUES = "no_orphan_table_values"
NO_MID_LINE_STARTS = "no_mid_line_starts"
INDEX_MATCHES_CHUNKS = "index_matches_chunks"
UNTITLED_TEXT_SHARE = "untitled_text_share_low"
TABLES_STRUCTURED = "tables_read_into_rows"
UNTITLED_THRESHOLD = 0.5

chunk_checks = [
    AssetCheckSpec(
        CHUNKS_FIT_MODEL,
        asset=CHUNKS,
        blocking=True,
        description="No chunk is longer than the embedding model reads (nothing truncated).",
    ),
    AssetCheckSpec(
        NO_ORPHAN_TABLE_VALUES,
        asset=CHUNKS,
        blocking=True,
        description="Every table value sits in a chunk with its column header.",
    ),
    AssetCheckSpec(
        NO_MID_LINE_STARTS,
        asset=CHUNKS,
        description="No chunk starts inside a line and inside a sentence.",
    ),
]

embedding_checks = [
    AssetCheckSpec(
        INDEX_MATCHES_CHUNKS,
        asset=EMBEDDINGS,
        description="LanceDB holds exactly this version's chunks (none missing, none stale).",
    )
]

table_checks = [
    AssetCheckSpec(
        TABLES_STRUCTURED,
        asset=LINEARIZED_TABLES,
        description="Every table was read into rows under named columns (warning): a table "
        "that was not is indexed as its printed lines, named with its pages in the metadata.",
    )
]

structure_checks = [
    AssetCheckSpec(
        UNTITLED_TEXT_SHARE,
        asset=STRUCTURE_TREE,
        description=f"At most {UNTITLED_THRESHOLD:.0%} of the text sits outside any titled unit.",
    )
]


WHERE = "where"
"""The metadata key of a failed count check that says where the first failure is: what a
CLI line names (`trecho materialize`)."""


def count_check(
    name: str, count: int, what: str, warn_only: bool = False, where: str = ""
) -> AssetCheckResult:
    """A check that passes when `count` is zero; `where` says where the first of the
    counted failures is (`page 3, table 'Schedule A': ...`)."""
    metadata: dict[str, Any] = {what: count}
    if count and where:
        metadata[WHERE] = where
    return AssetCheckResult(
        check_name=name,
        passed=count == 0,
        severity=AssetCheckSeverity.WARN if warn_only else AssetCheckSeverity.ERROR,
        metadata=metadata,
    )


DEFAULT_NO_ORPHANS = "default_no_orphan_table_values"
DEFAULT_NO_MID_LINE_STARTS = "default_no_mid_line_starts"
DEFAULT_NOT_TRUNCATED = "default_not_truncated"
HIT3_NOT_REGRESSED = "default_hit3_not_regressed"

eval_checks = [
    AssetCheckSpec(
        DEFAULT_NO_ORPHANS,
        asset="eval_report",
        blocking=True,
        description="The default policy's chunks hold no table value without its column header.",
    ),
    AssetCheckSpec(
        DEFAULT_NO_MID_LINE_STARTS,
        asset="eval_report",
        blocking=True,
        description="No chunk of the default policy starts inside a line and inside a sentence.",
    ),
    AssetCheckSpec(
        DEFAULT_NOT_TRUNCATED,
        asset="eval_report",
        blocking=True,
        description="No chunk of the default policy is longer than the embedding model reads.",
    ),
    AssetCheckSpec(
        HIT3_NOT_REGRESSED,
        asset="eval_report",
        description="The default policy's hit@3 is not more than the configured tolerance below "
        "the previous report over the same question files and retrieval mode (warning).",
    ),
]


def eval_check_results(
    default: Mapping[str, float], regression: Regression
) -> list[AssetCheckResult]:
    """The eval report's checks: the default policy's chunk damage at zero (blocking) and
    its hit@3 against the previous comparable report (warning)."""
    previous: dict[str, Any] = {
        "hit@3": float(default["hit@3"]),
        "tolerance": regression.tolerance,
    }
    if regression.previous is None:
        previous["previous_report"] = "none over the same question files and mode"
    else:
        previous |= {
            "previous_hit@3": regression.previous,
            "drop": regression.drop,
            "previous_report": MetadataValue.path(regression.previous_path),
        }
    return [
        count_check(DEFAULT_NO_ORPHANS, int(default["orphans"]), "orphans"),
        count_check(DEFAULT_NO_MID_LINE_STARTS, int(default["mid_line_starts"]), "mid_line_starts"),
        count_check(DEFAULT_NOT_TRUNCATED, int(default["truncated"]), "truncated"),
        AssetCheckResult(
            check_name=HIT3_NOT_REGRESSED,
            passed=regression.passed,
            severity=AssetCheckSeverity.WARN,
            metadata=previous,
        ),
    ]
