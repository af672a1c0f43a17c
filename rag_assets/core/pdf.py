"""Page text from PDFs: lines in reading order with their typography, tables, char offsets.

What comes out of here is all later stages ever see, so this module refuses bad input
loudly (naming the file and the reason) rather than returning an empty document, and
drops what would poison every chunk: running headers, footers and page numbers.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pdfplumber

from rag_assets.core.schemas import DocText

PAGE_NUMBER = re.compile(
    r"^(?:p[áa]gina|page|p[áa]g\.?|p\.)?\s*\d{1,4}(?:\s*(?:de|of|/)\s*\d{1,4})?$", re.IGNORECASE
)
MARGIN_LINES = 2  # lines at the top and at the bottom of a page checked for repetition


class PdfError(ValueError):
    """A PDF that cannot be read; the message names the file and the reason."""


@dataclass
class Line:
    """One text line of a page, with where it sits and how it is printed."""

    text: str
    x0: float
    top: float
    bottom: float
    size: float
    bold: bool
    table: int = -1
    char_start: int = 0
    char_end: int = 0

    def as_row(self) -> dict[str, Any]:
        """The line as a Parquet struct."""
        return {
            "text": self.text,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "x0": self.x0,
            "top": self.top,
            "bottom": self.bottom,
            "size": self.size,
            "bold": self.bold,
            "table": self.table,
        }


@dataclass
class PageTable:
    """A ruled table found on a page: its cells and the span of each row in the text."""

    index: int
    bbox: tuple[float, float, float, float]
    rows: list[list[str]]
    row_bboxes: list[tuple[float, float, float, float]]
    row_spans: list[tuple[int, int]] = field(default_factory=list)
    char_start: int = -1
    char_end: int = -1

    def as_row(self) -> dict[str, Any]:
        """The table as a Parquet struct."""
        return {
            "index": self.index,
            "bbox": list(self.bbox),
            "rows": self.rows,
            "row_spans": [list(s) for s in self.row_spans],
            "char_start": self.char_start,
            "char_end": self.char_end,
        }


@dataclass
class Page:
    """One extracted page."""

    page: int
    lines: list[Line]
    tables: list[PageTable]
    has_text_layer: bool
    ocr: bool = False
    char_start: int = 0

    @property
    def text(self) -> str:
        """The page's text, one line per line."""
        return "\n".join(line.text for line in self.lines)


@dataclass
class Extraction:
    """Every page of a document plus the joined document text."""

    pages: list[Page]
    doc: DocText


def check_pdf_file(path: Path, max_bytes: int) -> None:
    """Refuse files that are missing, empty, too large or not PDFs, before parsing."""
    if not path.is_file():
        raise PdfError(f"{path}: file not found")
    size = path.stat().st_size
    if size == 0:
        raise PdfError(f"{path}: file is empty (0 bytes), not a PDF")
    if size > max_bytes:
        raise PdfError(f"{path}: file is {size} bytes, over the limit of {max_bytes} bytes")
    with path.open("rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise PdfError(f"{path}: not a PDF (no %PDF- signature in its first bytes)")


def _line_from(raw: dict[str, Any]) -> Line | None:
    chars = [c for c in raw.get("chars", []) if c.get("text", "").strip()]
    text = re.sub(r"\s+", " ", raw["text"]).strip()
    if not text or not chars:
        return None
    sizes = [float(c.get("size", 0.0)) for c in chars]
    bold = all(re.search(r"bold|black|heavy", str(c.get("fontname", "")), re.I) for c in chars)
    return Line(
        text=text,
        x0=float(raw["x0"]),
        top=float(raw["top"]),
        bottom=float(raw["bottom"]),
        size=round(statistics.median(sizes), 1),
        bold=bold,
    )


def _clean_cell(cell: str | None) -> str:
    return re.sub(r"\s+", " ", cell or "").strip()


def _find_tables(page: Any) -> list[PageTable]:
    tables: list[PageTable] = []
    for found in page.find_tables():
        rows = [[_clean_cell(c) for c in row] for row in found.extract()]
        rows = [r for r in rows if any(r)]
        if len(rows) < 2 or max(len(r) for r in rows) < 2:
            continue  # a box around text, not a table
        row_bboxes = [tuple(r.bbox) for r in found.rows if any(c is not None for c in r.cells)]
        tables.append(PageTable(len(tables), tuple(found.bbox), rows, row_bboxes[: len(rows)]))
    return tables


def _inside(line: Line, bbox: tuple[float, float, float, float]) -> bool:
    middle = (line.top + line.bottom) / 2
    return bbox[1] - 1 <= middle <= bbox[3] + 1 and line.x0 >= bbox[0] - 1 and line.x0 <= bbox[2]


def _has_duplicate_chars(page: Any) -> bool:
    """Whether some glyph is drawn twice at the same place (a cheap test before deduping)."""
    seen = {(c["text"], round(c["x0"]), round(c["top"])) for c in page.chars}
    return len(seen) < len(page.chars)


def _margin_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def _drop_running_lines(pages: list[Page]) -> None:
    """Remove page numbers, and lines repeated in the margins of at least half the pages."""
    counts: Counter[str] = Counter()
    for page in pages:
        margin = page.lines[:MARGIN_LINES] + page.lines[-MARGIN_LINES:]
        counts.update({_margin_key(line.text) for line in margin})
    threshold = max(2, (len(pages) + 1) // 2)
    running = {k for k, n in counts.items() if n >= threshold}
    for page in pages:
        n = len(page.lines)
        keep: list[Line] = []
        for i, line in enumerate(page.lines):
            in_margin = i < MARGIN_LINES or i >= n - MARGIN_LINES
            if in_margin and line.table < 0:
                if PAGE_NUMBER.match(line.text) or _margin_key(line.text) in running:
                    continue
            keep.append(line)
        page.lines = keep


def _assign_offsets(pages: list[Page]) -> DocText:
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for page in pages:
        page.char_start = offset
        starts.append(offset)
        for line in page.lines:
            line.char_start = offset
            line.char_end = offset + len(line.text)
            offset = line.char_end + 1
            parts.append(line.text)
        for table in page.tables:
            inside = [ln for ln in page.lines if ln.table == table.index]
            if inside:
                table.char_start = min(ln.char_start for ln in inside)
                table.char_end = max(ln.char_end for ln in inside)
            spans: list[tuple[int, int]] = []
            for bbox in table.row_bboxes:
                row_lines = [ln for ln in inside if _inside(ln, bbox)]
                if row_lines:
                    spans.append(
                        (
                            min(ln.char_start for ln in row_lines),
                            max(ln.char_end for ln in row_lines),
                        )
                    )
                else:
                    spans.append((-1, -1))
            table.row_spans = spans
    text = "\n".join(parts)
    return DocText(text=text, page_starts=starts)


def _open(path: Path) -> Any:
    """Open a PDF with pdfplumber, turning its many failure types into a PdfError."""
    try:
        return pdfplumber.open(path)
    except Exception as exc:  # pdfminer raises many unrelated types
        name = " ".join(type(e).__name__ for e in (exc, *exc.args) if isinstance(e, Exception))
        if "Password" in name or "Encrypt" in name:
            raise PdfError(f"{path}: the PDF is encrypted (password protected)") from exc
        raise PdfError(f"{path}: malformed PDF, it cannot be opened ({name}: {exc})") from exc


def _page_count(path: Path, pdf: Any, max_pages: int) -> int:
    try:
        n_pages = len(pdf.pages)
    except Exception as exc:
        raise PdfError(f"{path}: malformed PDF, its page tree cannot be read ({exc})") from exc
    if n_pages == 0:
        raise PdfError(f"{path}: the PDF has zero pages")
    if n_pages > max_pages:
        raise PdfError(f"{path}: {n_pages} pages, over the limit of {max_pages} pages")
    return n_pages


def count_pages(path: Path, max_pages: int = 2000, max_bytes: int = 200 * 1024 * 1024) -> int:
    """Check a PDF opens within the limits and return its page count (no text read)."""
    check_pdf_file(path, max_bytes)
    with _open(path) as pdf:
        return _page_count(path, pdf, max_pages)


def extract(path: Path, max_pages: int = 2000, max_bytes: int = 200 * 1024 * 1024) -> Extraction:
    """Read every page of a PDF into lines and tables with offsets into the document text."""
    check_pdf_file(path, max_bytes)
    with _open(path) as pdf:
        _page_count(path, pdf, max_pages)
        pages: list[Page] = []
        for number, raw_page in enumerate(pdf.pages, start=1):
            try:
                page = raw_page.dedupe_chars() if _has_duplicate_chars(raw_page) else raw_page
                raw_lines = page.extract_text_lines(return_chars=True)
                tables = _find_tables(page)
            except Exception as exc:
                raise PdfError(f"{path}: page {number} cannot be read ({exc})") from exc
            lines = [ln for ln in (_line_from(r) for r in raw_lines) if ln is not None]
            for table in tables:
                for line in lines:
                    if line.table < 0 and _inside(line, table.bbox):
                        line.table = table.index
            pages.append(Page(number, lines, tables, has_text_layer=bool(raw_page.chars)))
    if not any(p.has_text_layer for p in pages):
        raise PdfError(
            f"{path}: no page has a text layer (a scanned document?) and OCR is not enabled"
        )
    _drop_running_lines(pages)
    doc = _assign_offsets(pages)
    return Extraction(pages=pages, doc=doc)
