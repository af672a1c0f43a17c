"""`make demo` and the fast test tier, two source trees side by side: new ÷ old.

Each round runs, from each tree in turn (the order alternates round by round: old new,
then new old), what `make demo` runs after its setup (`trecho materialize --lake LAKE
--eval-offsets 1`, on a fresh lake holding the bundled sample corpus, the lake's folder
as DAGSTER_HOME) and what `make test-fast` runs (`pytest -q -m "not slow"`). Both trees
use this virtualenv, each with its own code first on `PYTHONPATH`; both demos read the
same raw PDFs and questions (this tree's `data_lake/raw` and `eval`, copied afresh into
a temporary lake for every run). The figure per target is the median of the per-round
ratios new ÷ old of wall seconds, and, as a steadier second reading, of the CPU seconds
of the command's processes (user + system, all threads).

`--old` is a folder or a git revision; a revision is checked out (detached) into a
temporary worktree beside a link to `../shared`, so that its tests find the corpora as
this tree's do, and removed at the end.

    python bench/speed_vs.py                           # b809837 vs this tree, 2 rounds
    python bench/speed_vs.py --rounds 3 --warmup       # a first unrecorded demo per tree
    python bench/speed_vs.py --old b809837 --rounds 3 --targets demo
    python bench/speed_vs.py --old /path/to/tree --new /path/to/other
    python bench/speed_vs.py --targets fast --files 15  # which test files moved most
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _common import REPO, header, median, rotated, spread

OLD = "b809837"
"""Before issue 33 (tables by principle): the base its speed criterion is measured on."""
TARGETS = ("demo", "fast")
SIDES = ("old", "new")


def say(line: str) -> None:
    """A progress line, with the time of day."""
    print(f"  [{time.strftime('%H:%M:%S')}] {line}", flush=True)


def describe(tree: Path) -> str:
    """The tree's commit, `+changes` when its files differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tree), *args], capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head or '?'}{' +changes' if dirty else ''}"


@contextmanager
def source_tree(spec: str) -> Iterator[Path]:
    """The source tree `spec` names: a folder as it is, or a git revision checked out
    into a temporary detached worktree (removed on exit) beside a `shared` link, where
    the tests look for the corpora (`../shared`)."""
    if Path(spec).is_dir():
        yield Path(spec).resolve()
        return
    parent = Path(tempfile.mkdtemp(prefix="speed-vs-"))
    tree = parent / "tree"
    (parent / "shared").symlink_to((REPO.parent / "shared").resolve())
    git = ["git", "-C", str(REPO)]
    subprocess.run([*git, "worktree", "add", "--detach", str(tree), spec], check=True)
    try:
        yield tree
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(parent, ignore_errors=True)


def clean_env(tree: Path) -> dict[str, str]:
    """The environment `make` gives a command, with `tree`'s code first on the path and
    no trecho or Dagster settings inherited from this shell."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TRECHO_") and k not in ("DAGSTER_HOME", "PYTHONPATH")
    }
    env.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str], tree: Path, env: dict[str, str], log: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of a command run in `tree` (output to `log`), and its code."""
    cpu = children_cpu()
    start = time.perf_counter()
    with log.open("w") as out:
        code = subprocess.run(
            cmd, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT
        ).returncode
    return time.perf_counter() - start, children_cpu() - cpu, code


def sample_corpus(tree: Path) -> dict[str, bytes]:
    """The demo's inputs in a tree: relative path -> bytes of `data_lake/raw` and `eval`."""
    lake = tree / "data_lake"
    return {
        str(p.relative_to(lake)): p.read_bytes()
        for folder in ("raw", "eval")
        for p in sorted((lake / folder).rglob("*"))
        if p.is_file()
    }


def demo(tree: Path, corpus: Path, work: Path, log: Path) -> tuple[float, float, str]:
    """`make demo`'s materialization from `tree` on a fresh copy of `corpus`."""
    lake = work / "lake"
    shutil.rmtree(work, ignore_errors=True)
    for folder in ("raw", "eval"):
        shutil.copytree(corpus / folder, lake / folder)
    env = clean_env(tree)
    env["DAGSTER_HOME"] = str(lake / ".dagster")
    (lake / ".dagster").mkdir()
    cmd = [sys.executable, "-m", "rag_assets.cli", "materialize", "--lake", str(lake)]
    wall, cpu, code = run([*cmd, "--eval-offsets", "1"], tree, env, log)
    reports = sorted(lake.glob("reports/*/report.html"))
    outcome = "report written" if code == 0 and reports else f"FAILED (exit {code})"
    shutil.rmtree(work, ignore_errors=True)
    return wall, cpu, outcome


def fast_tier(tree: Path, log: Path, durations: bool) -> tuple[float, float, str]:
    """`make test-fast` from `tree`: its fast tests with its code (every test's setup, call
    and teardown seconds in the log with `durations`)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider"]
    cmd += ["--durations=0", "--durations-min=0.05"] if durations else []
    wall, cpu, code = run(cmd, tree, clean_env(tree), log)
    lines = [x for x in log.read_text().splitlines() if re.search(r"\d+ (passed|failed)", x)]
    summary = lines[-1].strip("= ") if lines else "no summary"
    return wall, cpu, summary if code == 0 else f"FAILED (exit {code}): {summary}"


def check_imports(trees: dict[str, Path]) -> None:
    """Stop unless each tree's subprocesses import that tree's package."""
    for side, tree in trees.items():
        code = "import rag_assets; print(rag_assets.__file__)"
        got = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tree,
            env=clean_env(tree),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not Path(got).resolve().is_relative_to(tree.resolve()):
            raise SystemExit(f"{side}: rag_assets comes from {got}, not from {tree}")


def main() -> None:
    """Run the targets from both trees, interleaved, and print the ratios new ÷ old."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", default=OLD, help=f"folder or git revision (default {OLD})")
    parser.add_argument("--new", default=str(REPO), help="folder (default: this tree)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--targets", default=",".join(TARGETS), help="demo,fast")
    parser.add_argument("--logs", type=Path, help="keep each run's output in this folder")
    parser.add_argument(
        "--files",
        type=int,
        default=0,
        help="also print the N test files whose seconds changed most (pytest --durations)",
    )
    parser.add_argument(
        "--warmup",
        action="store_true",
        help="first run the first target once from each tree, unrecorded (a cold disk cache)",
    )
    args = parser.parse_args()
    targets = [t for t in args.targets.split(",") if t]
    if unknown := set(targets) - set(TARGETS):
        raise SystemExit(f"unknown targets: {', '.join(sorted(unknown))} (known: demo, fast)")
    header("make demo and the fast test tier: new tree ÷ old tree, side by side", args)
    with source_tree(args.old) as old, source_tree(args.new) as new:
        trees = {"old": old, "new": new}
        for side, tree in trees.items():
            print(f"{side}: {tree} at {describe(tree)}")
        check_imports(trees)
        corpus = sample_corpus(new)
        same = corpus == sample_corpus(old)
        print(
            f"sample corpus: {len(corpus)} files of {new / 'data_lake'} for both demos "
            f"({'identical to' if same else 'DIFFERS from'} the old tree's)"
        )
        work = Path(tempfile.mkdtemp(prefix="speed-vs-runs-"))
        logs = args.logs or work / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        try:
            if args.warmup:
                say(f"warm-up: {targets[0]} once from each tree, not recorded")
                measure(trees, targets[:1], 1, new / "data_lake", work, logs, "warm-up")
            times = measure(
                trees, targets, args.rounds, new / "data_lake", work, logs, durations=args.files > 0
            )
            if args.files and "fast" in targets:
                by_file(logs, args.rounds, args.files)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    report(times, targets)


Times = dict[str, dict[str, list[tuple[float, float]]]]
"""target -> side -> (wall, cpu) per round."""


def measure(
    trees: dict[str, Path],
    targets: list[str],
    rounds: int,
    corpus: Path,
    work: Path,
    logs: Path,
    name: str = "round",
    durations: bool = False,
) -> Times:
    """Every target from every tree, `rounds` times, the order of the trees alternating."""
    times: Times = {t: {s: [] for s in SIDES} for t in targets}
    for r in range(rounds):
        for target in targets:
            for side in rotated(SIDES, r):
                load = os.getloadavg()[0]
                log = logs / f"{target}-{side}-{name}{r + 1}.log"
                if target == "demo":
                    wall, cpu, outcome = demo(trees[side], corpus, work / "demo", log)
                else:
                    wall, cpu, outcome = fast_tier(trees[side], log, durations)
                times[target][side].append((wall, cpu))
                if "FAILED" in outcome:
                    print("\n".join(log.read_text().splitlines()[-15:]))
                say(
                    f"{name} {r + 1} {target:4} {side}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                    f"load {load:.1f} -> {os.getloadavg()[0]:.1f}; {outcome}"
                )
    return times


def file_seconds(log: Path) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown summed) from a `--durations` log."""
    out: dict[str, float] = {}
    for line in log.read_text().splitlines():
        if m := re.match(r"([\d.]+)s (setup|call|teardown)\s+(\S+?)::", line):
            out[m[3]] = out.get(m[3], 0.0) + float(m[1])
    return out


def by_file(logs: Path, rounds: int, n: int) -> None:
    """The `n` test files whose median seconds moved most between the trees."""
    sides = {
        side: [file_seconds(logs / f"fast-{side}-round{r + 1}.log") for r in range(rounds)]
        for side in SIDES
    }
    names = {name for found in sides.values() for one in found for name in one}
    med = {
        side: {name: median([one.get(name, 0.0) for one in found]) for name in names}
        for side, found in sides.items()
    }
    moved = sorted(names, key=lambda name: abs(med["new"][name] - med["old"][name]), reverse=True)
    print(f"\ntest files whose seconds moved most (median over {rounds} rounds; >= 0.05 s each)")
    print(f"{'old s':>7} {'new s':>7} {'new-old':>8}  file")
    for name in moved[:n]:
        old, new = med["old"][name], med["new"][name]
        print(f"{old:7.1f} {new:7.1f} {new - old:+8.1f}  {name}")
    total = {side: sum(med[side].values()) for side in SIDES}
    print(f"{total['old']:7.1f} {total['new']:7.1f} {total['new'] - total['old']:+8.1f}  (all)")


def report(times: Times, targets: list[str]) -> None:
    """Median seconds per side and the median of the per-round ratios new ÷ old."""
    print("\ntarget  old s (median)  new s (median)  new/old wall  new/old CPU  rounds")
    for target in targets:
        old, new = times[target]["old"], times[target]["new"]
        wall = [n[0] / o[0] for o, n in zip(old, new, strict=True)]
        cpu = [n[1] / o[1] for o, n in zip(old, new, strict=True)]
        print(
            f"{target:6}  {median([o[0] for o in old]):14.1f}  "
            f"{median([n[0] for n in new]):14.1f}  {spread(wall):>12}  {spread(cpu):>11}  "
            f"{len(wall)}"
        )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
