"""raw_pdf: the version's file, its sha256, page count and sidecar metadata."""

import datetime as dt
import json

from dagster import AssetExecutionContext, DataVersion, MaterializeResult, MetadataValue, asset

from rag_assets.assets._common import GROUP, failing_clearly, one_writer
from rag_assets.core.extract import count_pages
from rag_assets.core.lake.layout import sha256_file, split_key
from rag_assets.core.lake.parquet import write_stage
from rag_assets.core.lake.schemas import DOCUMENTS
from rag_assets.core.lake.sidecar import Sidecar
from rag_assets.core.stages import FOLDERS, RAW_PDF
from rag_assets.orchestration.partitions import doc_versions
from resources import LakeResource

SHA_TAG = "trecho/sha256"
"""The run tag naming the file's hash (its first 16 hex digits) a run was asked for."""


def retag(context: AssetExecutionContext, sha: str) -> None:
    """Make the run's `SHA_TAG` name the hash this run read, when the file changed since
    the run was asked for (the tag then named a file that is not the one indexed)."""
    asked = context.run.tags.get(SHA_TAG)
    if asked is not None and asked != sha[:16]:
        context.instance.add_run_tags(context.run_id, {SHA_TAG: sha[:16]})
        context.log.warning(
            f"{context.partition_key}: asked for file {asked}, read {sha[:16]}: run tag "
            f"{SHA_TAG} set to what was read"
        )


@asset(
    partitions_def=doc_versions,
    group_name=GROUP,
    code_version="1",
    description="The PDF of one document version: sha256, pages, sidecar (title, validity).",
)
@one_writer
def raw_pdf(context: AssetExecutionContext, lake: LakeResource) -> MaterializeResult:
    """Register one version's file and sidecar in `derived/documents/`."""
    key = context.partition_key
    doc_id, version = failing_clearly(key, lambda: split_key(key))
    pdf_path, sidecar_path = failing_clearly(key, lambda: lake.lake.raw_paths(key))
    sidecar = failing_clearly(key, lambda: Sidecar.read(sidecar_path))
    sha = sha256_file(pdf_path)
    n_pages = failing_clearly(key, lambda: count_pages(pdf_path))
    retag(context, sha)
    row = {
        "partition_key": key,
        "doc_id": doc_id,
        "version": version,
        "title": sidecar.title or doc_id,
        "source_path": lake.lake.relative(pdf_path),
        "sha256": sha,
        "n_pages": n_pages,
        "status": sidecar.status,
        "valid_from": sidecar.valid_from,
        "valid_to": sidecar.valid_to,
        "ingested_at": dt.datetime.now(dt.UTC),
        "doc_type": sidecar.type,
        "metadata_json": json.dumps(sidecar.metadata, ensure_ascii=False, default=str),
    }
    path = write_stage(lake.lake, FOLDERS[RAW_PDF], key, [row], DOCUMENTS)
    return MaterializeResult(
        metadata={
            "sha256": sha,
            "pages": n_pages,
            "status": sidecar.status,
            "valid_from": str(sidecar.valid_from or ""),
            "valid_to": str(sidecar.valid_to or ""),
            "removal_history": lake.lake.removal_history(key) or "never removed",
            "source": MetadataValue.path(str(pdf_path)),
            "parquet": MetadataValue.path(str(path)),
        },
        data_version=DataVersion(sha),
    )
