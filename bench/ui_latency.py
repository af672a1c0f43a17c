"""Seconds from a new two-page version dropped into `raw/` to searchable: through the
Dagster daemon's raw-folder sensor as it was (one process per step, a tick every 30 s)
and as it is now (the whole run in one process, a tick every 5 s), beside
`trecho materialize` on the same file. One run, the three side by side.

Each side gets its own copy of the sample operations manual, indexed first (not timed)
into its own Dagster home, and the same new PDF: two pages of sections with fresh
numbers (nothing of it in any embedding cache). Through the sensor, `dagster-daemon run`
loads the code location from this checkout; the file is dropped just after a sensor
tick, so the sensor's wait is a whole interval (the worst case; a file dropped at a
random moment waits half of it on average). Searchable: the version's rows are in the
table search uses; the run's end is reported too (a run now ends by folding its rows
into the full-text index when no other run follows: issue 56).

With `--old REV`, the sides are two source trees instead, each with its own defaults:
REV checked out into a temporary worktree (`speed_vs.source_tree`) and this checkout,
through the sensor each, the order alternating round by round (`--rounds`), and the
ratios this tree ÷ REV. Usage::

    python bench/ui_latency.py            # the product's model (TRECHO_MODEL, default e5)
    python bench/ui_latency.py --old 70bf201 --rounds 2
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's code, also in this process

from _common import machine  # noqa: E402

from rag_assets.orchestration.concurrency import INSTANCE_YAML  # noqa: E402

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
BASE = "manual-operacao"
NEW = "manual-bench/v1"
SIDES = {
    "before": (
        "sensor, before (multiprocess, 30 s ticks)",
        {"TRECHO_EXECUTOR": "multiprocess", "TRECHO_SENSOR_INTERVAL": "30"},
    ),
    "now": ("sensor, now (in-process, 5 s ticks)", {}),
}


def write_pdf(path: Path, seed: int) -> None:
    """Two pages of numbered sections whose figures come from `seed`."""
    from fpdf import FPDF

    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(FONT))
    pdf.add_page()
    pdf.set_font("DejaVu", "", 16)
    pdf.multi_cell(0, 9, "Procedimento de Calibração", new_x="LMARGIN", new_y="NEXT")
    for n in range(1, 17):
        if n == 9:
            pdf.add_page()
        pdf.set_font("DejaVu", "", 13)
        pdf.multi_cell(0, 8, f"{n}. Etapa {n}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", "", 10)
        body = (
            f"A etapa {n} ajusta o sensor {rng.randint(100, 999)} a {rng.randint(10, 90)} °C "
            f"com tolerância de {rng.randint(1, 9)},{rng.randint(0, 9)} %, registrada no "
            f"formulário F-{rng.randint(1000, 9999)} e conferida pelo supervisor do turno."
        )
        pdf.multi_cell(0, 5, body, new_x="LMARGIN", new_y="NEXT")
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


def environment(lake: Path, home: Path, extra: dict[str, str], tree: Path = REPO) -> dict[str, str]:
    """The environment of a side's processes: its lake and Dagster home, the code of
    `tree` (this checkout by default)."""
    return {
        **os.environ,
        "PYTHONPATH": str(tree),
        "DAGSTER_HOME": str(home),
        "TRECHO_LAKE": str(lake),
        "DAGSTER_DISABLE_TELEMETRY": "1",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        **extra,
    }


def fresh_side(root: Path, name: str) -> tuple[Path, Path]:
    """A lake holding the base document, and an empty Dagster home."""
    lake, home = root / name / "lake", root / name / "dagster_home"
    shutil.copytree(REPO / "data_lake" / "raw" / BASE, lake / "raw" / BASE)
    (lake / "eval").mkdir(parents=True)
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text(INSTANCE_YAML, encoding="utf-8")  # as trecho writes it
    return lake, home


def materialize(env: dict[str, str], lake: Path, tree: Path = REPO) -> float:
    """`trecho materialize --skip-eval` as a user runs it; its wall seconds."""
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", "materialize", "--skip-eval", "--lake", str(lake)],
        cwd=tree,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.monotonic() - start


def searchable(lake: Path) -> bool:
    """Whether the new version's rows are in the table search uses."""
    from rag_assets.core.index import committed_keys

    return NEW.replace("/", "@") in committed_keys(lake / "lancedb", NEW.split("/")[0])


def through_sensor(
    root: Path, slug: str, extra: dict[str, str], seed: int, tree: Path = REPO
) -> dict[str, float]:
    """Index the base, start the daemon (the code of `tree`), drop the new file just
    after a tick, wait until it is searchable; the seconds of each part."""
    from dagster import DagsterInstance, RunRecord, RunsFilter

    lake, home = fresh_side(root, slug)
    env = environment(lake, home, extra, tree)
    materialize(env, lake, tree)
    os.environ["DAGSTER_HOME"] = str(home)
    daemon = subprocess.Popen(
        [str(Path(sys.executable).with_name("dagster-daemon")), "run", "-w", "workspace.yaml"],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        with DagsterInstance.get() as instance:

            def ticks() -> int:
                states = instance.all_instigator_state()
                sensor = [s for s in states if s.name == "raw_folder_sensor"]
                if not sensor:
                    return 0
                origin, selector = sensor[0].instigator_origin_id, sensor[0].selector_id
                return len(instance.get_ticks(origin, selector))

            wait(lambda: ticks() >= 1, 600, "the sensor's first tick")
            seen = ticks()
            wait(lambda: ticks() > seen, 120, "a sensor tick")
            write_pdf(lake / "raw" / f"{NEW}.pdf", seed)
            start = time.monotonic()
            wait(lambda: searchable(lake), 900, "the new version searchable")
            total = time.monotonic() - start
            key = NEW.replace("/", "@")

            def records() -> list[RunRecord]:
                return instance.get_run_records(RunsFilter(tags={"dagster/partition": key}))

            wait(lambda: all(r.end_time for r in records()), 300, "the run's end")
            to_end = time.monotonic() - start
            runs = records()
            run = runs[-1]
            created = run.create_timestamp.timestamp()
            started, ended = run.start_time or created, run.end_time or created
            return {
                "total": total,
                "to_end": to_end,
                "run": ended - started,
                "queued": started - created,
                "runs": len(runs),
            }
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()


def wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `predicate` every 0.25 s, at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.25)


def trees_side_by_side(old: str, rounds: int) -> None:
    """The sensor path from `old`'s tree and from this one, alternating, and the ratios
    of the medians this tree ÷ old (`--old`)."""
    from speed_vs import source_tree

    print(machine())
    print(f"file to searchable through the sensor: {old} and this tree, {rounds} round(s)")
    seed = random.randrange(1 << 30)
    root = Path(tempfile.mkdtemp(prefix="trecho-ui-latency-"))
    seconds: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    try:
        with source_tree(old) as old_tree:
            trees = {"old": old_tree, "new": REPO}
            for n in range(rounds):
                order = ["old", "new"] if n % 2 == 0 else ["new", "old"]
                for side in order:
                    parts = through_sensor(root, f"{side}{n}", {}, seed + n, trees[side])
                    for part in ("total", "to_end", "run"):
                        seconds[side].setdefault(part, []).append(parts[part])
                    print(
                        f"  round {n + 1} {side:3s}: {parts['total']:6.1f} s to searchable, "
                        f"{parts['to_end']:6.1f} s to the run's end (run {parts['run']:.1f} s, "
                        f"queued {parts['queued']:.1f} s, {int(parts['runs'])} run)",
                        flush=True,
                    )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{'':28s} {old:>9s} {'this tree':>10s}  this ÷ old")
    for part, label in (("total", "file to searchable"), ("to_end", "file to the run's end")):
        a, b = statistics.median(seconds["old"][part]), statistics.median(seconds["new"][part])
        print(f"  {label:26s} {a:8.1f}s {b:9.1f}s  {b / a:9.2f}x")


def main() -> None:
    """The three sides, one after the other, and their ratios (or two trees: `--old`)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--old", help="a git revision: its tree beside this one, through the sensor"
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds with --old (default 1)")
    args = parser.parse_args()
    if args.old:
        trees_side_by_side(args.old, args.rounds)
        return
    print(machine())
    seed = random.randrange(1 << 30)
    root = Path(tempfile.mkdtemp(prefix="trecho-ui-latency-"))
    try:
        results: dict[str, float] = {}
        for slug, (name, extra) in SIDES.items():
            parts = through_sensor(root, slug, extra, seed)
            results[name] = parts["total"]
            print(
                f"{name}: {parts['total']:.1f} s from file to searchable "
                f"(run {parts['run']:.1f} s, queued {parts['queued']:.1f} s, "
                f"{int(parts['runs'])} run)",
                flush=True,
            )
        lake, home = fresh_side(root, "materialize")
        env = environment(lake, home, {})
        materialize(env, lake)
        write_pdf(lake / "raw" / f"{NEW}.pdf", seed)
        results["trecho materialize"] = materialize(env, lake)
        assert searchable(lake)
        print(f"trecho materialize: {results['trecho materialize']:.1f} s from file to searchable")
        cli = results["trecho materialize"]
        for name, seconds in results.items():
            print(f"  {name:45s} {seconds:6.1f} s  {seconds / cli:5.2f}x trecho materialize")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
