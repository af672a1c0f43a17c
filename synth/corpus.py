"""Seeds to PDFs and truth, cached: the `synth` source of bench/tables.py.

One seed is one PDF (one to three truth tables: a table running over pages is one truth
table a page). The PDF and its truth (`<seed>.json`) are written once into
`<dir>/v<VERSION>/` and read from there after; a new generator version writes anew.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from synth.table_truth import Case, Source

from . import seeds
from .spec import Doc, draw_doc
from .truth import SynthTable, dump, load, truth

VERSION = 4  # raise when a seed would print differently (4: group rows' shading in place;
# the wide seeds, 20000 and up, and the last-mile seeds, 30000 and up, were added at 4: no
# seed printed before prints otherwise)
TUNE = range(0, 2000)  # tune the reader on these
REPORT = range(5000, 5500)  # report on these; never tuned on
WIDE_TUNE = range(20000, 20400)  # wide layouts (synth/wide.py, issue 41): tune on these
WIDE_REPORT = range(25000, 25200)  # wide layouts: report on these; never tuned on
LAST_TUNE = range(30000, 30400)  # last-mile layouts (synth/lastmile.py, issue 60): tune
LAST_REPORT = range(35000, 35200)  # last-mile layouts: report on these; never tuned on
NAMED = {
    "tune": TUNE,
    "report": REPORT,
    "wide-tune": WIDE_TUNE,
    "wide-report": WIDE_REPORT,
    "last-tune": LAST_TUNE,
    "last-report": LAST_REPORT,
}
DEFAULT_DIR = Path("/tmp/trecho-synth")


def parse_seeds(text: str) -> range | list[int]:
    """`tune`, `report`, `wide-tune`, `wide-report`, `last-tune`, `last-report`, `A-B`
    (inclusive) or `A,B,C`; named
    ranges joined by `+` (`report+wide-report`)."""
    return seeds.parse_seeds(text, NAMED)


def folder(root: Path) -> Path:
    return root / f"v{VERSION}"


def tables_of(doc: Doc, pages: list[dict], heights: list[float]) -> list[SynthTable]:
    """The truth tables of a printed document from its pages' boxes."""
    out = []
    n = 0
    for p, (page, boxes, height) in enumerate(zip(doc.pages, pages, heights, strict=True)):
        for table in page.tables:
            prefix = f"t{n}-"
            mine = {k[len(prefix) :]: v for k, v in boxes.items() if k.startswith(prefix)}
            out.append(truth(table, p + 1, mine, height))
            n += 1
    return out


def generate(root: Path, seeds: Iterable[int], progress: bool = False) -> int:
    """Write the PDFs and truth of the seeds not yet in `root`; returns how many were new.
    Chromium documents share one browser session."""
    out = folder(root)
    out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in seeds if not (out / f"{s}.json").exists()]
    docs = [draw_doc(s) for s in todo]
    session = None
    try:
        for k, doc in enumerate(docs):
            # written aside, then renamed: another process reading the cache sees whole files
            pdf = out / f"{doc.seed}.pdf.{os.getpid()}"
            if doc.producer == "chromium":
                from . import chromium

                session = session or chromium.Session()
                pages, heights, fits = chromium.write(session, doc, pdf)
            else:
                from . import lab

                pages, heights, fits = lab.write(doc, pdf)
            tables = tables_of(doc, pages, heights)
            record = {
                "version": VERSION,
                "seed": doc.seed,
                "producer": doc.producer,
                "fits": fits,
                "tables": [dump(t) for t in tables],
            }
            os.replace(pdf, out / f"{doc.seed}.pdf")
            aside = out / f"{doc.seed}.json.{os.getpid()}"
            aside.write_text(json.dumps(record))
            os.replace(aside, out / f"{doc.seed}.json")
            if progress and (k + 1) % 50 == 0:
                print(f"  {k + 1}/{len(docs)} written", file=sys.stderr, flush=True)
    finally:
        if session:
            session.close()
    return len(todo)


def read(root: Path, seed: int) -> tuple[Path, list[SynthTable], dict]:
    """A generated seed's PDF, truth tables and record."""
    out = folder(root)
    record = json.loads((out / f"{seed}.json").read_text())
    return out / f"{seed}.pdf", [load(t) for t in record["tables"]], record


def cases(root: Path, seeds: Iterable[int]) -> Iterator[tuple[int, Path, list[SynthTable], dict]]:
    """Each seed's PDF and truth, generated first where missing."""
    seeds = list(seeds)
    generate(root, seeds)
    for seed in seeds:
        yield (seed, *read(root, seed))


def synth_source(root: Path, seeds: Iterable[int], label: str = "", name: str = "synth") -> Source:
    """The `synth` source (or `wide`: the wide seeds under their own name): the seeds' PDFs
    with their truth (written on first use)."""
    seeds = list(seeds)
    span = label or (f"{seeds[0]}-{seeds[-1]}" if seeds else "none")
    title = f"synthetic tables (seeds {span}, v{VERSION}, {folder(root)})"
    source = Source(name, title, every_table=True)
    for seed, pdf, tables, record in cases(root, seeds):
        if not record["fits"]:
            source.skipped.append((f"synth-{seed}", "did not fit its page"))
            continue
        source.cases.append(Case(f"synth-{seed}", pdf, list(tables), record["producer"]))
    return source
