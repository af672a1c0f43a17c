"""Asset checks, evaluated inside the stage that produces what they check.

Partitioned stages report their checks per document version in the same step, so a
blocking failure stops that version before anything downstream (embeddings) is written.
Their specs are partitioned by document version too (`AssetCheckSpec(partitions_def=...)`):
each evaluation carries the version it judged, so the Checks tab and the partition page
say which version passed or failed.
The eval report's checks run in its step too: a blocking failure fails the run after the
report is written, so the report that shows the damage is there to read.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, MetadataValue

from rag_assets.core.eval import Regression
from rag_assets.core.stages import CHUNKS, EMBEDDINGS, LINEARIZED_TABLES, STRUCTURE_TREE
from rag_assets.core.structure import PATH_THRESHOLD
from rag_assets.orchestration.partitions import doc_versions

CHUNKS_FIT_MODEL = "chunks_fit_model"
NO_ORPHAN_TABLE_VALUES = "no_orphan_table_values"
NO_MID_LINE_STARTS = "no_mid_line_starts"
INDEX_MATCHES_CHUNKS = "index_matches_chunks"
UNTITLED_TEXT_SHARE = "untitled_text_share_low"
TABLES_NAMED = "tables_with_named_columns"
UNTITLED_THRESHOLD = 0.5
SECTION_PATHS = "section_paths_are_headings"


def version_check(
    name: str, asset: str, description: str, blocking: bool = False
) -> AssetCheckSpec:
    """A check of a partitioned stage, itself partitioned by document version: every
    evaluation is of one version (Dagster 1.13 marks partitioned check specs a preview;
    the warning is said once here, not at every load)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AssetCheckSpec(
            name,
            asset=asset,
            blocking=blocking,
            description=description,
            partitions_def=doc_versions,
        )


chunk_checks = [
    version_check(
        CHUNKS_FIT_MODEL,
        CHUNKS,
        "No chunk is longer than the embedding model reads (nothing truncated).",
        blocking=True,
    ),
    version_check(
        NO_ORPHAN_TABLE_VALUES,
        CHUNKS,
        "Every table value sits in a chunk with its column header: the chunker's faults "
        "block (a table cut in the middle, a header dropped); tables whose header lines are "
        "more than a chunk holds are flagged in its metadata (`flagged`), indexed all the "
        "same.",
        blocking=True,
    ),
    version_check(
        NO_MID_LINE_STARTS, CHUNKS, "No chunk starts inside a line and inside a sentence."
    ),
]

embedding_checks = [
    version_check(
        INDEX_MATCHES_CHUNKS,
        EMBEDDINGS,
        "LanceDB holds exactly this version's chunks (none missing, none stale).",
    )
]

table_checks = [
    version_check(
        TABLES_NAMED,
        LINEARIZED_TABLES,
        "Every table was read into rows under named columns (warning): a table read without "
        "named columns is indexed row by row under its printed header lines (one with no "
        "data row as its printed lines), named with its pages in the metadata.",
    )
]

structure_checks = [
    version_check(
        UNTITLED_TEXT_SHARE,
        STRUCTURE_TREE,
        f"At most {UNTITLED_THRESHOLD:.0%} of the text sits outside any titled unit.",
    ),
    version_check(
        SECTION_PATHS,
        STRUCTURE_TREE,
        f"At most {PATH_THRESHOLD:.0%} of the units carry a section path segment that is "
        "no heading (a fragment of prose, a table-of-contents line, a table named in "
        "another language).",
    ),
]


BLOCKING_VERSION_CHECKS: dict[str, str] = {
    spec.name: spec.asset_key.to_user_string()
    for spec in chunk_checks + embedding_checks + table_checks + structure_checks
    if spec.blocking
}
"""The blocking checks of the partitioned stages, name -> the asset they check."""


def blocking_failure(result: object) -> str | None:
    """Why a stage's result fails its step on a blocking check (Dagster fails the step
    after the stage's body returned, so `one_writer` sees no exception): the first failed
    blocking check, named with its description; None when none failed."""
    for check in getattr(result, "check_results", None) or ():
        if not isinstance(check, AssetCheckResult) or check.passed:
            continue
        asset = BLOCKING_VERSION_CHECKS.get(check.check_name)
        if asset is None or check.severity != AssetCheckSeverity.ERROR:
            continue
        said = f": {check.description}" if check.description else ""
        return f"blocking check {asset}/{check.check_name} failed{said}"
    return None


def per_version(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A version check's metadata with its numbers as text: Dagster plots a check's numeric
    metadata as one series over its evaluations, which for a check partitioned by version
    would chart every version's figure as if one thing changed over time."""
    return {
        k: (
            MetadataValue.text(str(v))
            if isinstance(v, int | float) and not isinstance(v, bool)
            else v
        )
        for k, v in metadata.items()
    }


WHERE = "where"
"""The metadata key of a failed count check that says where the first failure is: what a
CLI line names (`trecho materialize`)."""


def count_check(
    name: str,
    count: int,
    what: str,
    warn_only: bool = False,
    where: str = "",
    among: str = "",
    extra: Mapping[str, Any] | None = None,
    of_a_version: bool = True,
) -> AssetCheckResult:
    """A check that passes when `count` is zero; `where` says where the first of the
    counted failures is (`page 3, table 'Schedule A': ...`); `among` names what was
    counted over (`the 15 chunks of manual-operacao@v1`), for the result's description;
    `extra` is more metadata, said whether it passes or not. A version's counts are text
    (`per_version`); a whole-lake check (`of_a_version=False`) keeps them numbers."""
    metadata: dict[str, Any] = {what: count, **(extra or {})}
    if count and where:
        metadata[WHERE] = where
    if of_a_version:
        metadata = per_version(metadata)
    label = what.replace("_", " ")
    description = f"{count} {label}" + (f" among {among}" if among else "")
    if count and where:
        description += f"; the first at {where}"
    return AssetCheckResult(
        check_name=name,
        passed=count == 0,
        severity=AssetCheckSeverity.WARN if warn_only else AssetCheckSeverity.ERROR,
        metadata=metadata,
        description=description,
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


POLICY = "the default policy's chunks of every indexed live version"


def eval_check_results(
    default: Mapping[str, float], regression: Regression
) -> list[AssetCheckResult]:
    """The eval report's checks: the default policy's chunk damage at zero (blocking) and
    its hit@3 against the previous comparable report (warning)."""
    hit3 = default["hit@3"]
    previous: dict[str, Any] = {
        "hit@3": MetadataValue.text("– (no questions)") if hit3 is None else float(hit3),
        "tolerance": regression.tolerance,
    }
    if not regression.previous_path:
        previous["previous_report"] = "none over the same question files and mode"
    elif regression.previous is None or regression.current is None:
        previous["previous_report"] = MetadataValue.path(regression.previous_path)
        previous["compared"] = "nothing: no question scored in both reports"
    else:
        previous |= {
            "previous_hit@3": regression.previous,
            "drop": regression.drop,
            "previous_report": MetadataValue.path(regression.previous_path),
        }
        if regression.shared is not None:
            previous["compared_over"] = f"{regression.shared} questions both reports asked"
    return [
        count_check(
            DEFAULT_NO_ORPHANS,
            int(default["orphans"]),
            "orphans",
            among=POLICY,
            of_a_version=False,
        ),
        count_check(
            DEFAULT_NO_MID_LINE_STARTS,
            int(default["mid_line_starts"]),
            "mid_line_starts",
            among=POLICY,
            of_a_version=False,
        ),
        count_check(
            DEFAULT_NOT_TRUNCATED,
            int(default["truncated"]),
            "truncated",
            among=POLICY,
            of_a_version=False,
        ),
        AssetCheckResult(
            check_name=HIT3_NOT_REGRESSED,
            passed=regression.passed,
            severity=AssetCheckSeverity.WARN,
            metadata=previous,
            description=hit3_compared(regression),
        ),
    ]


def hit3_compared(regression: Regression) -> str:
    """What the hit@3 check compared, in words: the two figures, over which questions
    (those both reports asked, for drawn questions; else each report's own over the same
    question files and mode), the drop and the tolerance; or why nothing was compared."""
    if not regression.previous_path:
        return "nothing compared: no earlier report over the same question files and mode"
    if regression.previous is None or regression.current is None:
        return f"nothing compared: no question scored in both reports ({regression.previous_path})"
    over = (
        f"over the {regression.shared} questions both reports asked"
        if regression.shared is not None
        else "each report over its questions, same question files and mode"
    )
    return (
        f"default policy's hit@3 {regression.current:.2f} now, {regression.previous:.2f} in "
        f"{regression.previous_path} ({over}): fell {regression.drop:.2f}, tolerance "
        f"{regression.tolerance:.2f}"
    )
