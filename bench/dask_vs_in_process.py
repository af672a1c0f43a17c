"""The index job on a Dask cluster of 2 workers against in-process, on the same lake, side
by side: a local folder, then an object-store lake (a moto S3 server on loopback)
(issue 57, docs/deploy.md).

The same versions (`_scale_lake`, real PDFs rendered from the sample corpus) are copied
into a fresh lake for each executor, so each one indexes every version from nothing.
Each live version's `index_documents` run is started as a deployment's run worker starts
it (`dagster job execute`), `--parallel` runs at a time, with TRECHO_EXECUTOR=in_process
(each run's six steps in its own process) or TRECHO_EXECUTOR=dask (the steps as tasks on
a running cluster of `--workers` workers of one thread each, started before the clock
and shared by every run, its workers' imports done; a cluster per lake, as the
workers' lake is their TRECHO_LAKE). The wall time from the first run's start to the last run's end
is compared: the ratio is dask ÷ in-process, rounds interleaved (A B, then B A).

    python bench/dask_vs_in_process.py                   # 4 versions, 2 at a time, 1 round
    python bench/dask_vs_in_process.py --versions 6 --rounds 2
    python bench/dask_vs_in_process.py --lakes local      # the local folder only
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import header, median  # noqa: E402
from _scale_lake import execute_index_run, layout, write_real_corpus  # noqa: E402
from object_store import s3_server  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MINILM = "all-MiniLM-L6-v2"
BUCKET = "trecho-bench"


def fresh_lake(source: Path, where: str, name: str) -> str:
    """A copy of the lake `source` (its raw/) at a new place: a folder, or a prefix of
    the bucket (`where` = "s3"); its root."""
    if where == "local":
        target = source.parent / name
        shutil.copytree(source / "raw", target / "raw")
        return str(target)
    import boto3

    client = boto3.client("s3")
    for path in sorted(p for p in (source / "raw").rglob("*") if p.is_file()):
        client.upload_file(str(path), BUCKET, f"{name}/{path.relative_to(source).as_posix()}")
    return f"s3://{BUCKET}/{name}"


def run_all(
    lake: str, home: Path, keys: list[str], executor: str, env: dict[str, str], parallel: int
) -> float:
    """Every version's index run on `lake`, `parallel` at a time; the wall seconds."""
    from dagster import DagsterInstance, DagsterRunStatus

    from rag_assets.orchestration.partitions import DOC_VERSIONS

    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(DOC_VERSIONS, keys)
    env = {**env, "DAGSTER_HOME": str(home), "TRECHO_LAKE": lake, "TRECHO_EXECUTOR": executor}
    start = time.perf_counter()
    for i in range(0, len(keys), parallel):
        running = [execute_index_run(k, env) for k in keys[i : i + parallel]]
        for proc in running:
            out, _ = proc.communicate(timeout=3600)
            if proc.returncode != 0:
                raise SystemExit(f"{executor} run failed on {lake}:\n{out[-3000:]}")
    wall = time.perf_counter() - start
    with DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == len(keys) and all(r.status == DagsterRunStatus.SUCCESS for r in runs)
    return wall


def on_cluster(
    workers: int,
    lake: str,
    executor: str,
    home: Path,
    keys: list[str],
    env: dict[str, str],
    parallel: int,
) -> float:
    """`run_all`; for dask, on a cluster started (before the clock) in the lake's
    environment, as a deployment's workers are (their lake is TRECHO_LAKE)."""
    if executor != "dask":
        return run_all(lake, home, keys, executor, env, parallel)
    from dask.distributed import Client, LocalCluster

    os.environ["TRECHO_LAKE"] = lake  # the workers' environment
    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, Client(cluster) as client:
        client.run(lambda: __import__("rag_assets.definitions"))  # imports before the clock
        env = {**env, "TRECHO_DASK_ADDRESS": cluster.scheduler_address}
        return run_all(lake, home, keys, executor, env, parallel)


def main() -> None:
    """Index the same versions in-process and on Dask, per lake kind; print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", type=int, default=4, help="live versions to index")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (1 thread each)")
    parser.add_argument("--parallel", type=int, default=2, help="runs started at a time")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds")
    parser.add_argument("--lakes", default="local,s3", help="local, s3 or both")
    args = parser.parse_args()
    header("the index job: Dask cluster against in-process (bench/dask_vs_in_process.py)", args)
    specs = [s for s in layout(4 * args.versions) if s.live][: args.versions]
    keys = [s.key for s in specs]
    rows = []
    with tempfile.TemporaryDirectory(prefix="trecho-dask-vs-") as tmp, s3_server(None):
        import boto3

        boto3.client("s3").create_bucket(Bucket=BUCKET)
        source = Path(tmp) / "source"
        write_real_corpus(source, specs)
        os.environ.update(TRECHO_MODEL=MINILM, HF_HUB_OFFLINE="1")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        for where in args.lakes.split(","):
            walls: dict[str, list[float]] = {"in_process": [], "dask": []}
            for n in range(args.rounds):
                order = ["in_process", "dask"] if n % 2 == 0 else ["dask", "in_process"]
                for executor in order:
                    name = f"{where}-{executor}-{n}"
                    lake = fresh_lake(source, where, name)
                    home = Path(tmp) / "homes" / name
                    wall = on_cluster(args.workers, lake, executor, home, keys, env, args.parallel)
                    walls[executor].append(wall)
                    print(f"{where:6} {executor:10} round {n + 1}: {wall:6.1f} s", flush=True)
            ratios = [d / i for d, i in zip(walls["dask"], walls["in_process"], strict=True)]
            rows.append((where, median(walls["in_process"]), median(walls["dask"]), median(ratios)))
    print(f"\n{len(keys)} versions, {args.parallel} runs at a time, {args.workers} Dask workers\n")
    print("| lake | in-process (s) | Dask, 2 workers (s) | dask ÷ in-process |")
    print("|---|---:|---:|---:|")
    for where, in_process, dask, ratio in rows:
        print(f"| {where} | {in_process:.1f} | {dask:.1f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
