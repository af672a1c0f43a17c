"""linearized_tables: every table row as header/value pairs, ready to stand alone."""

from collections import Counter

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
)

from rag_assets.assets._common import GROUP, one_writer, reads
from rag_assets.assets.conventions import standard_metadata
from rag_assets.core.pipeline import CODE_VERSIONS, linearize_version
from rag_assets.core.stages import LINEARIZED_TABLES
from rag_assets.orchestration.checks import TABLES_NAMED, per_version, table_checks
from rag_assets.orchestration.partitions import doc_versions
from resources import LakeResource


@asset(
    partitions_def=doc_versions,
    deps=reads(LINEARIZED_TABLES),
    group_name=GROUP,
    code_version=CODE_VERSIONS[LINEARIZED_TABLES],
    check_specs=table_checks,
    description="Table rows linearized so every value carries its column header.",
)
@one_writer
def linearized_tables(context: AssetExecutionContext, lake: LakeResource) -> MaterializeResult:
    """Linearize one version's tables into `derived/tables/`."""
    key = context.partition_key
    done = linearize_version(lake.lake, key)
    nodes, rows, logical, path = done.nodes, done.rows, done.logical, done.path
    as_text, unnamed = done.as_text, done.unnamed
    by_id = {n.node_id: n for n in nodes}
    for table in as_text:
        context.log.warning(
            f"{key}: {table['table']} (pages {table['pages'][0]}-{table['pages'][1]}) has no "
            "data row: indexed as its printed lines"
        )
    for table in unnamed:
        context.log.warning(
            f"{key}: {table['table']} (pages {table['pages'][0]}-{table['pages'][1]}) was read "
            f"without named columns: its rows indexed under its {table['header_lines']} "
            "printed header lines"
        )
    named = len({r.table_id for r in rows}) - len(unnamed)
    return MaterializeResult(
        metadata={
            "tables": len({r.table_id for r in rows}),
            "rows": len(rows),
            "tables_across_pages": sum(1 for t in logical if len(t.parts) > 1),
            "tables_without_header": sum(1 for t in logical if not t.has_header),
            "tables_without_named_columns": len(unnamed),
            "tables_as_text": len(as_text),
            "rows_by_table": {
                f"{t} (pages {by_id[t].page_start}-{by_id[t].page_end})": n
                for t, n in Counter(r.table_id for r in rows).items()
            },
            **standard_metadata(len(rows), uri=str(path)),
            "parquet": MetadataValue.path(str(path)),
        },
        check_results=[
            AssetCheckResult(
                check_name=TABLES_NAMED,
                passed=not as_text and not unnamed,
                severity=AssetCheckSeverity.WARN,
                description=(
                    f"{named} tables of {key} read into rows under named columns, "
                    f"{len(unnamed)} read without named columns (rows under their printed "
                    f"header lines), {len(as_text)} indexed as their printed lines"
                ),
                metadata=per_version(
                    {
                        "tables_without_named_columns": len(unnamed),
                        "tables_as_text": len(as_text),
                        "tables": MetadataValue.json(unnamed + as_text),
                    }
                ),
            )
        ],
    )
