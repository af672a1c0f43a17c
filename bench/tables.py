"""Tables on public ground truth, source by source: trecho's reading beside Camelot's
flavours, from one run.

Sources (`--source`, default every one available):

- `eu`: the 27 ICDAR 2013 EU PDFs of `../shared/corpora/tables-icdar2013-eu/` (structure
  truth in `eu-NNN-str.xml`, boxes in `eu-NNN-reg.xml`); scored exactly as before.
- `camelot`: Camelot's test PDFs with the tables its tests expect (`--camelot-tests DIR`
  or `TRECHO_CAMELOT_TESTS`: its `tests/` folder, extracted from a fetched copy).
- `tabula`: tabula-java's test PDFs with their expected CSV/JSON (`--tabula-tests DIR` or
  `TRECHO_TABULA_TESTS`: its `src/test/` folder).
- `generated`: statistical tables written by `table_corpus.py` (seeded) into
  `--generated-dir` (default /tmp/trecho-table-corpus).

The ICDAR 2013 US files and the NICS background-check PDFs are the judging set: every
source skips them by name, unread (`table_truth.held_out`).

Figures, per source and reader:

- **cells held** (the figure that matters for retrieval): the share of ground-truth data
  cells that sit in one indexed chunk together with their column header and their row
  label (`TruthTable.targets`: the topmost heading over the cell, the leftmost label left
  of it), compared without case and whitespace. trecho's chunks are the default policy's
  (what `trecho materialize` indexes); a document a blocking check would refuse, or whose
  extraction fails, counts all its cells missed. A Camelot table is read as its first row
  for header, every other row linearized as `row label; header: value; ...` (one chunk a
  row). **path held**: the same with every heading and stub label of the cell (where the
  truth tells them apart: not on eu).
- **tables found**: truth tables matched by a found region on the same page (eu:
  intersection over union of the boxes ≥ 0.5; elsewhere: a region holding at least half
  of the table's data cell texts), and found regions matching none.
- **rows / columns**: of the matched tables, the share whose row (column) count is the
  truth's.
- trecho's missed cells by class (`--misses N` prints N of each): the cell's text in no
  chunk, its header or its row label missing from every chunk holding it, both, or the
  document refused.

    python bench/tables.py [--source eu,camelot,tabula,generated] [--quick] [--files a,b]
        [--camelot-tests DIR] [--tabula-tests DIR] [--generated-dir DIR] [--seed N]
        [--flavors lattice,stream,network,hybrid] [--no-camelot] [--detail] [--misses N]

Camelot is not a dependency of trecho: `pip install -e .[bench]` (camelot-py, pinned) for
the baseline (without it, or with `--no-camelot`, only trecho is scored).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO, machine, versions_line
from table_truth import Box, Case, Source, Target, TruthTable, icdar_source, norm

ICDAR = REPO.parent / "shared" / "corpora" / "tables-icdar2013-eu"
FLAVORS = ("lattice", "stream", "network", "hybrid")
SOURCES = ("eu", "camelot", "tabula", "generated")
CLASSES = (
    "value not found",
    "header missing from chunk",
    "row label missing from chunk",
    "header and row label missing",
    "document refused/failed",
)


@dataclass
class Found:
    """One table region a reader found: page, box, row and column counts, cell texts."""

    page: int
    box: Box
    rows: int
    cols: int
    texts: set[str] = field(default_factory=set)


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


def region(page: int, box: Box, rows: list[list[str]]) -> Found:
    """A found region from its rows of cell texts."""
    width = max((len(r) for r in rows), default=0)
    return Found(page, box, len(rows), width, {norm(c) for r in rows for c in r if c.strip()})


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
            doc_id = re.sub(r"[^a-z0-9._-]+", "-", pdf.stem.lower())  # eu-001 stays eu-001
            source, extraction = read_pdf(pdf, f"{doc_id}@v1")
        except PdfError as exc:
            return Reading(refused=str(exc))
        except Exception as exc:  # noqa: BLE001 - a crash on a public PDF is a result
            return Reading(refused=f"failed: {type(exc).__name__}: {exc}")
        regions = []
        for page in extraction.pages:
            for table in page.tables:
                x0, top, x1, bottom = table.bbox
                box = (x0, page.height - bottom, x1, page.height - top)
                regions.append(region(page.page, box, table.rows))
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
            out.regions.append(region(int(table.page), tuple(table._bbox), rows))
            head = rows[0]
            for row in rows[1:]:
                pairs = [f"{h}: {v}" for h, v in zip(head[1:], row[1:], strict=False) if v.strip()]
                out.texts.append("; ".join([row[0], *pairs]))
        return out

    return read


# --- scoring -----------------------------------------------------------------------------


def match(table: TruthTable, regions: Sequence[Found], used: set[int]) -> int:
    """The found region matching a truth table (-1: none): by box where the truth has
    one (IoU ≥ 0.5), else the region on its page holding most of its data cells (≥ half)."""
    best, best_score = -1, 0.5
    wanted = table.data_texts() if table.box is None else set()
    for i, found in enumerate(regions):
        if found.page != table.page or i in used:
            continue
        if table.box is not None:
            score = iou(found.box, table.box)
        else:
            score = len(wanted & found.texts) / len(wanted) if wanted else 0.0
        if score >= best_score:
            best, best_score = i, score
    return best


def classify(target: Target, texts: Sequence[str]) -> str:
    """Why a target was missed, from the chunks holding its value."""
    cell, head, label = norm(target.cell), norm(target.head), norm(target.label)
    holding = [t for t in texts if cell in t]
    if not holding:
        return CLASSES[0]
    if any(label in t for t in holding):
        return CLASSES[1]
    if any(head in t for t in holding):
        return CLASSES[2]
    return CLASSES[3]


@dataclass
class Score:
    """One reader's figures over a source's files."""

    files: int = 0
    cells: int = 0
    held: int = 0
    paths: int = 0
    path_held: int = 0
    tables: int = 0
    found: int = 0
    extra: int = 0
    rows_ok: int = 0
    cols_ok: int = 0
    refused: list[str] = field(default_factory=list)
    unstructured: int = 0
    seconds: float = 0.0
    missed: dict[str, list[tuple[str, Target]]] = field(default_factory=dict)

    def add(self, name: str, tables: Sequence[TruthTable], reading: Reading) -> tuple[int, int]:
        """Score one file; returns (cells held, cells) of it."""
        targets = [t for table in tables for t in table.targets()]
        self.files += 1
        self.cells += len(targets)
        self.paths += sum(1 for t in targets if t.path)
        self.tables += len(tables)
        self.seconds += reading.seconds
        self.unstructured += reading.unstructured
        used: set[int] = set()
        for table in tables:
            best = match(table, reading.regions, used)
            if best >= 0:
                used.add(best)
                self.found += 1
                self.rows_ok += reading.regions[best].rows == table.n_rows
                self.cols_ok += reading.regions[best].cols == table.n_cols
        self.extra += len(reading.regions) - len(used)
        if reading.refused:
            self.refused.append(f"{name}: {reading.refused}")
            self.missed.setdefault(CLASSES[4], []).extend((name, t) for t in targets)
            return 0, len(targets)
        texts = [norm(t) for t in reading.texts]
        held = 0
        for target in targets:
            need = [norm(target.cell), norm(target.head), norm(target.label)]
            if any(all(n in t for n in need) for t in texts):
                held += 1
            else:
                self.missed.setdefault(classify(target, texts), []).append((name, target))
            if target.path:
                need = [norm(target.cell), *(norm(p) for p in target.path)]
                self.path_held += any(all(n in t for n in need) for t in texts)
        self.held += held
        return held, len(targets)

    @property
    def share(self) -> float:
        return self.held / self.cells if self.cells else 0.0

    def row(self, name: str) -> str:
        """A markdown table row of the figures."""
        found = max(1, self.found)
        path = f"{self.path_held / self.paths:.2f}" if self.paths else "–"
        return (
            f"| {name} | **{self.share:.2f}** ({self.held}/{self.cells}) | {path} | "
            f"{len(self.refused)} | {self.found}/{self.tables} (+{self.extra}) | "
            f"{self.rows_ok / found:.2f} | {self.cols_ok / found:.2f} | {self.seconds:.0f} |"
        )


HEADER = (
    "| reader | cells held with header + row label | path held | docs refused | tables found "
    "(+ extra regions) | rows right | columns right | seconds |\n"
    "|---|---|---|---|---|---|---|---|"
)


def load(key: str, args: argparse.Namespace) -> Source | str:
    """A source by key, or why it is not available."""
    if key == "eu":
        if not ICDAR.exists():
            return f"{ICDAR} not found (the ICDAR 2013 EU files are part of the shared corpora)"
        return icdar_source(ICDAR)
    if key in ("camelot", "tabula"):
        from table_public import camelot_source, tabula_source

        folder = getattr(args, f"{key}_tests")
        if not folder:
            return f"no --{key}-tests folder (bench/README.md: how to get it)"
        if not Path(folder).is_dir():
            return f"{folder} is not a folder"
        return (camelot_source if key == "camelot" else tabula_source)(Path(folder))
    if key == "generated":
        from table_corpus import generated_source

        return generated_source(Path(args.generated_dir), args.seed)
    return f"unknown source {key!r} (one of {', '.join(SOURCES)})"


def report(source: Source, scores: dict[str, Score], args: argparse.Namespace) -> None:
    """Print one source's table, what it left out, and trecho's misses by class."""
    print(HEADER)
    camelot = {k: s for k, s in scores.items() if k != "trecho"}
    best = max(camelot, key=lambda k: camelot[k].share) if camelot else ""
    for reader_name, score in scores.items():
        print(score.row(f"**{reader_name}**" if reader_name in ("trecho", best) else reader_name))
    if best:
        print(f"Camelot's best flavour here: {best.split()[-1]} ({camelot[best].share:.2f})")
    reasons = Counter(why for _, why in source.skipped)
    for why, count in reasons.most_common():
        print(f"skipped {count}: {why}")
    if source.excluded:
        print(f"held-out files left unread: {source.excluded}")
    trecho = scores["trecho"]
    print(f"trecho: {trecho.unstructured} tables indexed as text lines (table_text)")
    for why in trecho.refused:
        print(f"  refused {why}")
    missed = sum(len(v) for v in trecho.missed.values())
    print(f"trecho's {missed} missed cells by class:")
    for cls in CLASSES:
        cases = trecho.missed.get(cls, [])
        if not cases:
            continue
        by_file = Counter(name for name, _ in cases).most_common(6)
        files = ", ".join(f"{n} {c}" for n, c in by_file)
        print(f"  {cls}: {len(cases)} ({files})")
        for name, t in cases[: args.misses]:
            print(f"    {name}: {t.cell!r} under {t.head!r}, row {t.label!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="", help=f"comma-separated, of {','.join(SOURCES)}")
    parser.add_argument("--quick", action="store_true", help="the first 4 files of each source")
    parser.add_argument("--files", default="", help="comma-separated file names (no .pdf)")
    parser.add_argument("--camelot-tests", default=os.environ.get("TRECHO_CAMELOT_TESTS", ""))
    parser.add_argument("--tabula-tests", default=os.environ.get("TRECHO_TABULA_TESTS", ""))
    parser.add_argument("--generated-dir", default="/tmp/trecho-table-corpus")
    parser.add_argument("--seed", type=int, default=22, help="the generated tables' seed")
    parser.add_argument("--flavors", default=",".join(FLAVORS), help="Camelot flavours")
    parser.add_argument("--no-camelot", action="store_true", help="score trecho alone")
    parser.add_argument("--detail", action="store_true", help="print every file's figure")
    parser.add_argument("--misses", type=int, default=0, help="print N missed cells per class")
    args = parser.parse_args()
    for noisy in ("pdfminer", "playa"):  # malformed fonts in public PDFs: warnings only
        logging.getLogger(noisy).setLevel(logging.ERROR)
    keys = [k for k in args.source.split(",") if k] or list(SOURCES)
    print("== tables: public ground truth, trecho vs Camelot, source by source")
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
            print("camelot-py is not installed: trecho only (pip install -e .[bench])")
    summary: list[tuple[Source, dict[str, Score]]] = []
    for key in keys:
        source = load(key, args)
        if isinstance(source, str):
            print(f"\n== source {key}: not scored: {source}")
            if args.source:
                sys.exit(1)
            continue
        cases: list[Case] = source.cases
        if args.files:
            cases = [c for c in cases if c.name in args.files.split(",")]
        if args.quick:
            cases = cases[:4]
        n_tables = sum(len(c.tables) for c in cases)
        print(f"\n== source {key}: {source.title}: {len(cases)} PDFs, {n_tables} tables")
        scores = {name: Score() for name in readers}
        for case in cases:
            line = [case.name]
            for reader_name, read in readers.items():
                start = time.perf_counter()
                reading = read(case.pdf)
                reading.seconds = time.perf_counter() - start
                held, cells = scores[reader_name].add(case.name, case.tables, reading)
                mark = " refused" if reading.refused else ""
                line.append(f"{reader_name.split()[-1]} {held}/{cells}{mark}")
            if args.detail:
                print("  " + "  ".join(line))
            sys.stdout.flush()
        report(source, scores, args)
        summary.append((source, scores))
    print("\n== summary: cells held with header + row label, one run")
    print(
        "| source | PDFs scored (skipped) | tables | cells | **trecho** | Camelot's best flavour "
        "| trecho tables found | trecho rows / columns right |\n|---|---|---|---|---|---|---|---|"
    )
    for source, scores in summary:
        t = scores["trecho"]
        camelot = {k.split()[-1]: s for k, s in scores.items() if k != "trecho"}
        best = max(camelot, key=lambda k: camelot[k].share) if camelot else ""
        beside = f"{camelot[best].share:.2f} ({best})" if best else "not run"
        found = max(1, t.found)
        print(
            f"| {source.key} | {t.files} ({len(source.skipped)}) | {t.tables} | "
            f"{t.cells} | **{t.share:.2f}** | {beside} | {t.found}/{t.tables} | "
            f"{t.rows_ok / found:.2f} / {t.cols_ok / found:.2f} |"
        )


if __name__ == "__main__":
    main()
