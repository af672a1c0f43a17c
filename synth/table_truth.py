"""Ground truth for bench/tables.py: one table model, what counts as a target, and the rule
that keeps the held-out judging set out of every source.

A source is a list of `Case`s (one PDF each, with its `TruthTable`s) and a list of what was
skipped and why. The adapters live beside this module: `table_public.py` (Camelot's and
tabula-java's test files), `table_corpus.py` (the generated tables); the ICDAR 2013 EU
reader is here, unchanged from the first version of the bench.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in PDF points, origin bottom left

# The judging set: never read, scored or shown, whatever repository carries it. Names only
# (`us-001.pdf`, `competition-dataset-us/`, the NICS firearm background-check PDFs).
HELD_OUT = re.compile(
    r"(^|[^a-z])us-0\d\d|competition-dataset-us|background-check|(^|[^a-z])nics([^a-z]|$)", re.I
)


def held_out(path: str | Path) -> bool:
    """Whether a path names a file of the held-out judging set (never to be used)."""
    return bool(HELD_OUT.search(str(path)))


def norm(text: str) -> str:
    """Text compared without case and whitespace."""
    return re.sub(r"\s+", "", text).casefold()


@dataclass
class Cell:
    """One ground-truth cell, rows and columns renumbered from 0 in its table."""

    row: int
    col: int
    end_row: int
    end_col: int
    text: str


@dataclass
class Target:
    """A data cell to look for, with the header and row label one chunk must hold with it;
    `heads` is every heading over it (top down) and `stubs` every stub label left of it
    (left to right): its heading path and its row-label path."""

    cell: str
    head: str
    label: str
    heads: tuple[str, ...] = ()
    stubs: tuple[str, ...] = ()

    @property
    def path(self) -> tuple[str, ...]:
        """Every heading and stub label of the cell, once each."""
        return tuple(dict.fromkeys([*self.heads, *self.stubs]))


@dataclass
class TruthTable:
    """One ground-truth table: its page, box (None: matched by content) and cells.

    `header_rows` None is the ICDAR rule (any cell above can be the header, the topmost
    wins); a number says which leading rows are the header (0: no header, cells are
    looked for with their row label alone); `stub_cols` the columns that hold row labels.
    """

    page: int
    box: Box | None
    cells: list[Cell]
    header_rows: int | None = None
    stub_cols: int = 1
    name: str = ""
    printed: tuple[int, int] | None = None  # rows, columns as printed, where they differ
    # the part of its page the truth covers, where its test reads one area of the page only
    # (region precision judges no region centred outside it); None: the whole page
    area: Box | None = None
    _targets: list[Target] | None = field(default=None, repr=False, compare=False)

    @property
    def n_rows(self) -> int:
        if self.printed:
            return self.printed[0]
        return max(c.end_row for c in self.cells) + 1

    @property
    def n_cols(self) -> int:
        if self.printed:
            return self.printed[1]
        return max(c.end_col for c in self.cells) + 1

    def data_texts(self) -> set[str]:
        """The normalized texts of the data cells (matching a found region by content)."""
        return {norm(t.cell) for t in self.targets()}

    def targets(self) -> list[Target]:
        """Every data cell with its column header and row label, as the figure defines them
        (worked out once per table)."""
        if self._targets is None:
            self._targets = self._find_targets()
        return self._targets

    def _find_targets(self) -> list[Target]:
        filled = [c for c in self.cells if c.text.strip()]
        last = max(c.end_col for c in self.cells)
        out = []
        if self.header_rows is None:  # the ICDAR rule, as in the first version of the bench
            n_head, n_stub = self.blocks()
            for cell in filled:
                above = [
                    a
                    for a in filled
                    if a.end_row < cell.row
                    and a.col <= cell.col <= a.end_col
                    and not (a.row == 0 and a.col == 0 and a.end_col == last and last > 0)
                ]
                left = [
                    b for b in filled if b.end_col < cell.col and b.row <= cell.row <= b.end_row
                ]
                if above and left:
                    head = min(above, key=lambda a: a.row)
                    label = min(left, key=lambda b: b.col)
                    heads = [a.text for a in sorted(above, key=lambda a: a.row) if a.row < n_head]
                    stubs = [b.text for b in sorted(left, key=lambda b: b.col) if b.col < n_stub]
                    body = cell.row >= n_head and cell.col >= n_stub
                    out.append(
                        Target(
                            cell.text,
                            head.text,
                            label.text,
                            tuple(dict.fromkeys(heads)) if body else (),
                            tuple(dict.fromkeys(stubs)) if body else (),
                        )
                    )
            return out
        for cell in filled:
            if cell.row < self.header_rows or cell.col < self.stub_cols:
                continue
            heads = sorted(
                (
                    a
                    for a in filled
                    if a.row < self.header_rows
                    and a.col <= cell.col <= a.end_col
                    and not (a.col == 0 and a.end_col == last and last > 0)
                ),
                key=lambda a: a.row,
            )
            left = sorted(
                (b for b in filled if b.end_col < cell.col and b.row <= cell.row <= b.end_row),
                key=lambda b: b.col,
            )
            if not left:
                continue
            stub = [b.text for b in left if b.col < self.stub_cols]
            out.append(
                Target(
                    cell.text,
                    heads[0].text if heads else "",
                    left[0].text,
                    tuple(dict.fromkeys(a.text for a in heads)),
                    tuple(dict.fromkeys(stub)),
                )
            )
        return out

    def blocks(self) -> tuple[int, int]:
        """Header rows and stub columns of a table whose truth does not say (ICDAR): the
        rows above the first row with a figure right of its first column, and the columns
        left of where most body rows print their first figure (at least one)."""
        filled = [c for c in self.cells if c.text.strip()]
        figures = [c for c in filled if c.col >= 1 and is_value(c.text)]
        if not figures:
            return 0, 1
        n_head = min(c.row for c in figures)
        first: dict[int, int] = {}
        for c in filled:
            if c.row >= n_head and is_value(c.text):
                first[c.row] = min(first.get(c.row, c.col), c.col)
        counts = Counter(first.values())
        n_stub = max(1, max(counts, key=lambda col: (counts[col], -col)))
        return n_head, n_stub


@dataclass
class Case:
    """One PDF of a source and its tables; `note` says where its truth comes from."""

    name: str
    pdf: Path
    tables: list[TruthTable]
    note: str = ""


@dataclass
class Source:
    """A set of cases scored together, and what was left out of it and why."""

    key: str
    title: str
    cases: list[Case] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, why)
    excluded: int = 0  # files of the held-out set seen in its folder and left unread
    # the truth lists every table of its PDFs: region precision counts a found region on
    # any page (else only on the pages holding a truth table: the tests' tables are a part)
    every_table: bool = False


# --- grid truths (rows of strings, as Camelot's and tabula's tests write them) ------------

_NUMBER = re.compile(r"^[(\-+−–]?[$€£]?\d[\d.,\s]*%?\)?[*a-z¹²³]{0,2}$", re.I)
_YEAR = re.compile(r"^(19|20)\d\d([/\-–]\d{2,4})?[*a-z]?$", re.I)
_TAG = re.compile(r"</?s>")
_LEADER = re.compile(r"(\s*\.){2,}\s*$")  # leader dots after a label: `Total . . . .`
_RTL = re.compile(r"[\u0590-\u06ff\ufb1d-\ufdff\ufe70-\ufeff]")


def is_value(text: str) -> bool:
    """A number as tables print them (signs, currency, %, a footnote mark); a year is not."""
    t = text.strip()
    return bool(_NUMBER.match(t)) and not _YEAR.match(t)


def _title(row: list[str]) -> bool:
    """A row with one filled cell that is a title: in the first column, three words or
    more, or in parentheses (one short word over some columns is a group heading)."""
    filled = [(j, c) for j, c in enumerate(row) if c]
    if len(filled) != 1:
        return False
    j, text = filled[0]
    return j == 0 or len(text.split()) >= 3 or text.startswith("(")


def _stub_on_the_right(grid: list[list[str]]) -> bool:
    """Whether the row labels are the last column (a right-to-left table): most rows end
    in Hebrew or Arabic text and start with a value."""
    rows = [r for r in grid if r[0] and r[-1]]
    mirrored = sum(1 for r in rows if is_value(r[0]) and _RTL.search(r[-1]))
    return mirrored > len(rows) / 2


def grid_table(rows: list[list[str]], page: int, name: str) -> TruthTable | None:
    """A TruthTable from a grid of strings, one cell each, with its header found by rule.

    Empty rows and columns go; leading title rows go (`_title`); a table whose labels are
    its last column is mirrored (right to left: the stub leads); the header is the rows
    before the first row with a value right of its first column (0 when that is the first
    row, or when no row has one: cells are then looked for with their row label alone).
    Camelot's superscript marks (`<s>`) and leader dots after a label are dropped.
    """
    grid = [[_LEADER.sub("", _TAG.sub("", c or "")).strip() for c in r] for r in rows]
    grid = [r for r in grid if any(r)]
    width = max((len(r) for r in grid), default=0)
    grid = [r + [""] * (width - len(r)) for r in grid]
    keep = [j for j in range(width) if any(r[j] for r in grid)]
    grid = [[r[j] for j in keep] for r in grid]
    while grid and len(grid[0]) >= 3 and _title(grid[0]):
        grid = grid[1:]
    if len(grid) >= 3 and _stub_on_the_right(grid):
        grid = [r[::-1] for r in grid]
    if len(grid) < 2 or len(grid[0]) < 2:
        return None
    header = next((i for i, r in enumerate(grid) if any(is_value(c) for c in r[1:])), 0)
    cells = [Cell(i, j, i, j, text) for i, r in enumerate(grid) for j, text in enumerate(r) if text]
    return TruthTable(page, None, cells, header_rows=header, name=name)


# --- ICDAR 2013 EU -----------------------------------------------------------------------


def icdar_truth(folder: Path, name: str) -> list[TruthTable]:
    """The tables of `eu-NNN` from its structure and region files."""
    regions = ET.parse(folder / f"{name}-reg.xml").getroot()
    boxes: dict[tuple[str, int], Box] = {}
    for table in regions.iter("table"):
        for i, region in enumerate(table.iter("region")):
            bb = region.find("bounding-box")
            if bb is not None:
                key = (table.get("id") or "", i)
                boxes[key] = tuple(float(bb.get(k) or 0) for k in ("x1", "y1", "x2", "y2"))  # type: ignore[assignment]
    out: list[TruthTable] = []
    for table in ET.parse(folder / f"{name}-str.xml").getroot().iter("table"):
        for i, region in enumerate(table.iter("region")):
            raw = []
            for c in region.iter("cell"):
                sr, sc = int(c.get("start-row") or 0), int(c.get("start-col") or 0)
                er, ec = int(c.get("end-row") or sr), int(c.get("end-col") or sc)
                raw.append((sr, sc, er, ec, (c.findtext("content") or "").strip()))
            if not raw:
                continue
            r0, c0 = min(r[0] for r in raw), min(r[1] for r in raw)
            cells = [Cell(sr - r0, sc - c0, er - r0, ec - c0, t) for sr, sc, er, ec, t in raw]
            box = boxes.get((table.get("id") or "", i), (0.0, 0.0, 0.0, 0.0))
            out.append(TruthTable(int(region.get("page") or 0), box, cells))
    return out


def icdar_source(folder: Path) -> Source:
    """The 27 ICDAR 2013 EU PDFs of the shared corpora, with their structure truth."""
    source = Source("eu", f"ICDAR 2013 EU ({folder})", every_table=True)
    for pdf in sorted(folder.glob("eu-*.pdf")):
        if held_out(pdf):
            source.excluded += 1
            continue
        source.cases.append(Case(pdf.stem, pdf, icdar_truth(folder, pdf.stem)))
    return source
