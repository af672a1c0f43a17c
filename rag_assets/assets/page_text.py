"""page_text: every page's text lines (reading order, running headers dropped) and tables."""

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from rag_assets.assets._common import failing_clearly
from rag_assets.assets.raw_pdf import raw_pdf
from rag_assets.core.lake import write_stage
from rag_assets.core.pdf import extract
from rag_assets.core.schemas import PAGES
from rag_assets.partitions import doc_versions
from resources import LakeResource


@asset(
    partitions_def=doc_versions,
    deps=[raw_pdf],
    group_name="ingest",
    code_version="1",
    description="Page text from pdfplumber with char offsets, typography per line and tables.",
)
def page_text(context: AssetExecutionContext, lake: LakeResource) -> MaterializeResult:
    """Extract one version's pages into `derived/pages/`."""
    key = context.partition_key
    pdf_path, _ = lake.lake.raw_paths(key)
    extraction = failing_clearly(key, lambda: extract(pdf_path))
    rows = [
        {
            "partition_key": key,
            "page": page.page,
            "text": page.text,
            "char_start": page.char_start,
            "has_text_layer": page.has_text_layer,
            "ocr": page.ocr,
            "lines": [line.as_row() for line in page.lines],
            "tables": [table.as_row() for table in page.tables],
        }
        for page in extraction.pages
    ]
    path = write_stage(lake.lake, "pages", key, rows, PAGES)
    return MaterializeResult(
        metadata={
            "pages": len(rows),
            "pages_without_text": sum(1 for p in extraction.pages if not p.has_text_layer),
            "ocr_pages": sum(1 for p in extraction.pages if p.ocr),
            "chars": len(extraction.doc.text),
            "tables": sum(len(p.tables) for p in extraction.pages),
            "parquet": MetadataValue.path(str(path)),
        }
    )
