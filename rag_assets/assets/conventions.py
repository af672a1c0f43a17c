"""What Dagster users look for on every asset, set in one place: owners, kinds (the
icons on the lineage graph), tags, a code version, and a freshness policy where one
means something (`conventional`, applied by `all_assets`). The standard metadata keys a
materialization carries (`dagster/row_count`, `dagster/table_name`, `dagster/uri`) are
built by `standard_metadata`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from dagster import AssetsDefinition, AssetSpec, FreshnessPolicy, map_asset_specs

from rag_assets.core.pipeline import EVAL_REPORT_CODE_VERSION
from rag_assets.core.stages import (
    CHUNKS,
    EMBEDDINGS,
    LINEARIZED_TABLES,
    PAGE_TEXT,
    RAW_PDF,
    STRUCTURE_TREE,
)

OWNERS = ["team:trecho"]
"""Who answers for every asset (Dagster takes an e-mail or `team:<name>`)."""

EVAL_REPORT = "eval_report"
KINDS: dict[str, set[str]] = {
    RAW_PDF: {"pdf", "parquet"},
    PAGE_TEXT: {"pdf", "parquet"},
    STRUCTURE_TREE: {"python", "parquet"},
    LINEARIZED_TABLES: {"python", "parquet"},
    CHUNKS: {"python", "parquet"},
    EMBEDDINGS: {"lancedb", "python"},
    EVAL_REPORT: {"html", "python"},
}
"""What each asset is made with and stored as (at most three kinds an asset)."""

ROLES = {
    RAW_PDF: "ingest",
    PAGE_TEXT: "extract",
    STRUCTURE_TREE: "extract",
    LINEARIZED_TABLES: "extract",
    CHUNKS: "index",
    EMBEDDINGS: "index",
    EVAL_REPORT: "eval",
}
"""The `trecho/role` tag: which part of the chain an asset belongs to."""

REPORT_FRESHNESS = FreshnessPolicy.time_window(
    fail_window=dt.timedelta(days=8), warn_window=dt.timedelta(hours=26)
)
"""The eval report is written again after every index change and by its daily schedule
when the automation is stopped: older than a day warns, older than a week fails. The
stages of a version have none: they change when the version's file does, never on a
clock (a quiet lake is not late)."""


def conventional(assets: Iterable[AssetsDefinition]) -> list[AssetsDefinition]:
    """`assets` with owners, kinds and tags on every one, and the report's code version
    and freshness policy."""

    def stamp(spec: AssetSpec) -> AssetSpec:
        name = spec.key.to_user_string()
        spec = spec.merge_attributes(
            owners=OWNERS,
            kinds=KINDS.get(name, set()),
            tags={
                "trecho/role": ROLES.get(name, "other"),
                "trecho/partitioned": str(name != EVAL_REPORT).lower(),
            },
        )
        if name == EVAL_REPORT:
            spec = spec.replace_attributes(
                code_version=EVAL_REPORT_CODE_VERSION, freshness_policy=REPORT_FRESHNESS
            )
        return spec

    return list(map_asset_specs(stamp, list(assets)))


def standard_metadata(
    rows: int, *, table: str | None = None, uri: str | None = None
) -> dict[str, Any]:
    """Dagster's standard metadata keys: the row count the UI charts, and the LanceDB
    table or the file a materialization wrote."""
    out: dict[str, Any] = {"dagster/row_count": rows}
    if table is not None:
        out["dagster/table_name"] = table
    if uri is not None:
        out["dagster/uri"] = uri
    return out
