"""Headings, source by source: trecho's section tree and chunk paths measured against a
known section tree (synthetic reports), a PDF's own outline (public PDFs) or, where no
truth exists, a truth-free judge of chunk paths (real PDFs, laws). Through trecho's core
API (`read_pdf` and the default policy's chunker), no Dagster.

Sources (`--source`, default all):

- `synth`: report-like PDFs with a known tree, drawn by `synth/headings.py` (seeds
  `--seeds`: `tune` = 0-399, `report` = 5000-5299, `A-B`; cached in `--dir`,
  default /tmp/trecho-headings). Tune on `tune`; `report` seeds are never tuned on: they
  are the figures a change is judged by.
- `real`: the PDFs of ../shared/corpora/real-pdfs (no truth tree: the truth-free judge).
- `laws`: ../shared/corpora/leis/*.pdf (the truth-free judge).
- `public`: PDFs with their own outline as truth (`heading_public.py`, when present).

Figures (per source; `--save` writes them per file too):

- heading precision: detected heading nodes (part, chapter, section) matching a true
  heading / detected; false headings counted by distractor kind (`toc`, `running`, ...)
  and `other`. Matching: NFKC, case folded, whitespace collapsed, trailing punctuation
  and dot leaders cut; equal, or one equals the other's title without its number, or
  difflib ratio >= 0.9; one to one, on the same page.
- heading recall: true headings matched / true headings; recall by heading style.
- parent accuracy: of matched true headings, the share whose nearest detected heading
  ancestor is the match of the true parent (none for a top-level heading).
- bad paths: chunks whose path has a segment that is no true heading, no true table
  caption and no table label of the document's language (`Table 3`, `Tabela 2`); target
  at most 2%.
- suspicious paths (truth-free judge): a segment that is the literal `text`, starts
  lower-case, ends with `,` `;` a hyphen or a function word, holds dot leaders and a page
  number, a run of 20+ letters without a space (25+ in German, where compounds run
  long; 40+ in Chinese, Japanese or Korean script), or `Tabela N` in a document not in
  Portuguese.
- captions: tables with a true caption whose table node is named by it; `Tabela N`
  names in documents not in Portuguese (target 0).
- outline found: outline entries whose title matches a detected heading, with the
  outline on and (where `read_pdf` takes `structure=`) with `use_outline=False`.

    python bench/headings.py [--source synth,real,public,laws] [--seeds tune|report|A-B]
        [--quick] [--dir DIR] [--save run.json] [--compare base.json [new.json]]

`--compare A B` prints two saved runs side by side (`--compare A` against this run): KEEP
when no source's figure is worse by more than one document's worth and at least one is
better, else DROP.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import REPO, SHARED_PDFS, machine

from synth import headings as synth
from synth.heading_score import (
    FIGURES,
    Doc,
    Item,
    Trecho,
    guess_language,
    heading_nodes,
    outline_items,
    score_headings,
    score_outline,
    score_paths,
    score_tables,
    truth_items,
)

LAWS = REPO.parent / "shared" / "corpora" / "leis"
SOURCES = ("synth", "real", "public", "laws")
# ---- sources ----------------------------------------------------------------------------


@dataclass
class Case:
    """One file of a source: its PDF, language (None: guessed from its text), true
    headings, tables and distractors where known."""

    name: str
    pdf: Path
    lang: str | None = None
    headings: list[Item] | None = None
    tables: list[dict[str, Any]] | None = None
    distractors: list[dict[str, Any]] = field(default_factory=list)
    has_outline: bool | None = None
    slack: int | None = 0


def synth_cases(args: argparse.Namespace) -> list[Case]:
    """The synthetic reports of the seed range (written first where missing)."""
    seeds = list(synth.parse_seeds(args.seeds))
    if args.quick:
        seeds = seeds[::10]
    start = time.perf_counter()
    new = synth.generate(args.dir, seeds, progress=True)
    if new:
        spent = time.perf_counter() - start
        print(f"synth: wrote {new} seeds in {spent:.1f} s", file=sys.stderr)
    out = []
    for seed in seeds:
        pdf, record = synth.read(args.dir, seed)
        out.append(
            Case(
                f"synth-{seed}",
                pdf,
                record["language"],
                truth_items(record),
                record["tables"],
                record["distractors"],
                record["has_outline"],
            )
        )
    return out


def folder_cases(folder: Path, quick: bool) -> list[Case]:
    """Every PDF of a folder, no truth."""
    files = sorted(folder.glob("*.pdf"))
    if quick:
        files = files[:6]
    return [Case(f.stem, f) for f in files]


def public_cases(quick: bool) -> list[Case] | str:
    """`heading_public.cases()`: each PDF with its outline as truth."""
    try:
        import heading_public
    except ImportError as e:
        return f"heading_public.py not importable ({e})"
    if not hasattr(heading_public, "cases"):
        return "heading_public.py has no cases() yet"
    try:
        found = heading_public.cases()
    except Exception as e:  # the other helper's module, mid-writing
        return f"heading_public.cases() failed: {type(e).__name__}: {e}"
    out = []
    for name, pdf, entries in found[:5] if quick else found:
        out.append(Case(name, Path(pdf), None, outline_items(entries), None, [], True, 1))
    return out


def load_cases(key: str, args: argparse.Namespace) -> list[Case] | str:
    """A source's cases, or why it is not available."""
    if key == "synth":
        return synth_cases(args)
    if key == "real":
        if not SHARED_PDFS.exists():
            return f"{SHARED_PDFS} not found"
        return folder_cases(SHARED_PDFS, args.quick)
    if key == "laws":
        return folder_cases(LAWS, args.quick) if LAWS.exists() else f"{LAWS} not found"
    if key == "public":
        return public_cases(args.quick)
    return f"unknown source {key!r}"


def measure(case: Case, trecho: Trecho) -> Doc:
    """All figures of one file."""
    doc = Doc(case.name)
    start = time.perf_counter()
    source, chunks, text = trecho.read(case.pdf)
    lang = case.lang or guess_language(text)
    doc.counts["docs"] += 1
    if case.headings is not None:
        score_headings(doc, source, case.headings, case.distractors, case.slack)
    else:
        doc.counts["headings_seen"] += len(heading_nodes(source))
    captions = [t["caption"] for t in case.tables or [] if t["caption"]]
    score_paths(doc, chunks, lang, case.headings, captions)
    score_tables(doc, source, lang, case.tables)
    score_outline(doc, case.pdf, source)
    if trecho.can_switch and doc.counts["outline"]:
        rules, _, _ = trecho.read(case.pdf, outline=False)
        score_outline(doc, case.pdf, rules, "_rules")
        if case.headings is not None:
            score_headings(doc, rules, case.headings, case.distractors, case.slack, "_rules")
    doc.seconds = time.perf_counter() - start
    return doc


# ---- reporting --------------------------------------------------------------------------


def figures(counts: Counter | dict[str, int]) -> dict[str, float | None]:
    """The figures of summed counts (None where the denominator is empty)."""
    out: dict[str, float | None] = {}
    for name, (num, den, _) in FIGURES.items():
        if den is None:
            out[name] = float(counts.get(num, 0))
        else:
            d = counts.get(den, 0)
            out[name] = counts.get(num, 0) / d if d else None
    return out


def summarize(key: str, title: str, docs: list[Doc], failed: list[tuple[str, str]]) -> dict:
    """A source's record: summed counts, figures, false headings by kind, recall by
    style, and each file's own figures."""
    counts: Counter = Counter()
    kinds: Counter = Counter()
    st_true: Counter = Counter()
    st_found: Counter = Counter()
    for d in docs:
        counts.update(d.counts)
        kinds.update(d.false_by_kind)
        st_true.update(d.style_true)
        st_found.update(d.style_found)
    counts["failed"] = len(failed)
    return {
        "title": title,
        "docs": len(docs),
        "counts": dict(counts),
        "figures": figures(counts),
        "false_by_kind": dict(kinds.most_common()),
        "recall_by_style": {
            tag: {"true": st_true[tag], "found": st_found[tag]} for tag in sorted(st_true)
        },
        "failed": [{"name": n, "error": e} for n, e in failed],
        "seconds": round(sum(d.seconds for d in docs), 1),
        "files": [d.record() for d in docs],
    }


def fmt(x: float | None, count: bool = False) -> str:
    """A figure for a table cell."""
    if x is None:
        return "–"
    return f"{x:.0f}" if count else f"{x:.3f}"


def report(key: str, rec: dict[str, Any]) -> None:
    """Print a source's figures."""
    f, c = rec["figures"], rec["counts"]
    print(
        f"\n== {key}: {rec['title']} — {rec['docs']} files, {c.get('failed', 0)} failed, "
        f"{rec['seconds']:.0f} s"
    )
    print("| figure | value | of |")
    print("|---|---|---|")
    for name, (num, den, higher) in FIGURES.items():
        if f[name] is None and den is not None:
            continue
        if den is None and not c.get(num) and name != "tabela_elsewhere":
            continue
        of = f"{c.get(num, 0)} / {c.get(den, 0)}" if den else ""
        arrow = "↑" if higher else "↓"
        target = " (target ≤ 0.02)" if name == "bad_paths" else ""
        target = " (target 0)" if name == "tabela_elsewhere" else target
        print(f"| {name.replace('_', ' ')} {arrow}{target} | {fmt(f[name], den is None)} | {of} |")
    if c.get("chunks") and "judges_agree" in c:
        print(
            f"truth-free judge vs truth judge: agree on {c['judges_agree'] / c['chunks']:.3f} "
            f"of chunks; flags {c.get('bad_also_suspicious', 0)} of "
            f"{c.get('bad_chunks', 0)} bad chunks"
        )
    if rec["false_by_kind"]:
        kinds = ", ".join(f"{k} {n}" for k, n in rec["false_by_kind"].items())
        print(f"false headings by kind: {kinds}")
    styles = rec["recall_by_style"]
    if len(styles) > 1:
        parts = [
            f"{t} {s['found'] / s['true']:.2f} ({s['true']})"
            for t, s in styles.items()
            if s["true"]
        ]
        print("recall by heading style: " + ", ".join(parts))
    if c.get("headings_seen"):
        print(
            f"detected headings (no truth to judge them by): {c['headings_seen']} in "
            f"{rec['docs']} files"
        )
    for item in rec["failed"]:
        print(f"failed: {item['name']}: {item['error']}")


def worst(rec: dict[str, Any], n: int) -> None:
    """The files with the most bad or suspicious segments."""
    files = sorted(
        rec["files"], key=lambda d: -len(d.get("bad_segments", d.get("suspicious_segments", [])))
    )
    for d in files[:n]:
        segs = d.get("bad_segments") or d.get("suspicious_segments") or []
        if segs:
            print(f"  {d['name']}: {'; '.join(segs[:4])}")


def run_record(sources: dict[str, Any], args: argparse.Namespace, rules: bool) -> dict:
    """The whole run as saved by `--save`."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "rag_assets"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except OSError:
        commit, changed = "?", []
    import rag_assets

    package = Path(rag_assets.__file__).resolve().parent
    here = package.is_relative_to(REPO)
    return {
        "when": dt.datetime.now().isoformat(timespec="seconds"),
        "commit": commit,
        "rag_assets": str(package),  # the trecho measured (a snapshot elsewhere: PYTHONPATH)
        # rag_assets files not at `commit` (None: a trecho outside this checkout)
        "uncommitted": [line[3:] for line in changed] if here else None,
        "seeds": args.seeds,
        "quick": args.quick,
        "generator": synth.VERSION,
        "rules_only_measured": rules,
        "machine": machine(),
        "sources": sources,
    }


def compare(base: dict[str, Any], new: dict[str, Any]) -> bool:
    """Two runs side by side, source by source, and the keep rule: KEEP when no source's
    figure is worse by more than one document's worth and at least one is better."""
    common = [k for k in new["sources"] if k in base["sources"]]
    print(
        f"\n== compare: base {base.get('commit', '?')} ({base.get('when', '?')}, seeds "
        f"{base.get('seeds')}) -> new {new.get('commit', '?')} ({new.get('when', '?')}, "
        f"seeds {new.get('seeds')})"
    )
    only = sorted(set(base["sources"]) ^ set(new["sources"]))
    if only:
        print(f"left out (in one run only): {', '.join(only)}")
    worse: list[str] = []
    better: list[str] = []
    print("| source | figure | base | new | change | one document |")
    print("|---|---|---|---|---|---|")
    for key in common:
        a, b = base["sources"][key], new["sources"][key]
        if a.get("docs") != b.get("docs"):
            print(f"warning: {key} scored {a.get('docs')} files in the base, {b.get('docs')} new")
        docs = max(1, a.get("docs", 1))
        for name, (num, den, higher) in FIGURES.items():
            x, y = a["figures"].get(name), b["figures"].get(name)
            if x is None or y is None:
                continue
            if den is None:
                step = max(1.0, a["counts"].get(num, 0) / docs)
            else:
                step = 1.0 / docs
            move = (y - x) if higher else (x - y)
            mark = ""
            if move < -step:
                worse.append(f"{key} {name}")
                mark = " **worse**"
            elif move > 1e-12:
                better.append(f"{key} {name}")
            count = den is None
            print(
                f"| {key} | {name.replace('_', ' ')} | {fmt(x, count)} | {fmt(y, count)} | "
                f"{y - x:+.3f}{mark} | {step:.3f} |"
            )
    kept = not worse and bool(better)
    print(
        "keep rule: no source's figure worse by more than one document's worth "
        "(1/files of a share, a file's mean of a count) and at least one better"
    )
    if worse:
        print(f"worse: {', '.join(worse)}")
    print(f"better: {', '.join(better) if better else 'none'}")
    print(f"verdict: {'KEEP' if kept else 'DROP'}")
    return kept


def main(argv: list[str] | None = None) -> int:
    """Measure, print, save, compare."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", default=",".join(SOURCES), help="synth,real,public,laws")
    parser.add_argument(
        "--seeds",
        default="tune",
        help="synth seeds: tune (0-399, for tuning), report (5000-5299, never tuned on), "
        "A-B or A,B,C",
    )
    parser.add_argument("--dir", type=Path, default=synth.DEFAULT_DIR, help="synth cache")
    parser.add_argument("--quick", action="store_true", help="every 10th seed, a few files")
    parser.add_argument("--save", help="write every figure (per source and file) as JSON")
    parser.add_argument("--compare", nargs="+", metavar="RUN", help="base [new] saved runs")
    parser.add_argument("--worst", type=int, default=5, help="files with most bad segments")
    args = parser.parse_args(argv)
    if args.compare and len(args.compare) > 2:
        parser.error("--compare takes one saved run (against this run) or two")
    if args.compare and len(args.compare) == 2:
        runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.compare]
        return 0 if compare(*runs) else 1
    logging.disable(logging.WARNING)
    print(machine(), file=sys.stderr)
    trecho = Trecho()
    if not trecho.can_switch:
        print("read_pdf takes no structure= yet: rules-only figures left out", file=sys.stderr)
    sources: dict[str, Any] = {}
    for key in [k.strip() for k in args.source.split(",") if k.strip()]:
        cases = load_cases(key, args)
        if isinstance(cases, str) or not cases:
            print(f"skip {key}: {cases or 'no files'}", file=sys.stderr)
            continue
        docs: list[Doc] = []
        failed: list[tuple[str, str]] = []
        for k, case in enumerate(cases):
            try:
                docs.append(measure(case, trecho))
            except Exception as e:  # one file's failure is counted, the run goes on
                failed.append((case.name, f"{type(e).__name__}: {str(e)[:160]}"))
            if (k + 1) % 25 == 0 or k + 1 == len(cases):
                print(f"  {key}: {k + 1}/{len(cases)}", file=sys.stderr, flush=True)
        title = {
            "synth": f"synthetic reports (seeds {args.seeds}{', quick' if args.quick else ''}, "
            f"v{synth.VERSION}, {synth.folder(args.dir)})",
            "real": str(SHARED_PDFS),
            "laws": str(LAWS),
            "public": "public PDFs, their outline as truth (heading_public.py)",
        }[key]
        sources[key] = summarize(key, title, docs, failed)
        report(key, sources[key])
        worst(sources[key], args.worst)
    record = run_record(sources, args, trecho.can_switch)
    if args.save:
        Path(args.save).write_text(json.dumps(record, indent=1, ensure_ascii=False), "utf-8")
        print(f"saved: {args.save}")
    if args.compare:
        base = json.loads(Path(args.compare[0]).read_text(encoding="utf-8"))
        compare(base, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
