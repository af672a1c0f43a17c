"""Generated PDFs of statistical tables as government reports print them (fpdf2): a
heading spanning sub-columns, a stub of indented rows under group rows, and a wide table
of many numeric columns under a two-level header, ruled thinly or not at all.

Every layout is drawn word by word at fixed positions (numbers right-aligned in their
column, headings centred over what they head), so that what the reader gets is only
what a PDF holds: glyphs at positions, and the rules drawn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fpdf import FPDF

from .conftest import FONT_DIR


def new_pdf(size: float = 10, orientation: str = "P") -> FPDF:
    """An A4 fpdf2 document in DejaVu Sans, points as the unit."""
    pdf = FPDF(orientation=orientation, unit="pt", format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_font("DejaVu", "", size)
    return pdf


def value(row: int, column: int, scale: int = 9000) -> str:
    """A made-up count with thousands separators, different in every cell."""
    return f"{(row * 7919 + column * 3571 + 37) % scale + 11:,}"


def centred(pdf: FPDF, text: str, left: float, right: float, baseline: float) -> None:
    pdf.text((left + right - pdf.get_string_width(text)) / 2, baseline, text)


def right_aligned(pdf: FPDF, text: str, right: float, baseline: float) -> None:
    pdf.text(right - pdf.get_string_width(text), baseline, text)


def rule(pdf: FPDF, x0: float, x1: float, y: float, width: float = 0.4) -> None:
    pdf.set_line_width(width)
    pdf.line(x0, y, x1, y)


def column_rules(pdf: FPDF, edges: Sequence[float], top: float, bottom: float) -> None:
    """A vertical rule at each column edge, from `top` to `bottom`."""
    pdf.set_line_width(0.4)
    for x in edges:
        pdf.line(x, top, x, bottom)


# --- a heading spanning sub-columns --------------------------------------------------------

GRADES = ("K", "1", "2", "3")
YEARS = ("1992", "1994", "1996", "1998", "2000")


def grade_score(year: int, grade: int) -> str:
    return str(600 + 10 * grade + 7 * year + (year * grade) % 5)


def grade_rows() -> list[tuple[str, ...]]:
    """Year, a score under each grade, and the score of all grades."""
    return [
        (y, *(grade_score(r, g) for g in range(len(GRADES))), grade_score(r, 9))
        for r, y in enumerate(YEARS)
    ]


def grade_pdf(path: Path, rules: str) -> Path:
    """`Year | Grade (K 1 2 3) | All grades`: `Grade` centred over its four sub-columns on
    the line above them; `All grades` printed on two lines over its one column. `rules`:
    `none` (no rule anywhere), `booktabs` (a rule above the header, a short one under
    `Grade` only, one under the header and one under the last row) or `grid` (every cell
    boxed, `Grade` in one cell over its four columns, `Year` and `All grades` in cells
    over both header lines)."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(56, 70, "Table 2. Average scale score in reading, by grade and year")
    stub, first, width = 60.0, 130.0, 60.0
    cols = [(first + i * width, first + (i + 1) * width) for i in range(len(GRADES) + 1)]
    right = cols[-1][1]
    top, pitch = 84.0, 14.0
    n = len(YEARS)
    if rules == "booktabs":
        rule(pdf, stub - 4, right + 4, top)
        rule(pdf, cols[0][0] + 6, cols[3][1] - 6, top + 15)
        rule(pdf, stub - 4, right + 4, top + 30)
        rule(pdf, stub - 4, right + 4, top + 36 + pitch * n)
    if rules == "grid":
        pdf.set_line_width(0.5)
        pdf.rect(stub - 4, top, first - stub + 4, 30)
        pdf.rect(cols[0][0], top, cols[3][1] - cols[0][0], 15)
        for x0, x1 in cols[:4]:
            pdf.rect(x0, top + 15, x1 - x0, 15)
        pdf.rect(cols[4][0], top, width, 30)
        for r in range(n):
            y = top + 30 + r * pitch
            pdf.rect(stub - 4, y, first - stub + 4, pitch)
            for x0, x1 in cols:
                pdf.rect(x0, y, x1 - x0, pitch)
    centred(pdf, "Grade", cols[0][0], cols[3][1], top + 11)
    centred(pdf, "All", *cols[4], top + 11)
    pdf.text(stub, top + 25, "Year")
    for grade, (x0, x1) in zip(GRADES, cols, strict=False):
        centred(pdf, grade, x0, x1, top + 25)
    centred(pdf, "grades", *cols[4], top + 25)
    y = top + 40
    for row in grade_rows():
        pdf.text(stub, y, row[0])
        for cell, (_, x1) in zip(row[1:], cols, strict=True):
            right_aligned(pdf, cell, x1 - 18, y)
        y += pitch
    pdf.text(56, y + 14, "NOTE: Scores on a 0 to 800 scale. Made-up figures for the test.")
    pdf.output(str(path))
    return path


# --- a stub of indented rows under group rows ----------------------------------------------


@dataclass(frozen=True)
class StubRow:
    """One printed row of an indented stub: its label, indent level and values."""

    label: str
    level: int
    values: tuple[str, ...]


HOUSING_HEADER = ("Total", "Owner", "Renter")
HOUSING = [
    StubRow("Total occupied housing units", 0, ("108,871", "72,265", "36,606")),
    StubRow("Inadequate", 1, ("5,731", "2,412", "3,319")),
    StubRow("Moderately inadequate", 1, ("3,842", "1,790", "2,052")),
    StubRow("Units with elderly", 0, ()),
    StubRow("Inadequate", 1, ("1,204", "903", "301")),
    StubRow("Moderately inadequate", 1, ("977", "611", "366")),
    StubRow("Severely crowded", 2, ("88", "41", "47")),
    StubRow("New construction", 0, ("6,530", "4,808", "1,722")),
]


def housing_paths() -> list[tuple[str, StubRow]]:
    """Every row's label path (`Units with elderly > Inadequate`) beside the row."""
    out: list[tuple[str, StubRow]] = []
    stack: list[str] = []
    for row in HOUSING:
        stack = [*stack[: row.level], row.label]
        out.append((" > ".join(stack), row))
    return out


def housing_pdf(path: Path, ruled: bool, tenure: bool = False) -> Path:
    """`Characteristic | Total | Owner | Renter`, the stub's rows indented one step (12
    pt) per level under their group rows. `ruled`: every cell boxed (a rule grid), else
    no rule anywhere. `tenure`: a two-line header, `Tenure` over `Owner` and `Renter`
    (underlined when not ruled), the stub heading `Characteristic` and `Total` on its
    first line (in cells over both lines when ruled)."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(56, 70, "Table 3. Housing quality by tenure (thousands)")
    edges = [56.0, 250.0, 330.0, 410.0, 490.0]
    top, pitch = 84.0, 16.0
    lead = 2 if tenure else 1  # header lines
    rows = lead + len(HOUSING)
    pdf.set_line_width(0.5)
    if ruled:
        for r in range(lead, rows):
            for x0, x1 in zip(edges, edges[1:], strict=False):
                pdf.rect(x0, top + r * pitch, x1 - x0, pitch)
        if tenure:
            pdf.rect(edges[0], top, edges[1] - edges[0], 2 * pitch)
            pdf.rect(edges[1], top, edges[2] - edges[1], 2 * pitch)
            pdf.rect(edges[2], top, edges[4] - edges[2], pitch)
            pdf.rect(edges[2], top + pitch, edges[3] - edges[2], pitch)
            pdf.rect(edges[3], top + pitch, edges[4] - edges[3], pitch)
        else:
            for x0, x1 in zip(edges, edges[1:], strict=False):
                pdf.rect(x0, top, x1 - x0, pitch)
    pdf.text(edges[0] + 4, top + 11, "Characteristic")
    if tenure:
        centred(pdf, "Total", edges[1], edges[2], top + 11)
        centred(pdf, "Tenure", edges[2], edges[4], top + 11)
        if not ruled:
            rule(pdf, edges[2] + 8, edges[4] - 8, top + 14)
        for name, x0, x1 in zip(HOUSING_HEADER[1:], edges[2:], edges[3:], strict=False):
            centred(pdf, name, x0, x1, top + pitch + 11)
    else:
        for name, x0, x1 in zip(HOUSING_HEADER, edges[1:], edges[2:], strict=False):
            centred(pdf, name, x0, x1, top + 11)
    for r, row in enumerate(HOUSING, start=lead):
        baseline = top + r * pitch + 11
        pdf.text(edges[0] + 4 + 12 * row.level, baseline, row.label)
        for cell, x1 in zip(row.values, edges[2:], strict=False):
            right_aligned(pdf, cell, x1 - 8, baseline)
    pdf.text(56, top + rows * pitch + 16, "Source: a made-up housing survey.")
    pdf.output(str(path))
    return path


# --- group labels printed beside a ruled table, one per block of rows ------------------

BLOCKS = ("2019", "2021", "2023")
MEMBERS = ("North", "South", "All regions")
SECTORS = ("Farming", "Mining", "Trade")


def block_rows() -> list[tuple[str, str, tuple[str, ...]]]:
    """(group label, row label, shares) of every row, made-up figures."""
    return [
        (block, member, tuple(f"{(7 * b + 5 * m + 3 * s) % 60 + 10}.{s}" for s in range(3)))
        for b, block in enumerate(BLOCKS)
        for m, member in enumerate(MEMBERS)
    ]


def blocks_pdf(path: Path, beside: str) -> Path:
    """A ruled table of `North / South / All regions` rows, grouped three by three by a
    year printed left of the ruled box, beside each block's `middle` row or its `first`."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(56, 70, "Table 4. Employment by sector and region (%)")
    edges = [150.0, 250.0, 330.0, 410.0, 490.0]
    top, pitch = 84.0, 16.0
    pdf.set_line_width(0.5)
    for r in range(1 + len(block_rows())):
        for x0, x1 in zip(edges, edges[1:], strict=False):
            if r or x0 > edges[0]:
                pdf.rect(x0, top + r * pitch, x1 - x0, pitch)
    for name, x0, x1 in zip(SECTORS, edges[1:], edges[2:], strict=False):
        centred(pdf, name, x0, x1, top + 11)
    for r, (block, member, shares) in enumerate(block_rows(), start=1):
        baseline = top + r * pitch + 11
        if (r - 1) % 3 == (1 if beside == "middle" else 0):
            pdf.text(110, baseline, block)
        pdf.text(edges[0] + 4, baseline, member)
        for cell, x1 in zip(shares, edges[2:], strict=False):
            right_aligned(pdf, cell, x1 - 8, baseline)
    pdf.text(56, top + (2 + len(block_rows())) * pitch, "Source: a made-up labour survey.")
    pdf.output(str(path))
    return path


# --- a ruled table whose labels and headings run onto a second ruled row ---------------

EMISSIONS = [  # label lines (the second printed in a ruled row of its own), threshold, share
    (("Ammonia (NH3)",), "10 000", "4"),
    (("Sulphur and inorganic compounds", "(as SO2)"), "150 000", "31"),
    (("Carbon monoxide (CO)",), "500 000", "40"),
    (("Non-methane volatile organic", "compounds (NMVOC)"), "100 000", "25"),
]


def emissions_pdf(path: Path) -> Path:
    """Every printed line in a ruled row of its own: `Threshold` / `(kg/year)` and `Share`
    / `(%)` over two rows, and two labels wrapped onto a row with nothing else in it."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(56, 70, "Table 5. Reporting thresholds by pollutant")
    edges = [56.0, 260.0, 370.0, 450.0]
    top, pitch = 84.0, 14.0
    lines = [("Pollutant", "Threshold", "Share"), ("", "(kg/year)", "(%)")]
    for label, threshold, share in EMISSIONS:
        lines.append((label[0], threshold, share))
        lines += [(rest, "", "") for rest in label[1:]]
    pdf.set_line_width(0.5)
    for r, cells in enumerate(lines):
        for (x0, x1), cell in zip(zip(edges, edges[1:], strict=False), cells, strict=True):
            pdf.rect(x0, top + r * pitch, x1 - x0, pitch)
            if cell and r >= 2 and x0 > edges[0]:
                right_aligned(pdf, cell, x1 - 6, top + r * pitch + 10)
            elif cell:
                pdf.text(x0 + 4, top + r * pitch + 10, cell)
    pdf.output(str(path))
    return path


# --- a wide table: 22 columns under a two-level header ------------------------------------

SINGLES = ("Licence", "Licence renewal", "Pistol", "Rifle", "Other", "Admin")
GROUPS = (
    ("Pawn", ("Pistol", "Rifle", "Other")),
    ("Redeemed", ("Pistol", "Rifle", "Other")),
    ("Returned", ("Pistol", "Rifle", "Other")),
    ("Hired", ("Pistol", "Rifle")),
    ("Private transfer", ("Pistol", "Rifle", "Other")),
)
REGIONS = (
    "Acre",
    "Alagoas",
    "Amapá",
    "Amazonas",
    "Bahia",
    "Ceará",
    "Espírito Santo",
    "Goiás",
    "Maranhão",
    "Mato Grosso do Sul",
    "Minas Gerais",
    "Pará",
    "Paraíba",
    "Pernambuco",
)


def wide_paths() -> list[str]:
    """The heading path of each of the 21 value columns (`Pawn > Rifle`, `Admin`)."""
    paths = list(SINGLES)
    for group, subs in GROUPS:
        paths += [f"{group} > {s}" for s in subs]
    return [*paths, "Totals"]


def wide_rows() -> list[tuple[str, ...]]:
    """Each region's row: its name and 21 counts (a few zeros, as such tables have)."""
    n = len(wide_paths())
    rows = []
    for r, region in enumerate(REGIONS):
        cells = [value(r, c, 30000 if c < 5 else 900) for c in range(n - 1)]
        cells[9 + r % 5] = "0"
        total = sum(int(c.replace(",", "")) for c in cells)
        rows.append((region, *cells, f"{total:,}"))
    return rows


def _wide_table(
    pdf: FPDF, left: float, top: float, rules: str, wrapped: bool, width: float
) -> None:
    """The table with its top-left corner at (left, top), 6.5 pt type; `wrapped`: the last
    group's heading on two lines (`Private` / `transfer`), a header of three. `rules`: `none`;
    `thin` (hairlines above the header, under each group heading, under the header and
    under every row, none between columns); `boxed` (the header's cells ruled, the body
    not); `shaded` (every other row on a grey band, no line anywhere)."""
    stub, pitch = 78.0, 10.0
    n = len(wide_paths())
    cols = [(left + stub + i * width, left + stub + (i + 1) * width) for i in range(n)]
    cols[-1] = (cols[-1][0], cols[-1][1] + 8)  # the totals are the widest numbers
    right = cols[-1][1]
    thin, boxed = rules == "thin", rules == "boxed"
    if wrapped:  # a first line holding only the start of a group heading
        centred(pdf, GROUPS[-1][0].split()[0], cols[-4][0], cols[-2][1], top + 9)
        top += 10
    line1, line2 = top + 9, top + 19
    pdf.set_line_width(0.25)
    if thin:
        rule(pdf, left, right, top, 0.25)
    if boxed:
        pdf.rect(left - 2, top, stub + 2, 23)
    pdf.text(left, line2, "Region")
    for i, name in enumerate(SINGLES):
        words = name.split()
        if len(words) == 2:
            centred(pdf, words[0], *cols[i], line1)
            centred(pdf, words[1], *cols[i], line2)
        else:
            centred(pdf, name, *cols[i], line2)
        if boxed:
            pdf.rect(cols[i][0], top, cols[i][1] - cols[i][0], 23)
    i = len(SINGLES)
    for group, subs in GROUPS:
        span = (cols[i][0], cols[i + len(subs) - 1][1])
        last = wrapped and group == GROUPS[-1][0]
        centred(pdf, group.split()[-1] if last else group, *span, line1)
        if thin:
            rule(pdf, span[0] + 3, span[1] - 3, line1 + 2.5, 0.25)
        if boxed:
            pdf.rect(span[0], top, span[1] - span[0], 11.5)
        for sub in subs:
            centred(pdf, sub, *cols[i], line2)
            if boxed:
                pdf.rect(cols[i][0], top + 11.5, cols[i][1] - cols[i][0], 11.5)
            i += 1
    centred(pdf, "Totals", *cols[-1], line2)
    if boxed:
        pdf.rect(cols[-1][0], top, cols[-1][1] - cols[-1][0], 23)
    y = line2 + 4
    if thin:
        rule(pdf, left, right, y, 0.25)
    for r, row in enumerate(wide_rows()):
        if rules == "shaded" and r % 2 == 0:
            pdf.set_fill_color(225, 225, 225)
            pdf.rect(left - 2, y, right - left + 4, pitch, style="F")
        y += pitch
        pdf.text(left, y - 2.5, row[0])
        for cell, (_, x1) in zip(row[1:], cols, strict=True):
            right_aligned(pdf, cell, x1 - 3, y - 2.5)
        if thin:
            rule(pdf, left, right, y, 0.25)


WIDE_TITLE = "Table 7. Permits checked by region and type, March"


def wide_pdf(
    path: Path,
    rules: str = "none",
    printing: str = "upright",
    wrapped: bool = False,
    width: float = 33.0,
) -> Path:
    """The 22-column table on a landscape page (`upright`), on a portrait sheet turned by
    its /Rotate (`rotate`), or printed sideways on a portrait page (`sideways`); `width`
    each value column's (27 pt: the widest counts four points apart)."""
    if printing == "sideways":
        pdf = new_pdf(6.5)
        pdf.add_page()
        # the landscape page's content, turned a quarter counter-clockwise onto the sheet
        with pdf.rotation(90, x=pdf.h / 2, y=pdf.h / 2):
            _wide_body(pdf, rules, wrapped, width)
        pdf.output(str(path))
        return path
    pdf = new_pdf(6.5, orientation="L")
    pdf.add_page()
    _wide_body(pdf, rules, wrapped, width)
    pdf.output(str(path))
    if printing == "rotate":
        import pypdfium2

        doc = pypdfium2.PdfDocument(str(path))
        doc[0].set_rotation(90)
        doc.save(str(path.with_suffix(".turned.pdf")))
        doc.close()
        path.with_suffix(".turned.pdf").replace(path)
    return path


def _wide_body(pdf: FPDF, rules: str, wrapped: bool, width: float) -> None:
    """The title, the table and a note under it, in landscape page coordinates."""
    pdf.set_font_size(9)
    pdf.text(24, 40, WIDE_TITLE)
    pdf.set_font_size(6.5)
    _wide_table(pdf, 24.0, 52.0, rules, wrapped, width)
    pdf.text(24, 250, "Figures are made up for the test; zeros are printed.")


def holding(chunks: Sequence[str], *texts: str) -> list[str]:
    """The chunks that hold every one of `texts`."""
    return [c for c in chunks if all(t in c for t in texts)]


# --- right-to-left labels (Hebrew) -----------------------------------------------------

HEBREW_ROWS = ("ירושלים", "תל אביב", "חיפה", "באר שבע", "סך הכל")
"""Row labels as a person reads them (Jerusalem, Tel Aviv, Haifa, Beersheba, Total)."""
HEBREW_HEADER = ("עיר", "2021", "2022", "שינוי באחוזים")
"""The stub's heading (City), two years, and `Change in percent`."""
HEBREW_TITLE = "אוכלוסייה לפי עיר"


def hebrew_rows() -> list[tuple[str, str, str, str]]:
    """Each city with two made-up counts and a change."""
    return [
        (city, value(r, 1), value(r, 2), f"{(r * 37) % 90 / 10 + 0.1:.1f}")
        for r, city in enumerate(HEBREW_ROWS)
    ]


def visual(text: str) -> str:
    """A right-to-left text in the order its glyphs sit on the page, left to right, as
    an RTL-aware producer writes them (letters reversed)."""
    return text[::-1]


def hebrew_pdf(path: Path) -> Path:
    """A ruled table read right to left: the stub (Hebrew city names) on the right, the
    numbers to its left, under a Hebrew title and a paragraph of Hebrew prose."""
    pdf = new_pdf(10)
    pdf.add_page()
    pdf.text(380, 60, visual(HEBREW_TITLE))
    pdf.text(300, 80, visual("הנתונים מוצגים לפי עיר ושנה"))
    edges = (120.0, 220.0, 320.0, 420.0, 540.0)  # columns left to right: change, 2022, 2021, city
    printed = [HEBREW_HEADER[3], HEBREW_HEADER[2], HEBREW_HEADER[1], HEBREW_HEADER[0]]
    rows = [printed] + [[r[3], r[2], r[1], r[0]] for r in hebrew_rows()]
    top, height = 100.0, 20.0
    for i in range(len(rows) + 1):
        rule(pdf, edges[0], edges[-1], top + i * height)
    column_rules(pdf, edges, top, top + len(rows) * height)
    for i, row in enumerate(rows):
        baseline = top + i * height + 14
        for j, cell in enumerate(row):
            shown = visual(cell) if any("\u0590" <= c <= "\u05ff" for c in cell) else cell
            right_aligned(pdf, shown, edges[j + 1] - 6, baseline)
    pdf.output(str(path))
    return path


# --- headings printed upward (narrow columns of a ruled table) -------------------------

CANDIDATES = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra")
PRECINCTS = ("Alcona", "Caledonia", "Curtis", "Greenbush", "Gustin", "Totals")


def vote_rows() -> list[tuple[str, ...]]:
    """Each precinct's made-up votes per candidate."""
    return [
        (p, *(value(r, c, 900) for c in range(len(CANDIDATES)))) for r, p in enumerate(PRECINCTS)
    ]


def upward_pdf(path: Path) -> Path:
    """A ruled table of narrow columns whose headings are turned a quarter
    counter-clockwise (read bottom to top, as election returns print candidates' names)."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(60, 50, "Primary election, votes by precinct")
    edges = [60.0, 160.0, *(160.0 + 40.0 * (i + 1) for i in range(len(CANDIDATES)))]
    top, head, height = 70.0, 110.0, 18.0
    rows = vote_rows()
    bottom = top + head + len(rows) * height
    for y in (top, top + head, *(top + head + (i + 1) * height for i in range(len(rows)))):
        rule(pdf, edges[0], edges[-1], y)
    column_rules(pdf, edges, top, bottom)
    pdf.text(edges[0] + 6, top + head - 8, "Precinct")
    for j, name in enumerate(CANDIDATES):
        x, y = edges[j + 1] + 24, top + head - 8
        with pdf.rotation(90, x, y):
            pdf.text(x, y, name)
    for i, row in enumerate(rows):
        baseline = top + head + i * height + 13
        pdf.text(edges[0] + 6, baseline, row[0])
        for j, cell in enumerate(row[1:]):
            right_aligned(pdf, cell, edges[j + 2] - 6, baseline)
    pdf.output(str(path))
    return path


# --- a header that numbers its columns (and cites them in formulas) --------------------

LIABILITIES = (  # each column's label lines, top to bottom
    ("Total", "Internal", "Debt"),
    ("Market", "Loans", ""),
    ("Loans", "from", "Banks"),
    ("Loans", "from", "LIC"),
    ("Other", "Loans", ""),
)
STATES = ("Andhra Pradesh", "Assam", "Bihar", "Goa", "Gujarat", "Kerala", "Punjab")


def liability_rows() -> list[tuple[str, ...]]:
    """Each state's made-up amounts under each column."""
    return [
        (s, *(f"{(r * 131 + c * 57) % 900 / 10 + 0.5:.2f}" for c in range(len(LIABILITIES))))
        for r, s in enumerate(STATES)
    ]


def numbered_pdf(path: Path) -> Path:
    """A table set by alignment under horizontal rules: three lines of labels, a rule,
    then a line numbering the columns (`1 2= 3 4 5 6`) and one of formulas citing them
    (`(3 to 6)`), a rule, the body, a bottom rule; a title and a units line above."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(60, 50, "TABLE 12: COMPOSITION OF OUTSTANDING LIABILITIES")
    pdf.text(470, 66, "(Billion)")
    stub, width = 60.0, 70.0
    rights = [stub + 150 + width * j for j in range(len(LIABILITIES))]
    rule(pdf, stub, rights[-1] + 4, 74)
    pdf.text(stub, 88, "States")
    for j, lines in enumerate(LIABILITIES):
        for k, word in enumerate(lines):
            if word:
                centred(pdf, word, rights[j] - width + 10, rights[j], 88 + 11 * k)
    rule(pdf, stub, rights[-1] + 4, 116)
    pdf.text(stub, 128, "1")
    for j in range(len(LIABILITIES)):
        centred(pdf, f"{j + 2}{'=' if j == 0 else ''}", rights[j] - width + 10, rights[j], 128)
    centred(pdf, "(3 to 6)", rights[0] - width + 10, rights[0], 139)
    rule(pdf, stub, rights[-1] + 4, 145)
    baseline = 160.0
    for row in liability_rows():
        pdf.text(stub, baseline, row[0])
        for j, cell in enumerate(row[1:]):
            right_aligned(pdf, cell, rights[j] - 10, baseline)
        baseline += 16
    rule(pdf, stub, rights[-1] + 4, baseline - 8)
    pdf.output(str(path))
    return path


# --- a table ruled by column groups only, labels led by dots ---------------------------

ARREST_GROUPS = ("Total", "Male", "Female")
ARREST_SUBS = ("All", "Minors", "Adults")
OFFENSES = (
    "Total",
    "Violent crime",
    "Murder and nonnegligent manslaughter",  # printed on two lines
    "Forcible rape",
    "Robbery",
    "Curfew and loitering",
)


def arrest_rows() -> list[tuple[str, ...]]:
    """Each offense's made-up figures: three per group, `–` for zero, `(X)` where a
    figure does not apply."""
    rows = []
    for r, offense in enumerate(OFFENSES):
        cells = [f"{(r * 977 + c * 131) % 9000 / 10 + 1:,.1f}" for c in range(9)]
        if offense == "Forcible rape":
            cells[7] = "–"
        if offense.startswith("Curfew"):
            cells[2] = cells[5] = cells[8] = "(X)"
        rows.append((offense, *cells))
    return rows


def column_ruled_pdf(path: Path) -> Path:
    """A table whose only rules are the vertical ones between its column groups (and
    its frame): each group prints three columns of figures side by side in one ruled
    column, the stub's labels run to them with leader dots, a long label wraps."""
    pdf = new_pdf(8)
    pdf.add_page()
    pdf.text(40, 40, "Table 324. Arrests by Sex and Age")
    edges = (40.0, 200.0, 320.0, 440.0, 560.0)
    top, head = 50.0, 36.0
    rows = arrest_rows()
    lines = sum(2 if " and n" in r[0] else 1 for r in rows)
    bottom = top + head + lines * 11 + 6
    column_rules(pdf, edges, top, bottom)
    rule(pdf, edges[0], edges[-1], top)
    rule(pdf, edges[0], edges[-1], top + head)
    rule(pdf, edges[0], edges[-1], bottom)
    pdf.text(edges[0] + 4, top + 22, "Offense charged")
    subs = [edges[g + 1] + 38 * (k + 1) for g in range(3) for k in range(3)]  # right edges
    for g, group in enumerate(ARREST_GROUPS):
        centred(pdf, group, edges[g + 1], edges[g + 2], top + 10)
        for k, sub in enumerate(ARREST_SUBS):
            right_aligned(pdf, sub, subs[3 * g + k], top + 28)
    baseline = top + head + 12
    for label, *cells in rows:
        if " and n" in label:
            first, rest = label.split(" and n", 1)
            pdf.text(edges[0] + 4, baseline, f"{first} and")
            baseline += 11
            label = f"n{rest}"
        dots = " ." * int((150 - pdf.get_string_width(label)) / pdf.get_string_width(" ."))
        pdf.text(edges[0] + 4, baseline, label + dots)
        for j, cell in enumerate(cells):
            right_aligned(pdf, cell, subs[j], baseline)
        baseline += 11
    pdf.output(str(path))
    return path


# --- a crowded landscape table: 25 narrow columns, headings running together ----------------

CROWDED_GROUPS = (
    ("Permit", ("Handgun", "Long Gun", "*Other", "**Multiple", "Admin")),
    ("Pre-Pawn", ("Handgun", "Long Gun", "Other")),
    ("Redemption", ("Handgun", "Long Gun", "Other", "Multiple")),
    ("Returned", ("Handgun", "Long Gun", "Other")),
    ("Rentals", ("Handgun", "Long Gun", "Other")),
    ("Private Sale", ("Handgun", "Long Gun", "Other", "Multiple", "Admin", "Totals")),
)
"""Six group headings over three to six sub-columns each: 24 value columns beside the
stub, 25 columns in all."""
CROWDED_STATES = (
    "Alabama",
    "Alaska",
    "Arizona",
    "Arkansas",
    "California",
    "Colorado",
    "Connecticut",
    "Delaware",
    "Florida",
    "Georgia",
)
CROWDED_TITLE = "Table 3. Checks by state and type of transaction, month of March"


def crowded_rows() -> list[tuple[str, ...]]:
    """Each state's row: its name and 24 counts."""
    n = sum(len(subs) for _, subs in CROWDED_GROUPS)
    return [(s, *(value(r, c, 60000) for c in range(n))) for r, s in enumerate(CROWDED_STATES)]


def _hairline_body(
    pdf: FPDF,
    path: Path,
    rows: Sequence[Sequence[str]],
    cols: Sequence[tuple[float, float]],
    y: float,
    pitch: float,
    note: tuple[float, str],
) -> Path:
    """The body of a table of narrow `cols` under its header: a hairline at `y`, the rows
    `pitch` apart (labels flush left at 24 pt, figures flush right in their column), a
    hairline under them, then the `note` (type size, text) under the table; written out."""
    left, right = 24.0, cols[-1][1]
    rule(pdf, left, right, y, 0.25)
    for row in rows:
        y += pitch
        pdf.text(left, y - 2, row[0])
        for cell, (_, x1) in zip(row[1:], cols, strict=True):
            right_aligned(pdf, cell, x1 - 2, y - 2)
    rule(pdf, left, right, y + 2, 0.25)
    pdf.set_font_size(note[0])
    pdf.text(24, y + 20, note[1])
    pdf.output(str(path))
    return path


def crowded_pdf(path: Path) -> Path:
    """A landscape page of 25 narrow columns in 5 pt type under two heading levels (a
    group heading centred over its sub-columns), the sub-headings set so tight that the
    ones beside each other touch (`Handgun Long Gun *Other **Multiple Admin` is one run
    of words over five columns, as on a crowded government table), no rule between
    columns, hairlines above and under the header."""
    pdf = new_pdf(5, orientation="L")
    pdf.add_page()
    pdf.set_font_size(12)
    pdf.text(24, 24, "Monthly statistics of checks")
    pdf.set_font_size(9)
    pdf.text(24, 40, CROWDED_TITLE)
    pdf.set_font_size(5)
    left, stub, width, pitch = 24.0, 58.0, 26.0, 8.0
    n = sum(len(subs) for _, subs in CROWDED_GROUPS)
    cols = [(left + stub + i * width, left + stub + (i + 1) * width) for i in range(n)]
    right = cols[-1][1]
    top = 52.0
    line1, line2 = top + 8, top + 16
    rule(pdf, left, right, top, 0.25)
    pdf.text(left, line2, "State")
    i = 0
    for group, subs in CROWDED_GROUPS:
        span = (cols[i][0], cols[i + len(subs) - 1][1])
        centred(pdf, group, *span, line1)
        x = span[0] + 1  # the sub-headings one after the other, a space apart
        for sub in subs:
            pdf.text(x, line2, sub)
            x += pdf.get_string_width(sub) + 2
        i += len(subs)
    note = (7.0, "Figures are made up for the test.")
    return _hairline_body(pdf, path, crowded_rows(), cols, line2 + 3, pitch, note)


# --- a list of words, cells of several columns wrapped at once -----------------------------

LICENCE_COLUMNS = ("LICENSE", "TRADE NAME", "LICENSEE", "ADDRESS", "CITY", "ZIP")
LICENCE_EDGES = (40.0, 110.0, 220.0, 330.0, 450.0, 520.0, 560.0)


def licence_rows() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each licence: the wrapped first lines of its cells (empty where a cell is one line)
    and its row's line. Some rows wrap one cell, some two at once (the licensee's name
    and the address), as a register of licences prints them."""
    return [
        (
            ("", "", "", "", "", ""),
            ("82030", "COPPER POT", "COPPER POT INC", "7100 TERMINAL DRIVE", "NORMAN", "73069"),
        ),
        (
            ("", "", "", "7777 EAST APACHE", "", ""),
            ("648766", "BLUE HERON", "HERON CAFE LLC", "STREET", "TULSA", "74115"),
        ),
        (
            ("", "", "A SAYRE LODGING", "12215 NORTH MAY AVENUE", "", ""),
            ("547693", "SAYRE INN", "ENTERPRISES LLC", "PENNSYLVANIA", "SAYRE", "73662"),
        ),
        (
            ("", "", "", "", "", ""),
            ("509462", "DELTA GRILL", "DELTA GRILL CO", "BOX 59975", "ENID", "73701"),
        ),
        (
            ("", "", "WILL ROGERS WORLD", "2132 WEST GARY STREET", "", ""),
            ("632575", "BASHU HOUSE", "HOLDINGS LLC", "BOULEVARD", "CLINTON", "73601"),
        ),
        (
            ("", "", "", "", "", ""),
            ("600941", "FONTANA", "ULAJ GEZIM", "854 NW 12TH ST", "MOORE", "73160"),
        ),
        (
            ("", "", "DEEP FORK RIVER", "610 NORTHEAST FIFTIETH STREET", "", ""),
            ("543149", "BEDLAM BBQ", "HOLDINGS LLC", "50TH STREET", "ADA", "74820"),
        ),
        (
            ("", "", "", "", "", ""),
            ("429754", "CEDAR ROCK", "CEDAR ROCK LLC", "4347 W 41ST ST", "POTEAU", "74953"),
        ),
    ]


def licences_pdf(path: Path) -> Path:
    """A register of licences printed by alignment alone, no rule: a header line, then
    rows of words where a cell too long for its column prints its first line on a line
    of its own above the row; where two cells of a row wrap at once, that line holds two
    cells of several words apart."""
    pdf = new_pdf(7)
    pdf.add_page()
    pdf.set_font_size(11)
    pdf.text(40, 40, "Register of active licences")
    pdf.set_font_size(7)
    pitch, y = 10.0, 70.0
    for name, x0 in zip(LICENCE_COLUMNS, LICENCE_EDGES, strict=False):
        pdf.text(x0 + 2, y, name)
    for wrapped, row in licence_rows():
        if any(wrapped):
            y += pitch
            for cell, x0 in zip(wrapped, LICENCE_EDGES, strict=False):
                if cell:
                    pdf.text(x0 + 2, y, cell)
        y += pitch
        for cell, x0 in zip(row, LICENCE_EDGES, strict=False):
            pdf.text(x0 + 2, y, cell)
    pdf.output(str(path))
    return path


# --- a table whose header is more than a chunk holds, beside a readable one -----------------

SUBS = ("In full", "In part", "Denied")
PERMITS = (
    "Firearm purchase",
    "Concealed carry",
    "Dealer licence",
    "Range permit",
    "Import permit",
    "Export permit",
    "Transfer permit",
    "Collector licence",
)
PHRASE = (
    "applications received, reviewed and decided by the county office over the period under review"
)
MORE = "counted once for each applicant whatever the number of weapons named in the application"


def long_groups(longer: bool = False) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Eight group headings, each a long phrase (`longer`: twice as long) wrapped four
    words a line, over three sub-columns whose headings run together: 24 value columns
    no reader can name one by one, under header lines that fill most of a 256-token
    model's chunk (`longer`: more than it holds beside a row)."""
    phrase = f"{PHRASE} {MORE}" if longer else PHRASE
    return tuple((f"{name} {phrase}", SUBS) for name in PERMITS)


LONG_TITLE = "Table 9. Applications by county, type of permit and outcome, fiscal year"


def long_header_rows() -> list[tuple[str, ...]]:
    """Each county's row: its name and 24 counts."""
    n = len(PERMITS) * len(SUBS)
    return [(s, *(value(r, c, 60000) for c in range(n))) for r, s in enumerate(CROWDED_STATES)]


def long_header_pdf(path: Path, longer: bool = False) -> Path:
    """Two pages: prose and a readable table (`Year | Grade (K 1 2 3) | All grades`,
    booktabs) on the first; on the second, prose and a crowded table of 24 narrow columns
    in 5 pt type under group headings wrapped four words a line (eight long phrases)
    and sub-headings run together over their group's columns: a table whose columns
    cannot be named, whose printed header lines fill most of a 256-token chunk (`longer`:
    more than it holds beside a row)."""
    pdf = new_pdf(9, orientation="L")
    pdf.add_page()
    pdf.text(56, 50, "The permit office reports its yearly figures in the tables below.")
    pdf.text(56, 64, "Reading scores rose in every grade over the decade.")
    cols = [(130.0 + i * 60, 190.0 + i * 60) for i in range(len(GRADES) + 1)]
    top, pitch = 84.0, 14.0
    rule(pdf, 56, cols[-1][1] + 4, top)
    rule(pdf, cols[0][0] + 6, cols[3][1] - 6, top + 15)
    rule(pdf, 56, cols[-1][1] + 4, top + 30)
    centred(pdf, "Grade", cols[0][0], cols[3][1], top + 11)
    centred(pdf, "All", *cols[4], top + 11)
    pdf.text(60, top + 25, "Year")
    for grade, (x0, x1) in zip(GRADES, cols, strict=False):
        centred(pdf, grade, x0, x1, top + 25)
    centred(pdf, "grades", *cols[4], top + 25)
    y = top + 40
    for row in grade_rows():
        pdf.text(60, y, row[0])
        for cell, (_, x1) in zip(row[1:], cols, strict=True):
            right_aligned(pdf, cell, x1 - 18, y)
        y += pitch
    rule(pdf, 56, cols[-1][1] + 4, y - 8)
    pdf.text(56, y + 14, "The harbour master approved most permits within a week.")
    pdf.add_page()
    pdf.set_font_size(9)
    pdf.text(24, 30, "Permits are counted where the application was filed.")
    pdf.text(24, 44, LONG_TITLE)
    pdf.set_font_size(5)
    left, stub, width, pitch = 24.0, 58.0, 31.0, 8.0
    groups = long_groups(longer)
    n = len(PERMITS) * len(SUBS)
    cols = [(left + stub + i * width, left + stub + (i + 1) * width) for i in range(n)]
    right = cols[-1][1]
    top = 52.0
    rule(pdf, left, right, top, 0.25)
    i = 0
    lines = max(len(g.split()) for g, _ in groups) // 4 + 1
    for group, subs in groups:
        span = (cols[i][0], cols[i + len(subs) - 1][1])
        words = group.split()
        for k in range(0, len(words), 4):
            centred(pdf, " ".join(words[k : k + 4]), *span, top + 8 + 1.5 * k)
        x = span[0] + 1
        for sub in subs:
            pdf.text(x, top + 8 + 6 * lines, sub)
            x += pdf.get_string_width(sub) + 2
        i += len(subs)
    pdf.text(left, top + 8 + 6 * lines, "County")
    note = (9.0, "Denied applications may be filed again after ninety days.")
    return _hairline_body(pdf, path, long_header_rows(), cols, top + 11 + 6 * lines, pitch, note)


# --- a period heading over each value/percent pair ------------------------------------------

PERIODS = ("12/31/2009", "12/31/2010", "6/30/2011")
LOANS = ("Residential", "Commercial", "Industrial", "Agricultural", "Consumer", "Total")


def loan_rows() -> list[tuple[str, ...]]:
    """Each loan type's row: its label, then an amount and a share under each period."""
    return [
        (
            label,
            *(value(r, c) if c % 2 == 0 else f"{(r * 13 + c * 7) % 90 + 5}.{c}%" for c in range(6)),
        )
        for r, label in enumerate(LOANS)
    ]


def periods_pdf(
    path: Path,
    stub_heading: bool = True,
    grid: bool = False,
    wrapped: bool = False,
    underlined: bool = False,
    tight: bool = False,
) -> Path:
    """A header of fewer cells than the body: a period (`12/31/2009`, a date) centred
    over each `$000's | %` pair of columns on the line above them, a rule above the
    header, under it and under the last row, no column rules. `grid`: every cell boxed
    (a period in one box over its pair); `wrapped`: the pair is `$ millions | %` with the
    `$` wrapped onto a line of its own over `millions`; `underlined`: no rule across the
    table, a short rule under each period only (its lines and the body's then one run of
    lines holding values: a date and a `%` read as values); `tight`: the pairs' columns set
    close, each period wider than the gap between its pair's columns and over all of it."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.set_font_size(11)
    pdf.text(56, 60, "Table 3. Loans by type")
    pdf.set_font_size(9)
    pdf.text(56, 84, "The loan book grew in every period below, commercial loans most of all.")
    left, stub, pitch, top = 56.0, 150.0, 46.0 if tight else 62.0, 110.0
    right = stub + 6 * pitch
    low = top + (24 if wrapped else 14)  # the baseline of the lowest header line
    if not underlined:
        rule(pdf, left, right, top - 12)
    for p, period in enumerate(PERIODS):
        centred(pdf, period, stub + 2 * p * pitch, stub + 2 * (p + 1) * pitch, top)
        if underlined:
            rule(pdf, stub + 2 * p * pitch + 6, stub + 2 * (p + 1) * pitch - 6, top + 3)
    for c in range(6):
        x1 = stub + (c + 1) * pitch - 4
        if c % 2:
            right_aligned(pdf, "%", x1, low)
        elif wrapped:
            right_aligned(pdf, "$", x1, low - 10)
            right_aligned(pdf, "millions", x1, low)
        else:
            right_aligned(pdf, "$000's", x1, low)
    if stub_heading:
        pdf.text(left, low, "Loan type")
    if not underlined:
        rule(pdf, left, right, low + 4)
    y = low + 18
    for row in loan_rows():
        pdf.text(left, y, row[0])
        for c, cell in enumerate(row[1:]):
            right_aligned(pdf, cell, stub + (c + 1) * pitch - 4, y)
        y += 14
    if not underlined:
        rule(pdf, left, right, y - 8)
    if grid:  # the column rules, the periods' boxes and a rule under each row
        pdf.set_line_width(0.4)
        for x in [left, stub, *(stub + (c + 1) * pitch for c in range(6))]:
            pdf.line(x, top + 4 if (x - stub) % (2 * pitch) else top - 12, x, y - 8)
        rule(pdf, stub, right, top + 4)
        for k in range(len(LOANS)):
            rule(pdf, left, right, low + 8 + 14 * (k + 1))
    pdf.text(56, y + 20, "Commercial loans rose by a fifth over the three periods.")
    pdf.output(str(path))
    return path


WRITTEN = ("Dec. 31, 2009", "Dec. 31, 2010", "June 30, 2011")


def banded_periods_pdf(path: Path) -> Path:
    """The periods of `periods_pdf` written out (`Dec. 31, 2009`), in a header band shaded
    as a browser prints a zebra table's head: a filled box per header cell (a period's
    over its pair), a thin black bar under each column's part of every header line, no
    other rule; the amount column wider than the percent one, so that the edge between
    them falls in the space before the period's year (`Dec. 31, | 2009`)."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.set_font_size(11)
    pdf.text(56, 60, "Table 4. Loans by type, at the end of each period")
    pdf.set_font_size(9)
    left, stub, pair, top, line = 56.0, 150.0, 130.0, 96.0, 14.0
    edges = [left, stub]
    for p, period in enumerate(WRITTEN):
        start = stub + p * pair + (pair - pdf.get_string_width(period)) / 2
        head = period.rsplit(" ", 1)[0] + " "  # the edge in the space before the year
        space = pdf.get_string_width(" ")
        edges += [start + pdf.get_string_width(head) - space / 2, stub + (p + 1) * pair]
    pdf.set_fill_color(221, 227, 234)  # the band: the stub's box down both lines,
    pdf.rect(left, top, stub - left, 2 * line, style="F")  # a period's over its pair
    for p in range(3):
        pdf.rect(edges[1 + 2 * p], top, edges[3 + 2 * p] - edges[1 + 2 * p], line, style="F")
    for x0, x1 in zip(edges[1:], edges[2:], strict=False):
        pdf.rect(x0, top + line, x1 - x0, line, style="F")
    pdf.set_fill_color(0, 0, 0)  # a bar under each column's part of each header line
    for x0, x1 in zip(edges, edges[1:], strict=False):
        for bar in (top + line, top + 2 * line):
            if x0 != left or bar != top + line:
                pdf.rect(x0, bar - 0.7, x1 - x0, 0.7, style="F")
    for p, period in enumerate(WRITTEN):
        centred(pdf, period, stub + p * pair, stub + (p + 1) * pair, top + line - 4)
    for c in range(6):
        right_aligned(pdf, "%" if c % 2 else "$000's", edges[c + 2] - 4, top + 2 * line - 4)
    pdf.text(left + 4, top + 2 * line - 4, "Loan type")
    y = top + 3 * line
    for k, row in enumerate(loan_rows()):
        if k % 2:
            pdf.set_fill_color(236, 236, 236)
            for x0, x1 in zip(edges, edges[1:], strict=False):
                pdf.rect(x0, y - line + 4, x1 - x0, line, style="F")
        pdf.text(left + 4, y, row[0])
        for c, cell in enumerate(row[1:]):
            right_aligned(pdf, cell, edges[c + 2] - 4, y)
        y += line
    pdf.text(56, y + 20, "Commercial loans rose by a fifth over the three periods.")
    pdf.output(str(path))
    return path


# --- a row label running on past the first value column's edge ---------------------------

INDUSTRIES = (
    "Construction",
    "Manufacturing",
    "Retail trade",
    "Professional, scientific, and technical services",
    "Information",
    "Utilities",
    "Mining",
    "Wholesale trade",
    "Finance",
    "Education",
    "Health care",
    "Public sector",
    "All industries",
)
RUN_ON_YEARS = ("2019", "2020", "2021")


def run_on_rows() -> list[tuple[str, ...]]:
    """Each industry's row: its label and a count under each year."""
    return [(label, *(value(r, c) for c in range(3))) for r, label in enumerate(INDUSTRIES)]


def ruled_above_and_under(
    path: Path,
    title: str,
    heads: Sequence[str],
    rights: Sequence[float],
    rows: Sequence[Sequence[str]],
    note: str,
) -> Path:
    """A borderless table under a rule above and under its one header line and a rule
    under its last row: the stub's heading and labels flush left at 56 pt, each other
    heading and value flush right at its column's `rights`; `title` above, `note` under."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.set_font_size(11)
    pdf.text(56, 60, title)
    pdf.set_font_size(9)
    left, top = 56.0, 96.0
    rule(pdf, left, rights[-1], top - 12)
    pdf.text(left, top, heads[0])
    for head, right in zip(heads[1:], rights, strict=True):
        right_aligned(pdf, head, right, top)
    rule(pdf, left, rights[-1], top + 5)
    y = top + 18
    for row in rows:
        pdf.text(left, y, row[0])
        for cell, right in zip(row[1:], rights, strict=True):
            right_aligned(pdf, cell, right, y)
        y += 13
    rule(pdf, left, rights[-1], y - 8)
    pdf.text(56, y + 20, note)
    pdf.output(str(path))
    return path


def run_on_pdf(path: Path) -> Path:
    """A borderless table whose stub is short but for one label of twelve, printed on one
    line that runs on past the middle between the stub and the first value column, a
    column gap short of its value (`... technical services   2,276`)."""
    pdf = new_pdf(9)
    long_end = 56.0 + pdf.get_string_width(INDUSTRIES[3])
    rights = [long_end + 12 + pdf.get_string_width("9,999") + 60 * k for k in range(3)]
    return ruled_above_and_under(
        path,
        "Table 5. Establishments by industry",
        ("Industry", *RUN_ON_YEARS),
        rights,
        run_on_rows(),
        "Counts are of establishments open at the end of each year.",
    )


# --- headings wider than their figures, a space apart on the lowest header line ---------

REGIONS = ("North", "South", "East", "West", "Central", "Islands")
UNIT_HEADS = ("%", "$ thousands", "%", "$ thousands")


def unit_rows() -> list[tuple[str, ...]]:
    """Each region's row: a share and an amount, twice."""
    return [
        (
            region,
            *(f"{(r * 13 + c * 7) % 90 + 5}.{c}" if c % 2 == 0 else value(r, c) for c in range(4)),
        )
        for r, region in enumerate(REGIONS)
    ]


def units_pdf(path: Path) -> Path:
    """A share and an amount column, twice, under headings set flush right as their
    figures are: `%` over the share, `$ thousands` over the amount, the latter wider than
    its figures and one space after the `%` (`% $ thousands`), its `$` left of the edge
    halfway between the two columns' figures."""
    pdf = new_pdf(9)
    space, amount = pdf.get_string_width(" "), pdf.get_string_width(UNIT_HEADS[1])
    rights = [200.0, 200.0 + space + amount]
    rights += [rights[1] + 50, rights[1] + 50 + space + amount]
    return ruled_above_and_under(
        path,
        "Table 6. Sales by region",
        ("Region", *UNIT_HEADS),
        rights,
        unit_rows(),
        "Shares are of the national total.",
    )


# --- a stub printed apart: labels in a block of their own, far left of the values ------

APART_HEADER = ("Owner", "Renter", "All")
APART = [  # label lines, indent level, values (none for a group row)
    (("Northeast",), 0, ()),
    (("New England",), 1, ("246", "23,806", "24,052")),
    (("Middle", "Atlantic"), 1, ("682", "94,154", "94,836")),
    (("Midwest",), 0, ()),
    (("East North", "Central"), 1, ("604", "64,576", "65,180")),
    (("West North", "Central"), 1, ("546", "60,226", "60,772")),
    (("Mountain",), 0, ("396", "23,340", "23,736")),
]


def apart_paths() -> list[tuple[str, tuple[str, ...]]]:
    """Every valued row's label path (`Northeast > Middle Atlantic`) and values."""
    out: list[tuple[str, tuple[str, ...]]] = []
    stack: list[str] = []
    for lines, level, values in APART:
        stack = [*stack[:level], " ".join(lines)]
        if values:
            out.append((" > ".join(stack), values))
    return out


def apart_pdf(path: Path) -> Path:
    """`Owner | Renter | All` over values that start 120 pt right of a narrow stub, its
    labels indented under group rows; a label too long for the stub wraps onto a second
    line, the row's values printed against that last line. Lines inside a row 11.7 pt apart
    (a leading of 1.3), rows 14.1 pt apart (a cell's padding of 1.2 pt above and below),
    as a browser prints an HTML table: a wrapped label's lines are a little more than half
    as far apart as two rows are."""
    pdf = new_pdf(9)
    pdf.add_page()
    pdf.text(56, 70, "Table 11. Households by division")
    rights = [290.0, 370.0, 450.0]
    y = 96.0
    for name, x1 in zip(APART_HEADER, rights, strict=True):
        right_aligned(pdf, name, x1, y)
    rule(pdf, 56, 450, y + 5)
    y += 18
    for lines, level, values in APART:
        for k, line in enumerate(lines):
            pdf.text(56 + 10 * level, y + 11.7 * k, line)
        y += 11.7 * (len(lines) - 1)
        for cell, x1 in zip(values, rights, strict=False):
            right_aligned(pdf, cell, x1, y)
        y += 14.1
    rule(pdf, 56, 450, y - 8)
    pdf.text(56, y + 12, "Source: a made-up household survey.")
    pdf.output(str(path))
    return path
