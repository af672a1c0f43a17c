"""Page text from PDFs: lines in reading order with their typography, tables, char offsets.

What comes out of here is all later stages ever see, so this package refuses bad input
loudly (naming the file and the reason) rather than returning an empty document, and
repairs what would poison every chunk: running headers, footers and page numbers are
dropped, glyphs drawn twice and phantom spaces removed, pages whose text runs sideways
turned upright, words hyphenated across lines joined, and pages without a text layer
read by OCR (Tesseract). One module per reading stage; `reader.extract` runs them in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_assets.core.extract.model import Extraction, Line, Page, PageTable, PdfError
from rag_assets.core.extract.ocr import OcrSettings, ocr_lines
from rag_assets.core.extract.outline import OutlineEntry
from rag_assets.core.extract.reader import check_pdf_file, count_pages, extract
from rag_assets.core.faces import lazy_names
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

# The names other packages use from modules the face does not load: each imported from
# its module on first use, so that importing the package costs no more than the modules
# a caller asks for (`_LAZY`; the imports below are for type checkers and readers).
if TYPE_CHECKING:
    from rag_assets.core.extract.outline import outline_from_pages

_LAZY: dict[str, str] = {
    "outline_from_pages": "rag_assets.core.extract.outline",
}


__getattr__ = lazy_names(__name__, _LAZY)
