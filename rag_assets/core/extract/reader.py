"""Opening a PDF and reading every page, bad input refused with the file and the reason."""

from __future__ import annotations

import io
import re
import statistics
import tempfile
from collections import Counter
from contextlib import closing, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import pdfplumber

from rag_assets.core.extract.bidi import logical_order, right_to_left
from rag_assets.core.extract.bounds import check_images, check_streams, too_dense
from rag_assets.core.extract.columns import _column_order
from rag_assets.core.extract.glyphs import _has_duplicate_chars, _mark_superscripts, _readable
from rag_assets.core.extract.hyphenation import _join_hyphenated
from rag_assets.core.extract.model import Extraction, Line, Page, PageTable, PdfError
from rag_assets.core.extract.ocr import (
    SCAN_COVER,
    THIN_TEXT_CHARS,
    OcrSettings,
    _image_cover,
    _ocr,
    _render,
    _tesseract_ready,
    ocr_dpi,
)
from rag_assets.core.extract.offsets import _assign_offsets
from rag_assets.core.extract.outline import read_outline
from rag_assets.core.extract.rotation import _upright, _without_sideways, sideways_in_place
from rag_assets.core.extract.running_lines import _drop_running_lines
from rag_assets.core.extract.table_lines import (
    across,
    inside_raw,
    mark_continuations,
    side_by_side,
)
from rag_assets.core.lake import LakePath
from rag_assets.core.layout import LayoutModelError, LayoutSettings, PageProposer
from rag_assets.core.page import area
from rag_assets.core.tables import TableReader, TableSettings, y_tolerance


def check_pdf_file(path: LakePath, max_bytes: int) -> None:
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
    text = logical_order(re.sub(r"\s+", " ", raw["text"]).strip())
    if not text or not chars:
        return None
    sizes = [float(c.get("size", 0.0)) for c in chars]
    heavy = [bool(BOLD_FONT.search(str(c.get("fontname", "")))) for c in chars]
    return Line(
        text=text,
        x0=float(raw["x0"]),
        top=float(raw["top"]),
        bottom=float(raw["bottom"]),
        size=round(statistics.median(sizes), 1),
        bold=all(heavy),
        x1=float(raw["x1"]),
        lead=_bold_lead(text, heavy) if text == re.sub(r"\s+", " ", raw["text"]).strip() else 0,
    )


BOLD_FONT = re.compile(r"bold|black|heavy", re.I)


def _bold_lead(text: str, heavy: list[bool]) -> int:
    """How many characters of `text` a bold run opens, when the rest of the line is not
    bold (a run-in heading, `Scope. The study covers...`); 0 otherwise. `heavy` says of
    each printed (non-space) character whether its font is bold."""
    if not heavy or not heavy[0] or all(heavy):
        return 0
    count = heavy.index(False)
    seen = 0
    for i, char in enumerate(text):
        if not char.isspace():
            seen += 1
            if seen == count:
                return i + 1
    return 0


def _in_reading_order(table: PageTable) -> PageTable:
    """A table with its right-to-left text in reading order (`bidi`); a table written
    right to left (most of its worded cells in Hebrew or Arabic) also has its columns
    from the right, so its stub, printed rightmost, labels each row first."""
    table.rows = [[logical_order(cell) for cell in row] for row in table.rows]
    table.header = [logical_order(cell) for cell in table.header]
    table.title = logical_order(table.title)
    worded = [c for row in table.rows for c in row if any(ch.isalpha() for ch in c)]
    if worded and sum(1 for c in worded if right_to_left(c)) * 2 > len(worded):
        table.rows = [row[::-1] for row in table.rows]
        table.header = table.header[::-1]
        table.columns = table.columns[::-1]
    return table


def _open(path: LakePath) -> Any:
    """Open a PDF with pdfplumber (an object-store file is read into memory first),
    turning its many failure types into a PdfError."""
    try:
        return pdfplumber.open(path if isinstance(path, Path) else io.BytesIO(path.read_bytes()))
    except Exception as exc:  # pdfminer raises many unrelated types
        name = " ".join(type(e).__name__ for e in (exc, *exc.args) if isinstance(e, Exception))
        if "Password" in name or "Encrypt" in name:
            raise PdfError(f"{path}: the PDF is encrypted (password protected)") from exc
        raise PdfError(f"{path}: malformed PDF, it cannot be opened ({name}: {exc})") from exc


def _page_count(path: LakePath, pdf: Any, max_pages: int) -> int:
    try:
        n_pages = len(pdf.pages)
    except Exception as exc:
        raise PdfError(f"{path}: malformed PDF, its page tree cannot be read ({exc})") from exc
    if n_pages == 0:
        raise PdfError(f"{path}: the PDF has zero pages")
    if n_pages > max_pages:
        raise PdfError(f"{path}: {n_pages} pages, over the limit of {max_pages} pages")
    return n_pages


def count_pages(path: LakePath, max_pages: int = 2000, max_bytes: int = 200 * 1024 * 1024) -> int:
    """Check a PDF opens within the limits and return its page count (no text read)."""
    check_pdf_file(path, max_bytes)
    with _open(path) as pdf:
        return _page_count(path, pdf, max_pages)


def _scanned_tables(
    page: Page, tables: list[PageTable], settings: TableSettings
) -> list[PageTable]:
    """The tables of a page read by OCR in reading order; its lines inside a table are
    that table's."""
    tables = [_in_reading_order(t) for t in tables]
    for i, table in enumerate(tables):
        for line in page.lines:
            place = {"top": line.top, "bottom": line.bottom, "x0": line.x0}
            if line.table < 0 and inside_raw(place, table.bbox, settings):
                line.table = i
    return tables


def _read_page(path: LakePath, pdf: Any, raw_page: Any, number: int, reader: TableReader) -> Page:
    """One page with a text layer (or none): upright, deduplicated, lines and tables."""
    try:
        turned, angle = _upright(pdf, raw_page)
        page = turned.dedupe_chars() if _has_duplicate_chars(turned) else turned
        page = _readable(path, number, page)
        _mark_superscripts(page)
        tables = [_in_reading_order(t) for t in reader.read_page(page, number, angle != 0)]
        page, sideways = _without_sideways(page, tables)
        raw_lines = sideways_in_place(
            page.extract_text_lines(
                return_chars=True, y_tolerance=y_tolerance(page, reader.settings)
            )
        )
        boxes = [t.bbox for t in tables]
        settings = reader.settings
        in_table = [next((b for b in boxes if inside_raw(r, b, settings)), None) for r in raw_lines]
        raw_lines, columns = _column_order(raw_lines, in_table, float(page.width), settings)
        raw_lines = side_by_side(raw_lines, boxes, settings)
    except PdfError:
        raise
    except Exception as exc:
        dense = too_dense(exc)
        if dense is not None:
            raise PdfError(f"{path}: {dense}") from exc
        raise PdfError(f"{path}: page {number} cannot be read ({exc})") from exc
    lines: list[Line] = []
    for raw in raw_lines:
        line = _line_from(raw)
        if line is None:
            continue
        # a line reaching into a table is its line (a stub outside); the innermost
        # table's, where a table is ruled inside another (a form around a table)
        if line.table < 0:  # set already for a line read inside a table
            holding = [t for t in tables if across(raw, t.bbox, reader.settings)]
            if holding:
                line.table = min(holding, key=lambda t: area(t.bbox)).index
        lines.append(line)
    has_text = any(c["text"].strip() for c in page.chars)
    return Page(
        number,
        lines,
        tables,
        columns=columns,
        has_text_layer=has_text or sideways > 0,
        rotation=angle,
        width=float(page.width),
        height=float(page.height),
        sideways_chars=sideways,
    )


def extract(
    path: LakePath,
    max_pages: int = 2000,
    max_bytes: int = 200 * 1024 * 1024,
    ocr: OcrSettings | None = None,
    layout: LayoutSettings | None = None,
    tables: TableSettings | None = None,
) -> Extraction:
    """Read every page of a PDF into lines and tables with offsets into the document text.

    Pages without a text layer that show something are read by OCR (`ocr`, Tesseract with
    Portuguese and English by default); a missing Tesseract or language fails the whole
    version with a message saying so, never an empty document. Tables the rules miss are
    looked for with the layout model (`layout`, on by default; `core/layout`). Every page's
    tables are read by one `TableReader` (`tables`: its tolerances, the tuned defaults
    when None), which also reads the tables of pages read by OCR where the model sees them.
    """
    settings = ocr or OcrSettings()
    layout = layout or LayoutSettings()
    check_pdf_file(path, max_bytes)
    stats: Counter[str] = Counter()
    tables = tables or TableSettings()
    proposer = None
    if layout.enabled:
        proposer = PageProposer(path if isinstance(path, Path) else path.read_bytes, layout, tables)
    reader = TableReader(tables, proposer)
    with (
        _open(path) as pdf,
        tempfile.TemporaryDirectory(prefix="trecho-ocr-") as tmp,
        closing(proposer) if proposer is not None else nullcontext(),
    ):
        _page_count(path, pdf, max_pages)
        check_streams(path, pdf.doc)  # before pdfminer inflates any of them whole
        outline = read_outline(pdf)
        pages: list[Page] = []
        scanned: list[int] = []  # pages without a text layer that show something
        thin: list[int] = []  # pages that are an image with a few characters of text on it
        for number, raw_page in enumerate(pdf.pages, start=1):
            page = _read_page(path, pdf, raw_page, number, reader)
            pages.append(page)
            stats["rotated_pages"] += page.rotation != 0
            stats["sideways_chars_dropped"] += page.sideways_chars
            if not page.has_text_layer:
                if raw_page.images or raw_page.curves or raw_page.rects or raw_page.lines:
                    scanned.append(number)
            elif sum(len(ln.text) for ln in page.lines) < THIN_TEXT_CHARS:
                if _image_cover(raw_page) >= SCAN_COVER:
                    thin.append(number)  # a scan under a stamp or a page number
            raw_page.close()  # its parsed objects: kept, every page would stay in memory
        if scanned and not settings.enabled:
            if not any(p.has_text_layer for p in pages):
                raise PdfError(
                    f"{path}: no page has a text layer (a scanned document?) and OCR is not enabled"
                )
            raise PdfError(
                f"{path}: page(s) {', '.join(map(str, scanned))} have no text layer and need "
                "OCR, and OCR is not enabled"
            )
        to_read = sorted(scanned + thin) if settings.enabled else []
        images: dict[int, tuple[Path, int]] = {}
        if to_read:
            exe = _tesseract_ready(path, to_read, settings)
            for number in to_read:
                raw_page = pdf.pages[number - 1]
                dpi = ocr_dpi(path, raw_page, number, settings.dpi)  # within the pixel cap
                check_images(path, raw_page, number)
                try:
                    images[number] = (_render(raw_page, dpi, Path(tmp), number), dpi)
                except Exception as exc:
                    raise PdfError(f"{path}: page {number} cannot be rendered ({exc})") from exc
                raw_page.close()
            for number, (lines, words) in _ocr(path, exe, images, settings).items():
                page = pages[number - 1]
                page.lines, page.tables, page.ocr = lines, [], True
                try:  # a scan's tables: where the model sees them
                    scanned_tables = reader.read_page(raw_page, number, ocr_words=words)
                except LayoutModelError as exc:
                    raise PdfError(f"{path}: page {number}: {exc}") from exc
                page.tables = _scanned_tables(page, scanned_tables, reader.settings)
    stats["ocr_pages"] = len(images)
    stats["layout_model_pages"] = proposer.looked if proposer is not None else 0
    if not any(line.text.strip() for p in pages for line in p.lines):
        if any(p.has_text_layer for p in pages):
            raise PdfError(f"{path}: no text found: its text layer holds no readable line")
        how = "nor by OCR" if images else "and no page shows anything to OCR"
        raise PdfError(f"{path}: no text found: no page has a text layer, {how}")
    stats["running_lines_dropped"] = _drop_running_lines(pages)
    stats["hyphenations_joined"] = _join_hyphenated(pages)
    stats["tables_continued"] = mark_continuations(pages, reader.settings)
    doc = _assign_offsets(pages)
    turned = {p.page for p in pages if p.rotation}
    outline = [replace(e, top=None) if e.page in turned else e for e in outline]
    stats["outline_entries"] = len(outline)
    return Extraction(pages=pages, doc=doc, stats=dict(stats), outline=outline)
