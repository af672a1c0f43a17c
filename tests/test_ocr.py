"""Pages without a text layer are read by OCR (Tesseract), marked as such, and a missing
Tesseract fails the version with a message saying so, never an empty document.

OCR costs seconds a page: each scanned document is extracted once per module.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pdfplumber
import pytest
from fpdf import FPDF

from rag_assets.core.extract import OcrSettings, PdfError, extract
from rag_assets.core.structure.tree import build_tree, tables_by_piece

from .conftest import FONT_DIR, SHARED

SCANNED = SHARED / "real-pdfs" / "issue-203-decimalize.pdf"  # 3 pages, images only
needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None and os.environ.get("CI") != "true",
    reason="Tesseract is not installed (in CI, where setup installs it, these tests run)",
)

TYPED = "Art. 1º Esta Lei dispõe sobre o tratamento de dados pessoais."
PRINTED = [
    "Art. 2º O tratamento de dados pessoais somente poderá ser",
    "realizado mediante o fornecimento de consentimento pelo titular.",
    "Parágrafo único. O consentimento deverá ser fornecido por escrito.",
]


def _font_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.set_font("DejaVu", "", 12)
    return pdf


STAMPED = [
    "Art. 3º Esta Lei entra em vigor na data de sua publicação.",
    "Brasília, 14 de agosto de 2018.",
]
STAMP = "Documento assinado digitalmente"


def _scan_of(lines: list[str], folder: Path, name: str) -> Path:
    """A page image of typed lines, as a scanner would deliver it."""
    typed = _font_pdf()
    typed.add_page()
    for line in lines:
        typed.cell(0, 9, line, new_x="LMARGIN", new_y="NEXT")
    typed.output(str(folder / f"{name}.pdf"))
    with pdfplumber.open(folder / f"{name}.pdf") as pdf:
        pdf.pages[0].to_image(resolution=200).original.save(folder / f"{name}.png")
    return folder / f"{name}.png"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A law: page 1 with a text layer, page 2 a scan (an image only), page 3 a scan with
    a signature stamp printed on it as text (a thin text layer over an image)."""
    folder = tmp_path_factory.mktemp("mixed")
    doc = _font_pdf()
    doc.add_page()
    doc.cell(0, 9, TYPED, new_x="LMARGIN", new_y="NEXT")
    doc.add_page()
    doc.image(str(_scan_of(PRINTED, folder, "scan")), x=0, y=0, w=210, h=297)
    doc.add_page()
    doc.image(str(_scan_of(STAMPED, folder, "stamped")), x=0, y=0, w=210, h=297)
    doc.set_auto_page_break(False)
    doc.set_xy(10, 285)
    doc.cell(0, 6, STAMP)
    doc.output(str(folder / "mixed.pdf"))
    return folder / "mixed.pdf"


@pytest.fixture(scope="module")
def scanned():
    if not SCANNED.exists():
        pytest.skip("shared real-world PDFs not available")
    return extract(SCANNED)


@pytest.fixture(scope="module")
def mixed_extraction(mixed: Path):
    return extract(mixed)


@needs_tesseract
def test_an_image_only_pdf_is_read_by_ocr_and_marked(scanned):
    assert [(p.ocr, p.has_text_layer) for p in scanned.pages] == [(True, False)] * 3
    assert scanned.stats["ocr_pages"] == 3
    text = scanned.doc.text
    # the customs registration code and the handbook number printed on page 1
    assert "2301914001" in text and "C23067150841" in text
    assert all(p.text for p in scanned.pages)
    for page in scanned.pages:  # offsets point at the OCR text like at any other text
        assert text[page.char_start : page.char_start + len(page.text)] == page.text
        assert all(text[ln.char_start : ln.char_end] == ln.text for ln in page.lines)
    assert not any(ln.text == "1" for ln in scanned.pages[0].lines)  # the page number


@needs_tesseract
def test_scanned_pages_in_a_typed_law_join_its_structure(mixed_extraction):
    pages = mixed_extraction.pages
    marks = [(p.ocr, p.has_text_layer) for p in pages]
    assert marks == [(False, True), (True, False), (True, True)]
    scanned_text = " ".join(pages[1].text.split())
    assert "O tratamento de dados pessoais somente poderá ser realizado" in scanned_text
    assert "consentimento deverá ser fornecido por escrito" in scanned_text
    # the scan under a stamp is read, not just the stamp's text layer
    assert "entra em vigor na data de sua publicação" in " ".join(pages[2].text.split())
    lines = [ln for p in pages for ln in p.lines]
    doc = mixed_extraction.doc
    nodes = build_tree("lei@v1", doc, lines, tables_by_piece([]), "Lei")
    articles = {n.label: n for n in nodes if n.kind == "article"}
    assert set(articles) == {"Art. 1º", "Art. 2º", "Art. 3º"}
    assert (articles["Art. 2º"].page_start, articles["Art. 3º"].page_start) == (2, 3)
    [single] = [n for n in nodes if n.kind == "paragraph"]
    assert single.label == "Parágrafo único" and single.parent_id == articles["Art. 2º"].node_id


def test_without_tesseract_the_version_fails_saying_so(
    mixed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine where Tesseract is not installed
    with pytest.raises(PdfError) as err:
        extract(mixed)
    message = str(err.value)
    assert str(mixed) in message and "Tesseract is missing" in message
    assert "page(s) 2, 3 are scanned (no usable text layer) and need OCR" in message


@needs_tesseract
def test_missing_language_data_or_ocr_turned_off_fail_clearly(mixed: Path):
    with pytest.raises(PdfError) as err:
        extract(mixed, ocr=OcrSettings(languages="por+xyz"))
    assert str(mixed) in str(err.value)
    assert "Tesseract is missing the language data for xyz" in str(err.value)
    off = OcrSettings(enabled=False)
    with pytest.raises(PdfError, match="page\\(s\\) 2 have no text layer and need OCR"):
        extract(mixed, ocr=off)  # never a document silently missing its scanned page
    if SCANNED.exists():
        with pytest.raises(PdfError, match="OCR is not enabled"):
            extract(SCANNED, ocr=off)
