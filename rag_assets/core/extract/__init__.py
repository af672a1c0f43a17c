"""Page text from PDFs: lines in reading order with their typography, tables, char offsets.

What comes out of here is all later stages ever see, so this package refuses bad input
loudly (naming the file and the reason) rather than returning an empty document, and
repairs what would poison every chunk: running headers, footers and page numbers are
dropped, glyphs drawn twice and phantom spaces removed, pages whose text runs sideways
turned upright, words hyphenated across lines joined, and pages without a text layer
read by OCR (Tesseract). One module per reading stage; `reader.extract` runs them in order.
"""

from __future__ import annotations

from rag_assets.core.extract.model import Extraction, Line, Page, PageTable, PdfError
from rag_assets.core.extract.ocr import OcrSettings, ocr_lines
from rag_assets.core.extract.outline import OutlineEntry, outline_from_pages
from rag_assets.core.extract.reader import check_pdf_file, count_pages, extract
from rag_assets.core.hyphens import keep_hyphen

__all__ = [
    "Extraction",
    "Line",
    "OcrSettings",
    "OutlineEntry",
    "Page",
    "PageTable",
    "PdfError",
    "check_pdf_file",
    "count_pages",
    "extract",
    "keep_hyphen",
    "ocr_lines",
    "outline_from_pages",
]
