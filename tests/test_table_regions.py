"""Table regions of a period printed over each value and percent pair (issue 60 item 6):
the whole table is found, header and body, where the header is a box of shaded cells
over a body of shaded bands (no rule inside it), or where nothing is ruled at all. The
PDFs are generated (fpdf2), each drawn as a browser prints these layouts; the regions
come from the real finder (`find_tables`: rules, then alignment)."""

from __future__ import annotations

from pathlib import Path

import pdfplumber
import pytest
from fpdf import FPDF

from rag_assets.core.tables import find_tables

from .table_layouts import centred, new_pdf, right_aligned

PERIODS = ("6/30/2008", "12/31/2008", "6/30/2009")
AGES = ("15 to 24 years", "25 to 34 years", "35 to 44 years", "45 to 54 years", "All")
HEADER_FILL = (221, 227, 234)  # the shaded header cells
BAND_FILL = (236, 236, 236)  # every other body row


def pair_rows() -> list[tuple[str, ...]]:
    """Each row's label, then an amount and a share under each of three periods."""
    return [
        (
            label,
            *(
                f"{(r * 7919 + p * 3571) % 90000 + 1000:,}"
                if c == 0
                else f"{(r * 13 + p * 7) % 90 + 5}.{p}%"
                for p in range(3)
                for c in range(2)
            ),
        )
        for r, label in enumerate(AGES)
    ]


def _cell(pdf: FPDF, x0: float, top: float, x1: float, bottom: float, fill: tuple) -> None:
    pdf.set_fill_color(*fill)
    pdf.rect(x0, top, x1 - x0, bottom - top, style="F")


def pairs_pdf(path: Path, style: str, names: tuple[str, str]) -> Path:
    """`Table 98` with a stub and three periods, each over its pair `names` (`Amount | %`).

    `zebra`: every header cell a shaded rectangle (each period one cell over its pair; the
    stub's one cell down both header lines), a thin black bar under each period and one
    under the header, body rows shaded every other one cell by cell, no rule else.
    `borderless`: no rule and no fill; the stub's heading `Item` centred down the two
    header lines, reaching into both."""
    pdf = new_pdf(8)
    pdf.add_page()
    pdf.set_font_size(10)
    pdf.text(42, 52, "Table 98. Business establishments by age")
    pdf.set_font_size(8)
    left, stub, widths = 42.0, 112.0, (46.0, 50.0)
    edges = [left, stub]
    for _ in PERIODS:
        edges += [edges[-1] + widths[0], edges[-1] + widths[0] + widths[1]]
    top, line, pitch = 60.0, 15.0, 14.0
    zebra = style == "zebra"
    if zebra:
        _cell(pdf, left, top, stub, top + 2 * line, HEADER_FILL)
        for p, period in enumerate(PERIODS):
            x0, x1 = edges[1 + 2 * p], edges[3 + 2 * p]
            _cell(pdf, x0, top, x1, top + line, HEADER_FILL)
            centred(pdf, period, x0, x1, top + 11)
            _cell(pdf, x0 + 4, top + line - 3, x1 - 4, top + line - 2.3, (0, 0, 0))
            for k, name in enumerate(names):
                a, b = edges[1 + 2 * p + k], edges[2 + 2 * p + k]
                _cell(pdf, a, top + line, b, top + 2 * line, HEADER_FILL)
                right_aligned(pdf, name, b - 4, top + line + 11)
        _cell(pdf, left, top + 2 * line, edges[-1], top + 2 * line + 0.8, (0, 0, 0))
    else:
        for p, period in enumerate(PERIODS):
            centred(pdf, period, edges[1 + 2 * p], edges[3 + 2 * p], top + 10)
            for k, name in enumerate(names):
                right_aligned(pdf, name, edges[2 + 2 * p + k] - 4, top + line + 6)
        pdf.text(left + 3, top + 16, "Item")  # between the two header lines
    y = top + 2 * line + 4
    for r, row in enumerate(pair_rows()):
        if zebra and r % 2:
            for a, b in zip(edges, edges[1:], strict=False):
                _cell(pdf, a, y, b, y + pitch, BAND_FILL)
        pdf.text(left + 3, y + 10, row[0])
        for c, cell in enumerate(row[1:]):
            right_aligned(pdf, cell, edges[c + 2] - 4, y + 10)
        y += pitch
    pdf.text(42, y + 24, "Note: establishments counted at the end of each period.")
    pdf.output(str(path))
    return path


@pytest.mark.parametrize(
    ("style", "names"),
    [
        ("zebra", ("Balance", "% of loans")),
        ("zebra", ("Amount", "%")),
        ("borderless", ("$000's", "%")),
    ],
)
def test_a_period_over_each_pair_finds_the_whole_table(
    tmp_path: Path, style: str, names: tuple[str, str]
):
    """One table, from the periods down to the last row, each value in its row under its
    period and its own heading. Before: a shaded box of periods over shaded bands was a
    table of two rows alone (its dates no labels, so no header of the body under it), and
    with nothing ruled no table was found (`Item` between the header lines, reaching
    into both, ended the header)."""
    path = pairs_pdf(tmp_path / f"{style}.pdf", style, names)
    with pdfplumber.open(path) as pdf:
        tables = find_tables(pdf.pages[0])
        lowest = max(w["bottom"] for w in pdf.pages[0].extract_words() if w["text"] == "All")
    assert len(tables) == 1, [t.rows for t in tables]
    (table,) = tables
    assert table.bbox[1] < 70 and table.bbox[3] >= lowest - 1, table.bbox
    body = [[" ".join(c.split()) for c in row] for row in table.rows[table.header_rows :]]
    assert body == [list(row) for row in pair_rows()]
    assert table.header[1:3] == [f"{PERIODS[0]} > {n}" for n in names], table.header
