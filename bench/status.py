"""`trecho status` against importing what it needs, side by side: how much of an everyday
command is more than its imports.

Each round runs, in rotated order, a fresh `python -c "import rag_assets.cli, lancedb"`
process and a fresh `trecho status --lake LAKE` process (and, with `--check-runtime`,
`trecho status --check-runtime`, which builds the embedding paths instead of reading
what the runs recorded), wall clock each; it prints the medians and the median of the
per-round ratios status ÷ imports. The lake should be materialized (`trecho materialize
--lake LAKE`): status then reads a real table and the recorded paths.

    python bench/status.py [--lake data_lake] [--rounds 7] [--check-runtime]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from _common import REPO, header, median, rotated


def run(command: list[str]) -> float:
    """Seconds a fresh process takes to run `command` (its output discarded)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env, cwd=REPO)
    return time.perf_counter() - start


def main() -> None:
    """Run the rounds and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", default=str(REPO / "data_lake"), help="a materialized lake")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--check-runtime", action="store_true", help="also time that flag")
    args = parser.parse_args()
    header("trecho status vs its imports, fresh processes", args)
    status = [sys.executable, "-m", "rag_assets.cli", "status", "--lake", args.lake]
    sides = {
        "import rag_assets.cli, lancedb": [sys.executable, "-c", "import rag_assets.cli, lancedb"],
        "trecho status": status,
    }
    if args.check_runtime:
        sides["trecho status --check-runtime"] = [*status, "--check-runtime"]
    times: dict[str, list[float]] = {side: [] for side in sides}
    run(sides["trecho status"])  # warm the page cache and the lake's memo
    for step in range(args.rounds):
        for side in rotated(list(sides), step):
            times[side].append(run(sides[side]))
    base = times["import rag_assets.cli, lancedb"]
    print("| process | median s | ÷ imports (median of rounds) |")
    print("|---|---:|---:|")
    for side, values in times.items():
        ratio = median([v / b for v, b in zip(values, base, strict=True)])
        print(f"| {side} | {median(values):.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
