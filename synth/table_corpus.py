"""Generated tables for bench/tables.py: PDFs shaped like public statistical tables, with
their ground truth (the `generated` source).

The headings, stubs and layouts follow what statistical agencies print (enrollment by
grade, housing characteristics, population by state, employment by industry); the values
are made up by a seeded random generator (`--seed`, default 22): same seed, same PDFs, byte
for byte. What each table exercises:

- `gen-enrollment`: ruled all over; a two-level header (`Grade` spanning `K` to `5`,
  `Year` and `All grades` spanning both header rows); years as row labels.
- `gen-housing`: horizontal rules only, a short rule under each group heading; stub
  heading `Characteristic`; indented rows under group rows (`Total occupied housing
  units` with values, `Units in structure` without), so a row's label is its path.
- `gen-states-wide`, `-sideways`, `-rotate90`: 52 rows by 24 value columns under a
  two-level header, 5.5 pt, thin rules under the headings only, no vertical rule; on a
  landscape page, printed sideways on a portrait page, and on a page turned by /Rotate.
- `gen-industry`: no rules at all, over two pages (the header printed again, the title
  `--Continued`), a group of indented rows running over the page break.

The truth is logical: a spanning heading is one cell over its columns, a group row label
one cell in a first stub column spanning its rows (its indented rows' own labels in the
second), so the figure's topmost header is the group heading and its leftmost row label
the group label; `path` holds every heading and label of a cell.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from synth.table_headings import HOUSING, INDUSTRIES, STATES
from synth.table_truth import Case, Cell, Source, TruthTable

if TYPE_CHECKING:
    from fpdf import FPDF  # a dev dependency, imported where PDFs are written

Head = tuple[str, int, int, int]  # text, first and last printed column, header rows spanned


@dataclass
class Row:
    """One printed body row: its label, indent level (0 or 1) and values (None: a group
    heading printed alone)."""

    label: str
    level: int = 0
    values: list[str] | None = None


@dataclass
class Spec:
    """A table as printed: title, column widths (mm, stub first), header rows, body rows."""

    name: str
    title: str
    widths: list[float]
    heads: list[list[Head]]
    rows: list[Row]
    rules: str = "grid"  # grid, horizontal, thin, none
    size: float = 8.0
    carried: str = ""  # the group label of the first rows, printed on an earlier page

    @property
    def nested(self) -> bool:
        return any(r.level for r in self.rows)


@dataclass
class Drawing:
    """Where a table is drawn: page orientation, offset, and how the page is turned."""

    orientation: str = "P"
    turn: str = ""  # "", "sideways" (drawn turned on a portrait page), "rotate90" (/Rotate)
    specs: list[list[Spec]] = field(default_factory=list)  # the tables of each page


def fmt(value: float, decimals: int = 0) -> str:
    """A number as the tables print it: thousands separators, fixed decimals."""
    return f"{value:,.{decimals}f}"


# --- the tables --------------------------------------------------------------------------


def enrollment(rng: random.Random) -> Spec:
    """Enrollment by grade and year, ruled all over, `Grade` spanning K to 5."""
    grades = ["K", "1", "2", "3", "4", "5"]
    rows = []
    for year in range(2010, 2024):
        by_grade = [rng.randint(3450, 4250) for _ in grades]
        ungraded = rng.randint(60, 140)
        rows.append(
            Row(str(year), 0, [fmt(sum(by_grade) + ungraded), *map(fmt, by_grade), fmt(ungraded)])
        )
    heads = [
        [("Year", 0, 0, 2), ("All grades", 1, 1, 2), ("Grade", 2, 7, 1), ("Ungraded", 8, 8, 2)],
        [(g, 2 + i, 2 + i, 1) for i, g in enumerate(grades)],
    ]
    return Spec(
        "gen-enrollment",
        "Table 1. Public elementary school enrollment, by grade: fall 2010 to fall 2023 "
        "(in thousands)",
        [18, 22, *[16] * 6, 20],
        heads,
        rows,
        rules="grid",
    )


def housing(rng: random.Random) -> Spec:
    """Housing characteristics by tenure and location: indented rows under group rows."""

    def values() -> list[str]:
        owner, renter = rng.randint(900, 48000), rng.randint(500, 30000)
        urban = rng.randint(int((owner + renter) * 0.6), int((owner + renter) * 0.9))
        return [
            fmt(owner + renter),
            fmt(owner),
            fmt(renter),
            fmt(urban),
            fmt(owner + renter - urban),
        ]

    rows = []
    for group, with_values, items in HOUSING:
        rows.append(Row(group, 0, values() if with_values else None))
        rows.extend(Row(item, 1, values()) for item in items)
    heads = [
        [
            ("Characteristic", 0, 0, 2),
            ("Total", 1, 1, 2),
            ("Tenure", 2, 3, 1),
            ("Location", 4, 5, 1),
        ],
        [("Owner", 2, 2, 1), ("Renter", 3, 3, 1), ("Urban", 4, 4, 1), ("Rural", 5, 5, 1)],
    ]
    return Spec(
        "gen-housing",
        "Table 2. Occupied housing units by tenure and selected characteristics, 2023 "
        "(numbers in thousands)",
        [62, 22, 22, 22, 22, 22],
        heads,
        rows,
        rules="horizontal",
        size=8.5,
    )


def states(rng: random.Random) -> Spec:
    """Population and components of change by state: 24 value columns, two-level header."""
    years = list(range(2016, 2025))
    rows = []
    for name in ["United States", *(s.replace("_", " ") for s in STATES)]:
        scale = 330000 if name == "United States" else rng.randint(580, 39500)
        pop = [scale * (1 + 0.004 * i + rng.uniform(-0.002, 0.002)) for i in range(len(years))]
        births = [scale * rng.uniform(0.010, 0.013) for _ in range(5)]
        deaths = [scale * rng.uniform(0.008, 0.011) for _ in range(5)]
        migration = [scale * rng.uniform(-0.01, 0.02), scale * rng.uniform(0.0, 0.01)]
        change = [
            (pop[4] / pop[0] - 1) * 100,
            (pop[8] / pop[4] - 1) * 100,
            (pop[8] / pop[0] - 1) * 100,
        ]
        rows.append(
            Row(
                name,
                0,
                [
                    *(fmt(p) for p in pop),
                    *(fmt(b, 1) for b in births),
                    *(fmt(d, 1) for d in deaths),
                    *(fmt(m, 1) for m in migration),
                    *(fmt(c, 1) for c in change),
                ],
            )
        )
    groups = [
        ("Resident population, July 1", [str(y) for y in years]),
        ("Births", [str(y) for y in range(2020, 2025)]),
        ("Deaths", [str(y) for y in range(2020, 2025)]),
        ("Net migration", ["Domestic", "International"]),
        ("Percent change", ["2016-20", "2020-24", "2016-24"]),
    ]
    top: list[Head] = [("State", 0, 0, 2)]
    sub: list[Head] = []
    col = 1
    for heading, subs in groups:
        top.append((heading, col, col + len(subs) - 1, 1))
        sub.extend((s, col + i, col + i, 1) for i, s in enumerate(subs))
        col += len(subs)
    return Spec(
        "gen-states",
        "Table 3. Resident population and components of change by state, 2016 to 2024 "
        "(numbers in thousands)",
        [29, *[10.0] * 19, 13.0, 13.0, *[10.0] * 3],
        [top, sub],
        rows,
        rules="thin",
        size=5.5,
    )


def industry(rng: random.Random) -> Spec:
    """Employment by industry, sex, race and ethnicity: no rules, long enough for 2 pages."""

    def values() -> list[str]:
        total = rng.randint(120, 16000)
        women = rng.uniform(8, 80)
        men_n = total * (100 - women) / 100
        shares = [
            women,
            rng.uniform(55, 85),
            rng.uniform(4, 22),
            rng.uniform(2, 15),
            rng.uniform(6, 40),
        ]
        return [fmt(total), fmt(men_n), fmt(total - men_n), *(fmt(s, 1) for s in shares)]

    rows = []
    for group, items in INDUSTRIES:
        rows.append(Row(group, 0, values()))
        rows.extend(Row(item, 1, values()) for item in items)
    heads = [
        [
            ("Industry", 0, 0, 2),
            ("Total employed", 1, 1, 2),
            ("Sex", 2, 3, 1),
            ("Percent of total employed", 4, 8, 1),
        ],
        [
            ("Men", 2, 2, 1),
            ("Women", 3, 3, 1),
            ("Women", 4, 4, 1),
            ("White", 5, 5, 1),
            ("Black", 6, 6, 1),
            ("Asian", 7, 7, 1),
            ("Hispanic or Latino", 8, 8, 1),
        ],
    ]
    return Spec(
        "gen-industry",
        "Table 4. Employed persons by detailed industry, sex, race, and Hispanic or Latino "
        "ethnicity, annual averages (numbers in thousands)",
        [60, 18, 14, 14, 14, 14, 14, 14, 26],
        heads,
        rows,
        rules="none",
        size=7.5,
    )


def split_pages(spec: Spec, per_page: int) -> list[Spec]:
    """A long table cut into pages of `per_page` rows, its header printed again on each
    and `--Continued` after the title of every page but the first."""
    parts = []
    group = ""
    for start in range(0, len(spec.rows), per_page):
        rows = spec.rows[start : start + per_page]
        title = spec.title if not start else f"{spec.title.split('.')[0]}. --Continued"
        parts.append(
            Spec(spec.name, title, spec.widths, spec.heads, rows, spec.rules, spec.size, group)
        )
        for row in rows:
            if row.level == 0:
                group = row.label
    return parts


# --- drawing -----------------------------------------------------------------------------


def draw(p: FPDF, spec: Spec, x0: float, y0: float) -> float:
    """Print one table with its top left corner at (x0, y0), mm; returns its bottom."""
    edges = [x0]
    for w in spec.widths:
        edges.append(edges[-1] + w)
    line = spec.size * 0.3528 * 1.45  # mm per printed line
    p.set_font("Helvetica", "B", spec.size + 1)
    p.text(x0, y0 + line, spec.title)
    top = y0 + line * 1.6
    p.set_font("Helvetica", "", spec.size)
    p.set_line_width(0.08 if spec.rules == "thin" else 0.2)
    n_head = len(spec.heads)
    head_h = line * 1.3
    body_top = top + n_head * head_h

    def put(text: str, c0: int, c1: int, y: float, align: str, indent: float = 0.0) -> None:
        width = p.get_string_width(text)
        left, right = edges[c0] + 1.2 + indent, edges[c1 + 1] - 1.2
        x = {"L": left, "R": right - width, "C": (left + right - width) / 2}[align]
        p.text(x, y, text)

    for r, heads in enumerate(spec.heads):
        for text, c0, c1, span in heads:
            y = top + (r + span) * head_h - head_h * 0.35
            put(text, c0, c1, y, "L" if c0 == 0 else "C")
            if span == 1 and c1 > c0 and spec.rules in ("horizontal", "thin"):
                rule_y = top + (r + 1) * head_h - 0.3
                p.line(edges[c0] + 1, rule_y, edges[c1 + 1] - 1, rule_y)
    y = body_top
    for row in spec.rows:
        y += line
        put(row.label, 0, 0, y - line * 0.28, "L", indent=3.0 * row.level)
        for j, value in enumerate(row.values or []):
            put(value, j + 1, j + 1, y - line * 0.28, "R")
    bottom = y + line * 0.3
    left, right = edges[0], edges[-1]
    if spec.rules in ("horizontal", "thin"):
        for rule_y in (top, body_top, bottom):
            p.line(left, rule_y, right, rule_y)
    if spec.rules == "grid":
        ys = [top + k * head_h for k in range(n_head + 1)]
        ys += [body_top + k * line for k in range(1, len(spec.rows) + 1)]
        for k, rule_y in enumerate(ys):
            if 0 < k < n_head:  # between header rows: only under the spanning headings
                for _text, c0, c1, span in spec.heads[k - 1]:
                    if span == 1:
                        p.line(edges[c0], rule_y, edges[c1 + 1], rule_y)
                continue
            p.line(left, rule_y, right, rule_y)
        for c, x in enumerate(edges):
            p.line(x, body_top, x, ys[-1])
            for r, heads in enumerate(spec.heads):  # header: not through a spanning heading
                inside = any(c0 < c <= c1 for _, c0, c1, _ in heads)
                if not inside:
                    p.line(x, top + r * head_h, x, top + (r + 1) * head_h)
    return bottom


def truth(spec: Spec, page: int) -> TruthTable:
    """The logical cells of a printed table (see the module docstring)."""
    shift = 1 if spec.nested else 0
    cells: list[Cell] = []
    for r, heads in enumerate(spec.heads):
        for text, c0, c1, span in heads:
            first = 0 if c0 == 0 else c0 + shift
            cells.append(Cell(r, first, r + span - 1, c1 + shift, text))
    n_head = len(spec.heads)
    logical: list[Row] = [r for r in spec.rows if r.values is not None]
    index = {id(r): n_head + i for i, r in enumerate(logical)}
    # group labels: a first-column cell over the group's own row (if it has values) and
    # the rows indented under it; the rows at the top of a continued page carry the group
    # label of the page before
    groups: list[tuple[str, list[Row]]] = []
    if spec.carried and spec.rows and spec.rows[0].level:
        groups.append((spec.carried, []))
    for row in spec.rows:
        if row.level == 0:
            groups.append((row.label, [row] if row.values is not None else []))
        elif groups:
            groups[-1][1].append(row)
    for label, members in groups:
        if not members:
            continue
        rows_at = [index[id(m)] for m in members]
        if shift:
            cells.append(Cell(min(rows_at), 0, max(rows_at), 0 if len(members) > 1 else 1, label))
    for row in logical:
        r = index[id(row)]
        if not shift:
            cells.append(Cell(r, 0, r, 0, row.label))
        elif row.level:
            cells.append(Cell(r, 1, r, 1, row.label))
        cells.extend(
            Cell(r, j + 1 + shift, r, j + 1 + shift, v) for j, v in enumerate(row.values or [])
        )
    printed = (n_head + len(spec.rows), len(spec.widths))
    return TruthTable(page, None, cells, n_head, 1 + shift, spec.name, printed)


def write(path: Path, drawing: Drawing) -> None:
    """Write the pages of one PDF (deterministic: fixed dates, content-derived id)."""
    from fpdf import FPDF

    pdf = FPDF(orientation="P", format="A4")
    pdf.set_creation_date(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    pdf.set_auto_page_break(False)
    for specs in drawing.specs:
        if drawing.turn == "sideways":
            pdf.add_page(orientation="P")
            # the landscape layout centred on the portrait page, turned a quarter
            with pdf.rotation(90, x=105, y=148.5):
                y = 10 + 43.5
                for spec in specs:
                    y = draw(pdf, spec, 10 - 43.5, y) + 8
        else:
            pdf.add_page(orientation=drawing.orientation)
            y = 12.0
            for spec in specs:
                y = draw(pdf, spec, 12, y) + 8
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    if drawing.turn == "rotate90":
        import pypdfium2

        doc = pypdfium2.PdfDocument(str(path))
        for page in doc:
            page.set_rotation(90)
        buffer = io.BytesIO()
        doc.save(buffer)
        doc.close()
        data = buffer.getvalue()
        # pdfium writes a new file id on each save: one from the content instead (same
        # length, so the offsets hold), for the same bytes from the same seed
        digest = hashlib.md5(data.split(b"trailer")[0]).hexdigest().upper().encode()
        data = re.sub(
            rb"/ID\s*\[<[0-9A-Fa-f]{32}><[0-9A-Fa-f]{32}>\]",
            b"/ID[<" + digest + b"><" + digest + b">]",
            data,
        )
        path.write_bytes(data)


def generated_source(folder: Path, seed: int = 22) -> Source:
    """Write the generated PDFs into `folder` and return them with their truth."""
    source = Source(
        "generated", f"generated statistical tables (seed {seed}, {folder})", every_table=True
    )
    rng = random.Random(seed)
    made: list[tuple[str, Drawing]] = []
    made.append(("gen-enrollment", Drawing("P", "", [[enrollment(rng)]])))
    made.append(("gen-housing", Drawing("P", "", [[housing(rng)]])))
    wide = states(rng)
    for name, orientation, turn in (
        ("gen-states-wide", "L", ""),
        ("gen-states-sideways", "P", "sideways"),
        ("gen-states-rotate90", "L", "rotate90"),
    ):
        made.append((name, Drawing(orientation, turn, [[wide]])))
    made.append(("gen-industry", Drawing("P", "", [[p] for p in split_pages(industry(rng), 48)])))
    for name, drawing in made:
        path = folder / f"{name}.pdf"
        write(path, drawing)
        tables = [truth(spec, i + 1) for i, specs in enumerate(drawing.specs) for spec in specs]
        source.cases.append(Case(name, path, tables, "bench/table_corpus.py"))
    return source
