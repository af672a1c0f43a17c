"""Extraction pages/s: trecho's `extract()` ÷ bare pdfplumber `page.extract_text()`.

Both read the same PDFs (the lake's raw PDFs and the good files of the shared real-world
corpus), file by file, alternating which goes first; the ratio is the median of the
per-round ratios of total seconds. A second pass times pdfplumber's primitives on the
same pages (layout parsing, table finding, text lines, plain text) to show where trecho's
extra time goes; `--profile` adds a cProfile breakdown by library.

    python bench/extraction.py [--quick] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections import defaultdict
from pathlib import Path

import pdfplumber
from _common import LAKE, SHARED_PDFS, clocked, header, median, spread, timed

from rag_assets.core.extract import OcrSettings, PdfError, extract

SKIP = {
    "empty.pdf": "zero bytes, not a PDF",
    "password-example.pdf": "encrypted",
    "malformed-from-issue-932.pdf": "malformed, nearly no text",
    "issue-203-decimalize.pdf": "images only: needs OCR (~10 s a page), not extraction",
}
NO_OCR = OcrSettings(enabled=False)
PARSE = "parse layout (page.chars)"
TEXT = "text map (extract_text)"
LINES = "text lines on that map (return_chars)"
TABLES = "find_tables + extract cells"
UNRULED = "  of it, on unruled pages"


def bare(path: Path) -> int:
    """The baseline: pdfplumber's plain text of every page; returns characters read."""
    with pdfplumber.open(path) as pdf:
        return sum(len(page.extract_text() or "") for page in pdf.pages)


def trecho(path: Path) -> int:
    """trecho's extraction (OCR off: no file here needs it); returns characters read."""
    return len(extract(path, ocr=NO_OCR).doc.text)


def find_pdfs(quick: bool) -> list[tuple[Path, int]]:
    """The PDFs to read, with their page counts; bad ones are skipped with why."""
    paths = sorted((LAKE / "raw").glob("*/*.pdf")) + sorted(SHARED_PDFS.glob("*.pdf"))
    found: list[tuple[Path, int]] = []
    for path in paths:
        if path.name in SKIP:
            print(f"  skip {path.name}: {SKIP[path.name]}")
            continue
        try:
            trecho(path)  # also a warm-up (imports, caches)
            with pdfplumber.open(path) as pdf:
                found.append((path, len(pdf.pages)))
        except PdfError as exc:
            print(f"  skip {path.name}: {exc}")
    if quick:
        found = [f for f in found if f[1] <= 3][:6]
    return found


def interleaved(
    pdfs: list[tuple[Path, int]], rounds: int
) -> tuple[float, float, list[float], list[float]]:
    """Median seconds per round of each side, and the per-round throughput ratios by wall
    time and by process CPU time."""
    t_bare: list[float] = []
    t_trecho: list[float] = []
    by_wall: list[float] = []
    by_cpu: list[float] = []
    for r in range(rounds):
        sums = {"bare": [0.0, 0.0], "trecho": [0.0, 0.0]}
        for i, (path, _) in enumerate(pdfs):
            order = ("bare", "trecho") if (r + i) % 2 == 0 else ("trecho", "bare")
            for side in order:
                fn = bare if side == "bare" else trecho
                wall, cpu, _ = clocked(lambda fn=fn, path=path: fn(path))
                sums[side][0] += wall
                sums[side][1] += cpu
        t_bare.append(sums["bare"][0])
        t_trecho.append(sums["trecho"][0])
        by_wall.append(sums["bare"][0] / sums["trecho"][0])
        by_cpu.append(sums["bare"][1] / sums["trecho"][1])
        print(
            f"  round {r + 1}: bare {sums['bare'][0]:.2f}s, trecho {sums['trecho'][0]:.2f}s; "
            f"trecho/bare pages/s {by_wall[-1]:.3f} by wall time, {by_cpu[-1]:.3f} by CPU time"
        )
    return median(t_bare), median(t_trecho), by_wall, by_cpu


def components(pdfs: list[tuple[Path, int]]) -> dict[str, float]:
    """Seconds in pdfplumber's primitives on the same pages (one pass, fresh opens), next
    to trecho's and the baseline's own seconds on each file in the same pass."""
    out: dict[str, float] = defaultdict(float)
    for path, _ in pdfs:
        out["trecho"] += timed(lambda path=path: trecho(path))[0]
        out["bare"] += timed(lambda path=path: bare(path))[0]
        with pdfplumber.open(path) as pdf:
            for page in pdf.pages:
                start = time.perf_counter()
                _ = page.chars  # parses the page's layout (pdfminer): both sides pay it
                t1 = time.perf_counter()
                page.extract_text()  # builds the page's text map (cached by pdfplumber)
                t2 = time.perf_counter()
                page.extract_text_lines(return_chars=True)  # reuses that text map
                t3 = time.perf_counter()
                for table in page.find_tables():
                    table.extract()
                t4 = time.perf_counter()
                out[PARSE] += t1 - start
                out[TEXT] += t2 - t1
                out[LINES] += t3 - t2
                out[TABLES] += t4 - t3
                if not (page.lines or page.rects or page.curves):
                    out[UNRULED] += t4 - t3
                    out["unruled pages"] += 1
    return dict(out)


def profile(pdfs: list[tuple[Path, int]]) -> None:
    """Own time (cProfile tottime) of one trecho pass, grouped by library and module."""
    prof = cProfile.Profile()
    prof.enable()
    for path, _ in pdfs:
        trecho(path)
    prof.disable()
    stats = pstats.Stats(prof)
    groups: dict[str, float] = defaultdict(float)
    total = 0.0
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():
        total += tottime
        name = filename.replace("\\", "/")
        if "rag_assets/core/" in name:
            key = "trecho " + name.split("rag_assets/core/")[1]
        elif "/pdfplumber/" in name:
            key = "pdfplumber " + name.split("/pdfplumber/")[1]
        elif "/pdfminer/" in name:
            key = "pdfminer (parsing, layout)"
        else:
            key = "other (stdlib, builtins)"
        groups[key] += tottime
    print("  cProfile own time of one trecho pass (profiling inflates small calls):")
    for key, value in sorted(groups.items(), key=lambda kv: -kv[1])[:10]:
        print(f"    {key:<40} {value / total:6.1%}")


def main() -> None:
    """Measure and print the ratio, the breakdown and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small files, 2 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (3)")
    parser.add_argument("--profile", action="store_true", help="add a cProfile breakdown")
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 3)
    header("extraction: trecho extract() vs bare pdfplumber extract_text()", args)

    pdfs = find_pdfs(args.quick)
    pages = sum(n for _, n in pdfs)
    print(f"\n-- 1. {len(pdfs)} PDFs, {pages} pages, {rounds} rounds (file by file, A B / B A)")
    s_bare, s_trecho, ratios, by_cpu = interleaved(pdfs, rounds)
    print(
        f"  bare pdfplumber: {pages / s_bare:.1f} pages/s; trecho extract(): {pages / s_trecho:.1f}"
    )
    print(f"  RATIO trecho pages/s / bare pdfplumber pages/s, by wall time = {spread(ratios)}")
    print(f"  RATIO trecho pages/s / bare pdfplumber pages/s, by CPU time  = {spread(by_cpu)}")

    print("\n-- 2. where trecho's extra time goes (pdfplumber primitives on the same pages)")
    parts = components(pdfs)
    p_trecho, p_bare = parts.pop("trecho"), parts.pop("bare")
    unruled, n_unruled = parts.pop(UNRULED, 0.0), int(parts.pop("unruled pages", 0))
    print(f"  in this pass: trecho {p_trecho:.2f}s, bare {p_bare:.2f}s")
    for name, value in parts.items():
        print(
            f"    {name:<40} {value:7.2f}s  = {value / p_bare:5.2f}x bare time, "
            f"{value / p_trecho:6.1%} of trecho's"
        )
    print(
        f"    {UNRULED + f' ({n_unruled} pages)':<40} {unruled:7.2f}s  = {unruled / p_bare:5.2f}x "
        f"bare time, {unruled / p_trecho:6.1%} of trecho's (no line, rect or curve: no ruled "
        "table can be found there)"
    )
    used = sum(parts.values())
    rest = max(0.0, p_trecho - used)
    print(
        f"    {'the rest of trecho (see below)':<40} {rest:7.2f}s  = {rest / p_bare:5.2f}x bare "
        f"time, {rest / p_trecho:6.1%} of trecho's"
    )
    print(
        "    (the rest: turning pages upright, deduplicating glyphs, phantom spaces, filtered "
        "pages, columns, running lines, hyphenation, offsets)"
    )
    if args.profile:
        profile(pdfs)

    print("\n-- summary")
    print(
        f"  trecho extract() / bare extract_text() pages/s: {median(ratios):.2f} (wall), "
        f"{median(by_cpu):.2f} (CPU)"
    )
    print(
        f"  share of trecho's time: layout parsing {parts[PARSE] / p_trecho:.0%}, text map + "
        f"lines {(parts[TEXT] + parts[LINES]) / p_trecho:.0%}, table finding "
        f"{parts[TABLES] / p_trecho:.0%}, the rest {rest / p_trecho:.0%}"
    )


if __name__ == "__main__":
    main()
