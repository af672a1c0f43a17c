"""What drawing questions from the lake costs the eval, two source trees side by side.

On one materialized lake (default: the sample lake, `make demo`), each round runs
`trecho eval --fresh --offsets 1` (what `make demo`'s eval compares, computed again) from
the old tree, from this tree as it runs by default (the sample lake has question files:
nothing drawn), and from this tree with `--draw 80` (80 drawn questions beside the
files'), in an order that rotates round by round. A first unrecorded run per side warms
the baseline-vector cache they share. Printed: each run's wall and CPU seconds and the
medians of the per-round ratios to the old tree.

    python bench/eval_draw_cost.py --old e86b651 [--lake data_lake] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import REPO, header, median, rotated
from speed_vs import clean_env, describe, run, source_tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", required=True, help="folder or git revision")
    parser.add_argument("--lake", type=Path, default=REPO / "data_lake")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--draw", type=int, default=80)
    args = parser.parse_args()
    header("eval cost: old, new, new with drawn questions", args)
    lake = args.lake.resolve()
    base = [sys.executable, "-m", "rag_assets.cli", "eval", "--lake", str(lake)]
    base += ["--fresh", "--offsets", "1", "--json"]
    with source_tree(args.old) as old, tempfile.TemporaryDirectory() as tmp:
        sides = {
            "old": (old, base),
            "new": (REPO, base),
            "new+draw": (REPO, [*base, "--draw", str(args.draw)]),
        }
        print(f"old: {describe(old)}  new: {describe(REPO)}  lake: {lake}")
        times: dict[str, list[tuple[float, float]]] = {s: [] for s in sides}
        for side, (tree, cmd) in sides.items():  # warm-up, unrecorded
            wall, _, code = run(cmd, tree, clean_env(tree), Path(tmp) / f"warm-{side}.log")
            print(f"  warm-up {side}: {wall:.1f} s (exit {code})")
            if code:
                raise SystemExit((Path(tmp) / f"warm-{side}.log").read_text()[-2000:])
        for number in range(args.rounds):
            for side in rotated(list(sides), number):
                tree, cmd = sides[side]
                wall, cpu, code = run(cmd, tree, clean_env(tree), Path(tmp) / f"{side}.log")
                if code:
                    raise SystemExit((Path(tmp) / f"{side}.log").read_text()[-2000:])
                times[side].append((wall, cpu))
                print(f"  round {number + 1} {side}: wall {wall:.1f} s, cpu {cpu:.1f} s")
        print("\n| side | wall s (median) | x old (wall) | x old (cpu) |")
        print("|---|---:|---:|---:|")
        for side, runs in times.items():
            walls = [w / times["old"][i][0] for i, (w, _) in enumerate(runs)]
            cpus = [c / times["old"][i][1] for i, (_, c) in enumerate(runs)]
            print(
                f"| {side} | {median([w for w, _ in runs]):.1f} | {median(walls):.2f} | "
                f"{median(cpus):.2f} |"
            )


if __name__ == "__main__":
    main()
