"""page_text: every page's text lines (reading order, running headers dropped) and tables;
pages without a text layer read by OCR."""

from dagster import AssetExecutionContext, Config, MaterializeResult, MetadataValue, asset

from rag_assets.assets._common import GROUP, failing_clearly, one_writer, reads
from rag_assets.assets.conventions import standard_metadata
from rag_assets.core.extract import OcrSettings
from rag_assets.core.layout import LayoutSettings
from rag_assets.core.pipeline import CODE_VERSIONS, extract_pages
from rag_assets.core.stages import PAGE_TEXT
from rag_assets.orchestration.partitions import doc_versions
from resources import LakeResource


class PageTextConfig(Config):
    """OCR of pages without a text layer (Tesseract); the table-layout model."""

    ocr: bool = True
    ocr_languages: str = "por+eng"
    ocr_dpi: int = 200
    tesseract: str = "tesseract"
    table_model: bool = True


@asset(
    partitions_def=doc_versions,
    deps=reads(PAGE_TEXT),
    group_name=GROUP,
    code_version=CODE_VERSIONS[PAGE_TEXT],
    description=(
        "Page text from pdfplumber with char offsets, typography per line and tables; "
        "pages without a text layer read by Tesseract OCR."
    ),
)
@one_writer
def page_text(
    context: AssetExecutionContext, config: PageTextConfig, lake: LakeResource
) -> MaterializeResult:
    """Extract one version's pages into `derived/pages/`."""
    key = context.partition_key
    settings = OcrSettings(
        languages=config.ocr_languages,
        dpi=config.ocr_dpi,
        command=config.tesseract,
        enabled=config.ocr,
    )
    layout = LayoutSettings(enabled=config.table_model)
    done = failing_clearly(key, lambda: extract_pages(lake.lake, key, settings, layout))
    extraction, path, logical = done.extraction, done.path, done.logical
    stats = extraction.stats
    return MaterializeResult(
        metadata={
            "pages": len(extraction.pages),
            "pages_without_text": sum(1 for p in extraction.pages if not p.has_text_layer),
            "ocr_pages": sum(1 for p in extraction.pages if p.ocr),
            "ocr_languages": settings.languages,
            "layout_model_pages": stats.get("layout_model_pages", 0),
            "rotated_pages": stats.get("rotated_pages", 0),
            "column_pages": sum(1 for p in extraction.pages if p.columns),
            "chars": len(extraction.doc.text),
            "running_lines_dropped": stats.get("running_lines_dropped", 0),
            "hyphenations_joined": stats.get("hyphenations_joined", 0),
            "sideways_chars_dropped": stats.get("sideways_chars_dropped", 0),
            "tables": len(logical),
            "table_pieces": sum(len(p.tables) for p in extraction.pages),
            "tables_across_pages": sum(1 for t in logical if len(t.parts) > 1),
            "outline_entries": len(extraction.outline),
            **standard_metadata(len(extraction.pages), uri=str(path)),  # a row a page
            "parquet": MetadataValue.path(str(path)),
        }
    )
