"""The PDFs `bench/rss_stages.py` measures besides the sample manuals, drawn here with
fpdf2 and PIL: pages read by OCR and the layout model, the largest pages trecho reads,
a long document, a page at the limit of what one page may draw.

Every page carries a heading, prose and a small table in columns (lines of three or more
segments); a page with a text layer also six shaded cells, so that the layout model looks
at it (`core/layout/proposals.worth_a_look`); a scan's table is read from its OCR words
where the model sees it.
"""

from __future__ import annotations

import random
from pathlib import Path

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
WORDS = (
    "contrato cliente prazo valor pagamento entrega serviço garantia multa rescisão parte "
    "obrigação manutenção equipamento operação limite pressão temperatura vibração"
).split()
TABLE = [
    ("Item", "Limite", "Unidade"),
    ("Pressão", "12", "bar"),
    ("Temperatura", "85", "°C"),
    ("Vibração", "4,5", "mm/s"),
    ("Ruído", "70", "dB"),
]


def _prose(rnd: random.Random, words: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(words)) + "."


def _lines(number: int, rnd: random.Random) -> list[tuple[str, str]]:
    """One page's printed lines: ("h", heading), ("p", prose line), ("t", a table row's
    cells joined by tabs)."""
    out: list[tuple[str, str]] = [("h", f"{number}. Seção {number}: operação e limites")]
    for _ in range(12):
        out.append(("p", _prose(rnd, 11)))
    out += [("t", "\t".join(row)) for row in TABLE]
    for _ in range(8):
        out.append(("p", _prose(rnd, 11)))
    return out


def text_pages(path: Path, pages: int, inches: tuple[float, float] = (8.27, 11.69)) -> Path:
    """A PDF of `pages` pages with a text layer, each `inches` wide and high (A4 by
    default), its text at the top left in 11-point type."""
    rnd = random.Random(7)
    pdf = FPDF(unit="pt", format=(inches[0] * 72, inches[1] * 72))
    pdf.set_auto_page_break(False)
    pdf.add_font("DejaVu", fname=FONT)
    for number in range(1, pages + 1):
        pdf.add_page()
        y = 60.0
        for kind, text in _lines(number, rnd):
            pdf.set_font("DejaVu", size=15 if kind == "h" else 11)
            if kind == "t":
                for i, cell in enumerate(text.split("\t")):
                    pdf.text(60 + 140 * i, y, cell)
            else:
                pdf.text(60, y, text)
            y += 22 if kind == "h" else 15
        pdf.set_fill_color(200, 200, 200)
        for i in range(6):  # shaded cells: what makes the layout model look at a page
            pdf.rect(60 + 40 * i, y + 10, 30, 20, style="F")
    pdf.output(str(path))
    return path


def _page_image(number: int, rnd: random.Random, dpi: int) -> Image.Image:
    """One A4 page's lines drawn in black on white, greyscale, at `dpi`."""
    scale = dpi / 72
    image = Image.new("L", (round(595 * scale), round(842 * scale)), 255)
    draw = ImageDraw.Draw(image)
    body = ImageFont.truetype(FONT, round(11 * scale))
    head = ImageFont.truetype(FONT, round(15 * scale))
    y = 60.0
    for kind, text in _lines(number, rnd):
        font = head if kind == "h" else body
        if kind == "t":
            for i, cell in enumerate(text.split("\t")):
                draw.text(((60 + 140 * i) * scale, y * scale), cell, font=font, fill=0)
        else:
            draw.text((60 * scale, y * scale), text, font=font, fill=0)
        y += 22 if kind == "h" else 15
    return image


def scanned_pages(path: Path, pages: int, inches: float | None = None, dpi: int = 150) -> Path:
    """A PDF of `pages` scans: each page only an image of text (no text layer), drawn at
    `dpi` for an A4 page and placed over the whole page; `inches` makes each page that
    many inches wide and high instead (the same image, stretched)."""
    rnd = random.Random(11)
    size = (inches * 72, inches * 72) if inches else (595.0, 842.0)
    pdf = FPDF(unit="pt", format=size)
    pdf.set_auto_page_break(False)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.image(_page_image(number, rnd, dpi), x=0, y=0, w=size[0], h=size[1])
    pdf.output(str(path))
    return path


def dense_page(path: Path, glyphs: int, inches: float = 100.0) -> Path:
    """One page `inches` wide and high drawing about `glyphs` characters in 10-point lines
    (every glyph, spaces too, is one object pdfminer lays out)."""
    rnd = random.Random(3)
    pdf = FPDF(unit="pt", format=(inches * 72, inches * 72))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    line = 340
    for i in range(max(1, glyphs // line)):
        text = " ".join(rnd.choice(WORDS) for _ in range(60)).encode("ascii", "replace")
        pdf.text(36, 40 + i * 12, text.decode()[:line])
    pdf.output(str(path))
    return path
