"""What the Dask executor distributes today: the index job's runs on a local Dask
cluster, and how many tasks (steps) each worker ran (issue 26, docs/deploy.md).

A small real corpus (`_scale_lake`, the sample-corpus renderer) is registered in a
temporary Dagster instance; each live version's `index_documents` run is started the
way a deployment starts it (`dagster job execute`, TRECHO_EXECUTOR=dask,
TRECHO_DASK_ADDRESS the cluster's scheduler), `--parallel` runs at a time; the task
stream of the cluster says which worker ran which step.

    python bench/scale_dask.py                 # 6 versions, 2 workers, 2 runs at a time
    python bench/scale_dask.py --versions 4 --parallel 1
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import header
from _scale_lake import execute_index_run, layout, write_real_corpus

REPO = Path(__file__).resolve().parents[1]
MINILM = "all-MiniLM-L6-v2"


def main() -> None:
    """Run the versions on the cluster and print the tasks per worker."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", type=int, default=6, help="live versions to index")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (1 thread each)")
    parser.add_argument("--parallel", type=int, default=2, help="runs started at a time")
    args = parser.parse_args()
    header("the index job on a local Dask cluster (bench/scale_dask.py)", args)
    from dagster import DagsterInstance, DagsterRunStatus
    from dask.distributed import Client, LocalCluster, get_task_stream

    from rag_assets.orchestration.partitions import DOC_VERSIONS

    specs = [s for s in layout(4 * args.versions) if s.live][: args.versions]
    with tempfile.TemporaryDirectory(prefix="trecho-dask-") as tmp:
        lake, home = Path(tmp) / "lake", Path(tmp) / "home"
        write_real_corpus(lake, specs)
        home.mkdir()
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
        env = {
            **os.environ,
            "DAGSTER_HOME": str(home),
            "TRECHO_LAKE": str(lake),
            "TRECHO_EXECUTOR": "dask",
            "TRECHO_MODEL": MINILM,
            "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": str(REPO),
        }
        os.environ.update({k: env[k] for k in ("DAGSTER_HOME", "TRECHO_LAKE", "TRECHO_MODEL")})
        keys = [s.key for s in specs]
        with DagsterInstance.get() as instance:
            instance.add_dynamic_partitions(DOC_VERSIONS, keys)
            cluster = LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            with cluster, Client(cluster) as client, get_task_stream(client) as stream:
                env["TRECHO_DASK_ADDRESS"] = cluster.scheduler_address
                start = time.perf_counter()
                for i in range(0, len(keys), args.parallel):
                    running = [execute_index_run(k, env) for k in keys[i : i + args.parallel]]
                    for proc in running:
                        out, _ = proc.communicate(timeout=3600)
                        if proc.returncode != 0:
                            raise SystemExit(out[-3000:])
                wall = time.perf_counter() - start
                workers = {
                    w: f"worker {n + 1}" for n, w in enumerate(sorted(client.run(os.getpid)))
                }
            runs = instance.get_runs()
            ok = sum(1 for r in runs if r.status == DagsterRunStatus.SUCCESS)
    tasks = [t for t in stream.data if str(t["key"]).startswith("index_documents.")]
    per_worker = Counter(workers.get(t["worker"], t["worker"]) for t in tasks)
    per_step: dict[str, Counter] = {}
    for t in tasks:
        step = str(t["key"]).split(".")[1]
        per_step.setdefault(step, Counter())[workers.get(t["worker"], t["worker"])] += 1
    busy: Counter = Counter()
    for t in tasks:
        for part in t.get("startstops", ()):
            if part.get("action") == "compute":
                busy[workers.get(t["worker"], t["worker"])] += part["stop"] - part["start"]
    print(f"\n{ok}/{len(runs)} runs succeeded, {len(tasks)} tasks in {wall:.0f} s\n")
    names = sorted(set(workers.values()))
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("| tasks | " + " | ".join(str(per_worker[n]) for n in names) + " |")
    print("| compute seconds | " + " | ".join(f"{busy[n]:.0f}" for n in names) + " |")
    for step, counts in per_step.items():
        print(f"| {step} | " + " | ".join(str(counts[n]) for n in names) + " |")


if __name__ == "__main__":
    main()
