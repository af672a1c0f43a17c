"""`trecho serve` latency and throughput, against a cold `trecho search` and in-process search.

At each size (synthetic chunks scaled up from the real ones, as bench/search_latency.py
builds them, with the indexes the product builds: full-text always, IVF_HNSW_SQ from
50k rows), a real `trecho serve` subprocess on a free loopback port answers over HTTP:

1. served `POST /search` vs `Index.search` in this process (the same table, k=10), per
   mode (vector, fts, hybrid; query embedding included on both sides), query by query in
   rotated order: p50/p95 of each, and the median of paired ratios (HTTP + JSON cost);
2. throughput: every query once per client, 8 concurrent clients (threads, one HTTP
   request at a time each) against 1 client, hybrid: queries/s and failed requests;
3. (first size only) a cold `trecho search --json` process per query against a served
   request for the same query, alternately: the per-query cost a service removes;
4. where `Index.search` spends its time (in this process, per query): embedding the query,
   the vector query (pre-embedded) and the full-text query, each with the search filter
   and without it, and hybrid as it ran before this change (embed, then vector, then
   full-text, one after the other, always filtered) against `Index.search` now (full-text
   on another thread meanwhile, no filter when it would keep every row), alternately,
   with the count of queries whose hits (ids and scores) are identical.

Client and server share the machine's cores, as they would on one host.

    python bench/serve.py [--quick] [--sizes 10000,100000] [--clients 8] [--tables DIR]

`--tables DIR` keeps the synthetic tables and reuses them on the next run (building the
vector index at 100k takes 40 s on an idle machine, over 10 minutes on a loaded one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import lancedb
from _common import REPO, header, median, percentile, rotated, timed
from search_latency import load_queries, real_source, synthesize

from rag_assets.core import search
from rag_assets.core.embedding import Embedder
from rag_assets.core.search import Index, Mode
from rag_assets.serve import query_threads

MODES: tuple[Mode, ...] = ("vector", "fts", "hybrid")
K = 10
SIDES = ("hybrid before", "hybrid now")


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    """One JSON POST: (status, answer)."""
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def start_server(lake: Path, uri: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`trecho serve` on the synthetic table; returns once it answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "rag_assets.cli", "serve", "--lake", str(lake), "--db", uri]
        + ["--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=env,
        cwd=REPO,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(log.read_text())
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
                return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError("server did not start")


def build(size: int, src: Any, embedder: Embedder, folder: Path, seed: int) -> tuple[str, Index]:
    """A table of `size` synthetic chunks with the indexes the product would give it
    (reused when `folder` already holds it: `--tables`)."""
    uri = str(folder / f"t{size}")
    index = Index(uri, embedder)
    if index.exists() and index.index_stats().rows == size:
        print(f"  {size}: reused {uri}: {index.index_stats().summary()}")
        return uri, index
    data = synthesize(src, size, 0.02, seed + size)
    lancedb.connect(uri).create_table(index.table_name, data, mode="overwrite")
    index.build_fts_index()
    done = index.update_indexes()
    print(f"  {size}: built ({'; '.join(done) or 'no vector index'}): ", end="")
    print(index.index_stats().summary())
    return uri, index


def latency(url: str, index: Index, queries: list[str]) -> dict[str, dict[Mode, list[float]]]:
    """Served vs in-process, every (side, mode) pair per query in rotated order."""
    pairs = [(side, mode) for mode in MODES for side in ("served", "direct")]
    out: dict[str, dict[Mode, list[float]]] = {"served": {}, "direct": {}}
    for side, mode in pairs:
        out[side][mode] = []
    for step, q in enumerate(queries):
        for side, mode in rotated(pairs, step):
            if side == "served":
                t, (status, _) = timed(
                    lambda q=q, m=mode: post(url + "/search", {"query": q, "k": K, "mode": m})
                )
                assert status == 200, status
            else:
                t, _ = timed(lambda q=q, m=mode: index.search(q, K, m))
            out[side][mode].append(t)
    return out


def throughput(url: str, queries: list[str], clients: int) -> tuple[float, int, int]:
    """Every client sends every query once (hybrid): queries/s, requests, failures."""

    def client(offset: int) -> list[int]:
        mine = queries[offset:] + queries[:offset]
        return [post(url + "/search", {"query": q, "k": K})[0] for q in mine]

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        statuses = [s for got in pool.map(client, range(clients)) for s in got]
    elapsed = time.perf_counter() - start
    return len(statuses) / elapsed, len(statuses), sum(s != 200 for s in statuses)


def cold(url: str, lake: Path, uri: str, queries: list[str]) -> list[tuple[float, float]]:
    """A fresh `trecho search --json` process vs a served request, per query, alternately."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    out = []
    for i, q in enumerate(queries):
        command = [sys.executable, "-m", "rag_assets.cli", "search", q, "-k", str(K)]
        command += ["--json", "--lake", str(lake), "--db", uri]

        def run_cold(command: list[str] = command) -> None:
            subprocess.run(command, check=True, capture_output=True, env=env, cwd=REPO)

        def run_served(q: str = q) -> None:
            assert post(url + "/search", {"query": q, "k": K})[0] == 200

        sides = [run_cold, run_served] if i % 2 == 0 else [run_served, run_cold]
        times = {f.__name__: timed(f)[0] for f in sides}
        out.append((times["run_cold"], times["run_served"]))
    return out


def sequential_hybrid(index: Index, query: str) -> list[Any]:
    """Hybrid search as `Index.search` ran it before: embed, vector, full-text, fuse."""
    tbl = index._open()
    where = Index.filter_sql(None, None, dt.date.today(), False)
    n = max(search.CANDIDATES_PER_K * K, search.MIN_CANDIDATES)
    vector = index.embedder.embed_queries([query])[0]
    ranked = {
        "vector": index._vector(tbl, vector, where, n, False),
        "fts": index._fts(tbl, query, where, n, False),
    }
    return search._rrf(ranked, K)


def breakdown(index: Index, queries: list[str]) -> dict[str, list[float]]:
    """Per query: each part of a search alone, and hybrid before vs now (see the doc)."""
    tbl = index._open()
    where = Index.filter_sql(None, None, dt.date.today(), False)
    n = max(search.CANDIDATES_PER_K * K, search.MIN_CANDIDATES)
    vectors = index.embedder.embed_queries(queries)
    parts: dict[str, Any] = {
        "open the table": lambda i: index._open(),
        "embed the query": lambda i: index.embedder.embed_queries([queries[i]]),
        "vector query, filtered": lambda i: index._vector(tbl, vectors[i], where, n, False),
        "vector query, no filter": lambda i: index._vector(tbl, vectors[i], None, n, False),
        "full-text query, filtered": lambda i: index._fts(tbl, queries[i], where, n, False),
        "full-text query, no filter": lambda i: index._fts(tbl, queries[i], None, n, False),
        "hybrid before": lambda i: sequential_hybrid(index, queries[i]),
        "hybrid now": lambda i: index.search(queries[i], K),
    }
    out: dict[str, list[float]] = {name: [] for name in parts}
    out["identical"] = []
    for i in range(len(queries)):
        hits = {}
        for name in rotated(list(parts), i):
            t, hits[name] = timed(lambda f=parts[name], i=i: f(i))
            out[name].append(t)
        ids = [
            [(h.chunk_id, round(h.score, 6)) for h in hits[s]]
            for s in ("hybrid before", "hybrid now")
        ]
        out["identical"].append(float(ids[0] == ids[1]))
    return out


def ms(values: list[float], q: float) -> str:
    """A percentile in milliseconds."""
    return f"{percentile(values, q) * 1e3:.1f}"


def main() -> None:
    """Build each size, start the server, measure, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k chunks, 12 queries")
    parser.add_argument("--sizes", default=None, help="comma-separated (10000,100000)")
    parser.add_argument("--queries", type=int, default=None, help="queries (40)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--cold", type=int, default=4, help="cold `trecho search` processes")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--tables", default=None, help="keep the tables in this folder and reuse them"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("5000" if args.quick else "10000,100000")).split(",")]
    n_queries = args.queries or (12 if args.quick else 40)
    header("trecho serve: served vs in-process vs cold process; throughput", args)
    query_threads(1)  # as `trecho serve` runs: one torch thread per query, idle threads sleep
    embedder = Embedder()
    src = real_source(embedder)
    queries = load_queries(src, n_queries, args.seed)
    print(f"real chunks: {src.rows.num_rows} ({src.origin}); queries: {len(queries)}")
    workdir = Path(tempfile.mkdtemp(prefix="trecho-bench-serve-"))
    lake = workdir / "lake"
    (lake / "raw").mkdir(parents=True)
    rows = []
    try:
        for n, size in enumerate(sizes):
            tables = Path(args.tables) if args.tables else workdir
            uri, index = build(size, src, embedder, tables, args.seed)
            process, url = start_server(lake, uri, workdir / f"serve{size}.log")
            try:
                for q in queries[:3]:  # warm-up, both sides
                    post(url + "/search", {"query": q, "k": K})
                    index.search(q, K)
                lat = latency(url, index, queries)
                one = throughput(url, queries, 1)
                many = throughput(url, queries, args.clients)
                pairs = cold(url, lake, uri, queries[: args.cold]) if n == 0 else []
                parts = breakdown(index, queries)
            finally:
                process.terminate()
                process.wait(timeout=30)
            rows.append((size, lat, one, many, pairs, parts))
            if not args.tables:
                shutil.rmtree(uri, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"\n-- latency, k={K}, query embedding included (ms)")
    print(
        "| chunks | mode | served p50 | served p95 | in-process p50 | in-process p95 "
        "| served / in-process (p50 of ratios) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    for size, lat, *_ in rows:
        for mode in MODES:
            s, d = lat["served"][mode], lat["direct"][mode]
            ratio = median([a / b for a, b in zip(s, d, strict=True)])
            print(
                f"| {size} | {mode} | {ms(s, 50)} | {ms(s, 95)} | {ms(d, 50)} | {ms(d, 95)} "
                f"| {ratio:.2f} |"
            )
    print(f"\n-- throughput, hybrid, {args.clients} concurrent clients vs 1")
    print("| chunks | 1 client q/s | N clients q/s | ratio | requests | failed |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, _, one, many, *_ in rows:
        print(
            f"| {size} | {one[0]:.1f} | {many[0]:.1f} | {many[0] / one[0]:.2f} | "
            f"{one[1] + many[1]} | {one[2] + many[2]} |"
        )
    for size, *_, pairs, _ in rows:
        if pairs:
            ratio = median([c / s for c, s in pairs])
            print(
                f"\n-- cold `trecho search` process vs served, per query ({size} chunks, "
                f"{len(pairs)} queries): cold p50 {median([c for c, _ in pairs]):.2f} s, "
                f"served p50 {median([s for _, s in pairs]) * 1e3:.1f} ms: "
                f"**{ratio:.0f}x** (median of paired ratios)"
            )

    print("\n-- where Index.search spends its time, hybrid before vs now (p50 ms, in-process)")
    print("| chunks | part | p50 | p95 |")
    print("|---:|---|---:|---:|")
    for size, *_, parts in rows:
        for name, values in parts.items():
            if name != "identical":
                print(f"| {size} | {name} | {ms(values, 50)} | {ms(values, 95)} |")
        before, now = parts["hybrid before"], parts["hybrid now"]
        speed = median([b / a for a, b in zip(now, before, strict=True)])
        same = int(sum(parts["identical"]))
        print(
            f"| {size} | hybrid before / now (p50 of ratios) | {speed:.2f}x | "
            f"identical hits {same}/{len(now)} |"
        )


if __name__ == "__main__":
    main()
