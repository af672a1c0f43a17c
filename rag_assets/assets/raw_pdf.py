"""raw_pdf: the version's file, its sha256, page count and sidecar metadata."""

from dagster import AssetExecutionContext, DataVersion, MaterializeResult, MetadataValue, asset

from rag_assets.assets._common import GROUP, failing_clearly, one_writer, reads
from rag_assets.assets.conventions import standard_metadata
from rag_assets.core.pipeline import CODE_VERSIONS, read_raw, register_version
from rag_assets.core.stages import RAW_PDF
from rag_assets.orchestration.partitions import doc_versions
from resources import LakeResource

SHA_TAG = "trecho/sha256"
"""The run tag naming the file's hash (all 64 hex digits, as `sha256sum` prints it) a run
was asked for."""


def retag(context: AssetExecutionContext, sha: str) -> None:
    """Make the run's `SHA_TAG` name the hash this run read, when the file changed since
    the run was asked for (the tag then named a file that is not the one indexed)."""
    asked = context.run.tags.get(SHA_TAG)
    if asked is not None and asked != sha:
        context.instance.add_run_tags(context.run_id, {SHA_TAG: sha})
        context.log.warning(
            f"{context.partition_key}: asked for file {asked[:16]}, read {sha[:16]}: run tag "
            f"{SHA_TAG} set to what was read"
        )


@asset(
    partitions_def=doc_versions,
    deps=reads(RAW_PDF),
    group_name=GROUP,
    code_version=CODE_VERSIONS[RAW_PDF],
    description="The PDF of one document version: sha256, pages, sidecar (title, validity).",
)
@one_writer
def raw_pdf(context: AssetExecutionContext, lake: LakeResource) -> MaterializeResult:
    """Register one version's file and sidecar in `derived/documents/`."""
    key = context.partition_key
    pdf_path, sidecar, sha, n_pages = failing_clearly(key, lambda: read_raw(lake.lake, key))
    retag(context, sha)
    path = register_version(lake.lake, key, pdf_path, sidecar, sha, n_pages)
    return MaterializeResult(
        metadata={
            "sha256": sha,
            "pages": n_pages,
            "status": sidecar.status,
            "valid_from": str(sidecar.valid_from or ""),
            "valid_to": str(sidecar.valid_to or ""),
            "removal_history": lake.lake.removal_history(key) or "never removed",
            "source": MetadataValue.path(str(pdf_path)),
            **standard_metadata(1, uri=str(path)),  # the document's one row
            "parquet": MetadataValue.path(str(path)),
        },
        data_version=DataVersion(sha),
    )
