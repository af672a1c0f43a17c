"""The synthetic table corpus (bench/synth/): write it, check it, and score trecho on it
feature by feature.

    python bench/synth_tables.py generate [--seeds tune|report|A-B] [--dir DIR]
    python bench/synth_tables.py check [--seeds ...] [--dir DIR]
    python bench/synth_tables.py score [--seeds ...] [--dir DIR] [--limit N]
    python bench/synth_tables.py show --seeds 5159 [--dir DIR] [--out DIR]

`generate` writes the PDFs and truth not yet cached (one seed, one PDF); `check` reads
every truth cell back with pdfplumber inside its box; `score` runs trecho's default
policy on each PDF (bench/tables.py's reader and figures) and prints cells held,
heading-path and row-label-path accuracy and region recall, overall and by each feature
a table was drawn with (style, heading depth, columns, stub, producer, page, layout, ...);
`show` renders the seeds' pages as PNG (to look at a table trecho misses; its misses:
`bench/tables.py --source synth --synth-seeds N --files synth-N --misses 5`).
Seed ranges: `tune` 0-1999 (tune the reader on these), `report` 5000-5499 (report only).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections import defaultdict
from pathlib import Path

import _common  # noqa: F401  (the repository's root on sys.path: synth)

from synth.corpus import DEFAULT_DIR, VERSION, cases, generate, parse_seeds


def cmd_generate(args: argparse.Namespace) -> None:
    seeds = list(parse_seeds(args.seeds))
    start = time.perf_counter()
    new = generate(Path(args.dir), seeds, progress=True)
    took = time.perf_counter() - start
    tables = sum(len(t) for _, _, t, _ in cases(Path(args.dir), seeds))
    print(f"{len(seeds)} PDFs ({new} new, {took:.0f} s), {tables} tables, v{VERSION} in {args.dir}")


def cmd_check(args: argparse.Namespace) -> None:
    from synth.check import problems

    bad = 0
    seeds = list(parse_seeds(args.seeds))
    for seed, pdf, tables, record in cases(Path(args.dir), seeds):
        found = problems(pdf, tables)
        if found or not record["fits"]:
            bad += 1
            print(f"seed {seed} ({record['producer']}): fits={record['fits']} {found[:3]}")
    print(f"{len(seeds) - bad}/{len(seeds)} PDFs hold their truth")
    sys.exit(1 if bad else 0)


def cmd_show(args: argparse.Namespace) -> None:
    import pypdfium2

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for seed, pdf, tables, _ in cases(Path(args.dir), parse_seeds(args.seeds)):
        doc = pypdfium2.PdfDocument(pdf)
        for i in range(len(doc)):
            png = out / f"synth-{seed}-p{i + 1}.png"
            doc[i].render(scale=1.5).to_pil().save(png)
            print(png)
        doc.close()
        for t in tables:
            print(
                f"  {t.name} page {t.page}: " + ", ".join(f"{k}={v}" for k, v in t.features.items())
            )


def cmd_score(args: argparse.Namespace) -> None:
    from synth.table_metrics import Score
    from synth.table_readers import trecho_reader

    for noisy in ("pdfminer", "playa"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    seeds = list(parse_seeds(args.seeds))[: args.limit or None]
    read = trecho_reader()
    total = Score()
    by: dict[tuple[str, str], Score] = defaultdict(Score)
    each: list[tuple[float, int, str, dict[str, str]]] = []  # held share, cells, table
    start = time.perf_counter()
    for seed, pdf, tables, record in cases(Path(args.dir), seeds):
        if not record["fits"]:
            continue
        reading = read(pdf)
        total.add(f"synth-{seed}", tables, reading)
        for table in tables:  # one table at a time: its own figures, by its features
            for feature, value in table.features.items():
                by[(feature, value)].add(f"synth-{seed}", [table], reading)
            alone = Score()
            held, cells = alone.add(f"synth-{seed}", [table], reading)
            each.append((held / cells if cells else 1.0, cells, table.name, table.features))
    took = time.perf_counter() - start
    print(f"== synth seeds {args.seeds} ({len(seeds)} PDFs, v{VERSION}), trecho, {took:.0f} s")
    print(
        "| feature | value | tables | cells | cells held | heading path | row-label path "
        "| region recall |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(_line("all | all", total))
    for (feature, value), score in sorted(by.items()):
        print(_line(f"{feature} | {value}", score))
    if args.worst:
        print(f"\n{args.worst} tables missing the most cells (held, cells, table, features):")
        for share, cells, name, features in sorted(each, key=lambda e: -(1 - e[0]) * e[1])[
            : args.worst
        ]:
            keys = ("style", "depth", "stub", "layout", "page", "producer")
            print(f"  {share:.2f} {cells:4d} {name} " + " ".join(features.get(k, "") for k in keys))


def _line(name: str, s: object) -> str:
    from synth.table_metrics import Score

    assert isinstance(s, Score)
    f = s.figures()

    def fmt(v: object) -> str:
        return f"{v:.3f}" if isinstance(v, float) else "–"

    return (
        f"| {name} | {s.tables} | {s.cells} | **{fmt(f['cells_held'])}** | "
        f"{fmt(f['heading_path'])} | {fmt(f['row_label_path'])} | {fmt(f['region_recall'])} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["generate", "check", "score", "show"])
    parser.add_argument("--seeds", default="tune", help="tune, report, A-B or a,b,c")
    parser.add_argument("--dir", default=str(DEFAULT_DIR), help="where PDFs and truth are cached")
    parser.add_argument("--limit", type=int, default=0, help="score: the first N seeds only")
    parser.add_argument("--worst", type=int, default=0, help="score: list the N worst tables")
    parser.add_argument("--out", default="/tmp/trecho-synth-png", help="show: where PNGs go")
    args = parser.parse_args()
    commands = {"generate": cmd_generate, "check": cmd_check, "score": cmd_score, "show": cmd_show}
    commands[args.command](args)


if __name__ == "__main__":
    main()
