"""structure_tree: the tree of units (parts, chapters, sections, articles, §, incisos,
alíneas, tables and rows) with labels, levels and spans."""

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
from rag_assets.core.pipeline import CODE_VERSIONS, build_structure
from rag_assets.core.stages import STRUCTURE_TREE
from rag_assets.core.structure import PATH_THRESHOLD
from rag_assets.orchestration.checks import (
    SECTION_PATHS,
    UNTITLED_TEXT_SHARE,
    UNTITLED_THRESHOLD,
    per_version,
    structure_checks,
)
from rag_assets.orchestration.partitions import doc_versions
from resources import LakeResource


@asset(
    partitions_def=doc_versions,
    deps=reads(STRUCTURE_TREE),
    group_name=GROUP,
    code_version=CODE_VERSIONS[STRUCTURE_TREE],
    check_specs=structure_checks,
    description=(
        "The document's own units: its outline (bookmarks) where it has one, else "
        "headings by evidence (numbering, type, place, text), articles and tables."
    ),
)
@one_writer
def structure_tree(context: AssetExecutionContext, lake: LakeResource) -> MaterializeResult:
    """Build one version's tree into `derived/nodes/`."""
    key = context.partition_key
    built = build_structure(lake.lake, key)
    nodes, doc, page_rows, outline = built.nodes, built.doc, built.page_rows, built.outline
    path, share, language, paths = built.path, built.untitled_share, built.language, built.paths
    kinds = Counter(n.kind for n in nodes)
    return MaterializeResult(
        metadata={
            "pages": len(page_rows),
            "ocr_pages": sum(1 for p in page_rows if p["ocr"]),
            "nodes": len(nodes),
            "nodes_by_kind": dict(sorted(kinds.items())),
            "articles": kinds.get("article", 0),
            "tables": kinds.get("table", 0),
            "table_rows": kinds.get("table_row", 0),
            "untitled_text_share": round(share, 4),
            "language": language,
            "outline_entries": len(outline),
            "bookmarks_found_share": (
                round(paths.bookmarks_share, 4) if paths.bookmarks_share is not None else None
            ),
            "non_heading_path_share": round(paths.share, 4),
            **standard_metadata(len(nodes), uri=str(path)),  # a row a node
            "parquet": MetadataValue.path(str(path)),
        },
        check_results=[
            AssetCheckResult(
                check_name=SECTION_PATHS,
                passed=paths.share <= PATH_THRESHOLD,
                severity=AssetCheckSeverity.WARN,
                description=(
                    f"{paths.bad_units} of the {paths.units} units of {key} carry a path "
                    f"segment that is no heading (at most {PATH_THRESHOLD:.0%})"
                    + (f"; first: {', '.join(paths.examples)}" if paths.examples else "")
                    + (
                        f"; {paths.bookmarks_found} of the PDF's {paths.bookmarks} bookmark "
                        "titles are headings"
                        if paths.bookmarks
                        else ""
                    )
                ),
                metadata=per_version(
                    {
                        "share": round(paths.share, 4),
                        "threshold": PATH_THRESHOLD,
                        "units": paths.units,
                        "bookmarks": paths.bookmarks,
                        "bookmarks_found": paths.bookmarks_found,
                    }
                ),
            ),
            AssetCheckResult(
                check_name=UNTITLED_TEXT_SHARE,
                passed=share <= UNTITLED_THRESHOLD,
                severity=AssetCheckSeverity.WARN,
                description=(
                    f"{share:.1%} of the {len(doc.text):,} characters of {key} outside any "
                    f"titled unit (at most {UNTITLED_THRESHOLD:.0%})"
                ),
                metadata=per_version({"share": round(share, 4), "threshold": UNTITLED_THRESHOLD}),
            ),
        ],
    )
