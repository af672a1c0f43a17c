"""Tables on public ground truth: trecho's reading of the 27 ICDAR 2013 EU PDFs beside
Camelot's flavours, from one run.

For every PDF of `../shared/corpora/tables-icdar2013-eu/` (structure truth in
`eu-NNN-str.xml`), and for trecho and each Camelot flavour on the same files:

- **cells held** (the figure that matters for retrieval): the share of ground-truth data
  cells that sit in one indexed chunk together with their column header and their row
  label. Rows and columns are renumbered from 0 in each table; a cell counts when a
  non-empty cell spans its column above it and another spans its row to its left; its
  column header is the topmost such cell above (a title row spanning the whole table
  excepted), its row label the leftmost such cell to its left; it is held when one chunk
  contains all three texts, compared without case and whitespace. trecho's chunks are the
  default policy's (what `trecho materialize` indexes); a document a blocking check would
  refuse, or whose extraction fails, counts all its cells missed. A Camelot table is read
  as its first row for header, every other row linearized as `row label; header: value;
  ...` (one chunk a row).
- **tables found**: ground-truth tables matched by a found region on the same page
  (intersection over union of the boxes ≥ 0.5), and found regions matching none.
- **rows / columns**: of the matched tables, the share whose row (column) count is the
  truth's.

    python bench/tables.py [--quick] [--flavors lattice,stream,network,hybrid] [--files eu-001,...]
                           [--no-camelot] [--detail] [--misses N]

Camelot is not a dependency of trecho: `pip install -e .[bench]` (camelot-py, pinned) for
the baseline (without it, or with `--no-camelot`, only trecho is scored).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO, machine, versions_line

ICDAR = REPO.parent / "shared" / "corpora" / "tables-icdar2013-eu"
FLAVORS = ("lattice", "stream", "network", "hybrid")
Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in PDF points, origin bottom left


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
class TruthTable:
    """One ground-truth table: its page, box and cells."""

    page: int
    box: Box
    cells: list[Cell]

    @property
    def n_rows(self) -> int:
        return max(c.end_row for c in self.cells) + 1

    @property
    def n_cols(self) -> int:
        return max(c.end_col for c in self.cells) + 1

    def targets(self) -> list[tuple[str, str, str]]:
        """(cell, column header, row label) of every data cell, as the figure defines them."""
        filled = [c for c in self.cells if c.text.strip()]
        last = self.n_cols - 1
        out = []
        for cell in filled:
            above = [
                a
                for a in filled
                if a.end_row < cell.row
                and a.col <= cell.col <= a.end_col
                and not (a.row == 0 and a.col == 0 and a.end_col == last and last > 0)
            ]
            left = [b for b in filled if b.end_col < cell.col and b.row <= cell.row <= b.end_row]
            if above and left:
                head = min(above, key=lambda a: a.row)
                label = min(left, key=lambda b: b.col)
                out.append((cell.text, head.text, label.text))
        return out


def truth(name: str) -> list[TruthTable]:
    """The tables of `eu-NNN` from its structure and region files."""
    regions = ET.parse(ICDAR / f"{name}-reg.xml").getroot()
    boxes: dict[tuple[str, int], Box] = {}
    for table in regions.iter("table"):
        for i, region in enumerate(table.iter("region")):
            bb = region.find("bounding-box")
            if bb is not None:
                key = (table.get("id") or "", i)
                boxes[key] = tuple(float(bb.get(k) or 0) for k in ("x1", "y1", "x2", "y2"))  # type: ignore[assignment]
    out: list[TruthTable] = []
    for table in ET.parse(ICDAR / f"{name}-str.xml").getroot().iter("table"):
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


@dataclass
class Found:
    """One table region a reader found: page, box, and its row and column counts."""

    page: int
    box: Box
    rows: int
    cols: int


@dataclass
class Reading:
    """What one reader made of one PDF: searchable texts (chunks) and table regions."""

    texts: list[str] = field(default_factory=list)
    regions: list[Found] = field(default_factory=list)
    refused: str = ""
    unstructured: int = 0  # regions indexed as text lines (trecho)
    seconds: float = 0.0


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    area = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / area if area > 0 else 0.0


# --- trecho ------------------------------------------------------------------------------


def trecho_reader() -> Callable[[Path], Reading]:
    """trecho's default policy on a PDF, as `trecho materialize` would index it."""
    from rag_assets.core.chunking.policy import Policy, PolicyChunker
    from rag_assets.core.corpus import read_pdf
    from rag_assets.core.embedding.embedder import Embedder
    from rag_assets.core.eval.metrics import chunk_damage
    from rag_assets.core.extract import PdfError

    embedder = Embedder()
    counter = embedder.token_counter()
    chunker = PolicyChunker(Policy(), embedder)

    def read(pdf: Path) -> Reading:
        try:
            source, extraction = read_pdf(pdf, f"{pdf.stem}@v1")
        except PdfError as exc:
            return Reading(refused=str(exc))
        regions = []
        for page in extraction.pages:
            for table in page.tables:
                x0, top, x1, bottom = table.bbox
                box = (x0, page.height - bottom, x1, page.height - top)
                width = max((len(r) for r in table.rows), default=0)
                regions.append(Found(page.page, box, len(table.rows), width))
        unstructured = sum(1 for n in source.nodes if n.kind == "table_text")
        chunks = chunker(source, counter)
        damage = chunk_damage(chunks, source.rows, {source.info.partition_key: source.doc.text})
        refused = ""
        if damage.orphans or damage.truncated:
            refused = f"blocking check: {damage.orphans} orphans, {damage.truncated} truncated"
        return Reading([c.text for c in chunks], regions, refused, unstructured)

    return read


# --- Camelot -----------------------------------------------------------------------------


def camelot_reader(flavor: str) -> Callable[[Path], Reading]:
    """Camelot's `flavor` on every page, each row linearized under the table's first row."""
    import camelot

    def read(pdf: Path) -> Reading:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tables = camelot.read_pdf(str(pdf), pages="all", flavor=flavor)
        except Exception as exc:  # noqa: BLE001 - a baseline's failure is a result
            return Reading(refused=f"{type(exc).__name__}: {exc}")
        out = Reading()
        for table in tables:
            rows = [[str(v) for v in r] for r in table.df.values.tolist()]
            if not rows:
                continue
            width = max(len(r) for r in rows)
            out.regions.append(Found(int(table.page), tuple(table._bbox), len(rows), width))
            head = rows[0]
            for row in rows[1:]:
                pairs = [f"{h}: {v}" for h, v in zip(head[1:], row[1:], strict=False) if v.strip()]
                out.texts.append("; ".join([row[0], *pairs]))
        return out

    return read


# --- scoring -----------------------------------------------------------------------------


@dataclass
class Score:
    """One reader's figures over the files."""

    cells: int = 0
    held: int = 0
    tables: int = 0
    found: int = 0
    extra: int = 0
    rows_ok: int = 0
    cols_ok: int = 0
    refused: list[str] = field(default_factory=list)
    unstructured: int = 0
    seconds: float = 0.0
    missed: list[tuple[str, str, str, str]] = field(default_factory=list)

    def add(self, name: str, tables: Sequence[TruthTable], reading: Reading) -> tuple[int, int]:
        """Score one file; returns (cells held, cells) of it."""
        targets = [t for table in tables for t in table.targets()]
        self.cells += len(targets)
        self.tables += len(tables)
        self.seconds += reading.seconds
        self.unstructured += reading.unstructured
        used: set[int] = set()
        for table in tables:
            best, best_iou = -1, 0.5
            for i, region in enumerate(reading.regions):
                if region.page == table.page and i not in used:
                    overlap = iou(region.box, table.box)
                    if overlap >= best_iou:
                        best, best_iou = i, overlap
            if best >= 0:
                used.add(best)
                self.found += 1
                self.rows_ok += reading.regions[best].rows == table.n_rows
                self.cols_ok += reading.regions[best].cols == table.n_cols
        self.extra += len(reading.regions) - len(used)
        if reading.refused:
            self.refused.append(f"{name}: {reading.refused}")
            return 0, len(targets)
        texts = [norm(t) for t in reading.texts]
        held = sum(
            1
            for cell, head, label in targets
            if any(norm(cell) in t and norm(head) in t and norm(label) in t for t in texts)
        )
        self.held += held
        self.missed.extend(
            (name, cell, head, label)
            for cell, head, label in targets
            if not any(norm(cell) in t and norm(head) in t and norm(label) in t for t in texts)
        )
        return held, len(targets)

    def row(self, name: str) -> str:
        """A markdown table row of the figures."""
        share = self.held / self.cells if self.cells else 0.0
        found = max(1, self.found)
        return (
            f"| {name} | **{share:.2f}** ({self.held}/{self.cells}) | {len(self.refused)} | "
            f"{self.found}/{self.tables} (+{self.extra}) | {self.rows_ok / found:.2f} | "
            f"{self.cols_ok / found:.2f} | {self.seconds:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the first 4 files only")
    parser.add_argument("--files", default="", help="comma-separated eu-NNN names")
    parser.add_argument("--flavors", default=",".join(FLAVORS), help="Camelot flavours")
    parser.add_argument("--no-camelot", action="store_true", help="score trecho alone")
    parser.add_argument("--detail", action="store_true", help="print every file's figure")
    parser.add_argument("--misses", type=int, default=0, help="print N cells trecho missed")
    args = parser.parse_args()
    if not ICDAR.exists():
        sys.exit(f"{ICDAR} not found: the ICDAR 2013 EU files are part of the shared corpora")
    names = sorted(p.stem for p in ICDAR.glob("eu-*.pdf"))
    if args.files:
        names = [n for n in names if n in args.files.split(",")]
    if args.quick:
        names = names[:4]
    print("== tables: ICDAR 2013 EU, trecho vs Camelot")
    print(machine())
    print(versions_line())
    readers: dict[str, Callable[[Path], Reading]] = {"trecho": trecho_reader()}
    if not args.no_camelot:
        try:
            import camelot

            print(f"camelot-py {camelot.__version__}")
            for flavor in args.flavors.split(","):
                readers[f"camelot {flavor}"] = camelot_reader(flavor)
        except ImportError:
            print("camelot-py is not installed: trecho only (pip install camelot-py)")
    print(f"files: {len(names)} PDFs of {ICDAR}")
    scores = {name: Score() for name in readers}
    for name in names:
        tables = truth(name)
        line = [name]
        for reader_name, read in readers.items():
            start = time.perf_counter()
            reading = read(ICDAR / f"{name}.pdf")
            reading.seconds = time.perf_counter() - start
            held, cells = scores[reader_name].add(name, tables, reading)
            mark = " refused" if reading.refused else ""
            line.append(f"{reader_name.split()[-1]} {held}/{cells}{mark}")
        if args.detail:
            print("  " + "  ".join(line))
        sys.stdout.flush()
    print()
    print(
        "| reader | cells held with header + row label | docs refused | tables found "
        "(+ extra regions) | rows right | columns right | seconds |"
    )
    print("|---|---|---|---|---|---|---|")
    for reader_name, score in scores.items():
        print(score.row(reader_name))
    trecho = scores["trecho"]
    print(f"\ntrecho: {trecho.unstructured} tables indexed as text lines (table_text)")
    for why in trecho.refused:
        print(f"  refused {why}")
    for name, cell, head, label in trecho.missed[: args.misses]:
        print(f"  missed {name}: {cell!r} under {head!r}, row {label!r}")


if __name__ == "__main__":
    main()
