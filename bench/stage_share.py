"""Where a cold run's time goes, stage by stage, from the Dagster instance's step stats.

Reads the latest successful `index_documents` run of every partition in a Dagster home
(default: the sample lake's, `data_lake/.dagster`, as `trecho materialize` leaves it) and
prints each stage's share of the summed step time: what parallel extraction across
versions could save at most, next to what embedding costs. Usage::

    trecho materialize --force          # a full run to measure (optional)
    python bench/stage_share.py         # or --home PATH for another instance
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import LAKE, header  # noqa: E402

from rag_assets.core.stages import CHUNKS, EMBEDDINGS, EXTRACTION  # noqa: E402


def step_seconds(home: Path) -> dict[str, dict[str, float]]:
    """Partition key -> step -> seconds, from each partition's latest successful run."""
    os.environ["DAGSTER_HOME"] = str(home.resolve())
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    instance = DagsterInstance.get()
    done = RunsFilter(job_name="index_documents", statuses=[DagsterRunStatus.SUCCESS])
    out: dict[str, dict[str, float]] = {}
    for run in instance.get_runs(done, limit=500):  # newest first
        key = run.tags.get("dagster/partition")
        if key is None or key in out:
            continue
        out[key] = {
            s.step_key: s.end_time - s.start_time
            for s in instance.get_run_step_stats(run.run_id)
            if s.start_time and s.end_time
        }
    return out


def main() -> None:
    """Print per-version step times and the share of each group of stages."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, default=LAKE / ".dagster")
    args = parser.parse_args()
    header("share of each stage in the latest index run of every version", args)
    runs = step_seconds(args.home)
    if not runs:
        raise SystemExit(f"{args.home}: no successful index_documents run; materialize first")
    groups = {"extraction (raw_pdf..linearized_tables)": 0.0, CHUNKS: 0.0, EMBEDDINGS: 0.0}
    for key, steps in sorted(runs.items()):
        extraction = sum(v for k, v in steps.items() if k in EXTRACTION)
        groups["extraction (raw_pdf..linearized_tables)"] += extraction
        groups[CHUNKS] += steps.get(CHUNKS, 0.0)
        groups[EMBEDDINGS] += steps.get(EMBEDDINGS, 0.0)
        shown = ", ".join(f"{k} {v:.1f}" for k, v in steps.items())
        print(f"{key:28} {shown}")
    total = sum(groups.values())
    print(f"\n{len(runs)} versions, {total:.1f} s of steps in all")
    for name, seconds in groups.items():
        print(f"  {name:42} {seconds / total:6.1%}")
    share = groups["extraction (raw_pdf..linearized_tables)"] / total
    print(f"extraction on 2 cores instead of 1 would save at most {share / 2:.1%} of the run")


if __name__ == "__main__":
    main()
