"""ONNX backend ÷ torch backend on the same texts, and the light token counter ÷ a model load.

1. Export: the bundled model exported once (`torch.onnx.export`, dynamo) into a fresh
   cache folder, timed.
2. Agreement: cosine of every ONNX vector with the torch vector of the same text (the
   lake's chunk texts and the probe set), worst / 1st percentile / median.
3. Throughput at batch 32: the same blocks of real chunk texts encoded by
   `SentenceTransformer.encode` and by the ONNX encoder, alternately (A B, then B A),
   block by block; the figure is the median of per-round ratios of texts/s, by wall time
   and by process CPU time.
4. Fresh processes, alternately: time to the first query vector with each backend
   (imports, model or session load, the ONNX probe check, one query).
5. Fresh processes, alternately: time to a ready token counter, light (the tokenizer
   cache: `tokenizers` only) vs a full model load (what the chunks step paid before), and
   whether torch was imported; counts compared on the same texts.

Everything is written to a temporary cache folder (`TRECHO_CACHE_DIR`), deleted at the end.

    python bench/onnx_backend.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CACHE = Path(tempfile.mkdtemp(prefix="trecho-bench-onnx-"))
os.environ["TRECHO_CACHE_DIR"] = str(CACHE)  # before trecho reads it
os.environ.pop("TRECHO_ONNX_DIR", None)

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    REPO,
    clocked,
    header,
    load_chunk_frames,
    median,
    percentile,
    rotated,
    spread,
    timed,
)

from rag_assets.core.embedding import onnx_backend  # noqa: E402
from rag_assets.core.embedding.embedder import (  # noqa: E402
    Embedder,
    model_slug,
    resolve_model_path,
)  # noqa: E402
from rag_assets.core.embedding.model_files import versions  # noqa: E402
from rag_assets.settings import cache_dirs  # noqa: E402

COLD_WORKER = """
import json, sys, time
start = time.perf_counter()
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.settings import cache_dirs
backend = sys.argv[1]
embedder = Embedder(caches=cache_dirs(), model="all-MiniLM-L6-v2", backend=backend)
if backend == "torch":
    embedder.st
else:
    embedder.onnx()
ready = time.perf_counter() - start
embedder.embed_queries(["qual o prazo para desistir da compra?"])
first = time.perf_counter() - start
print(json.dumps({"ready": ready, "first": first, "torch": "torch" in sys.modules}))
"""

COUNTER_WORKER = """
import json, sys, time
start = time.perf_counter()
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.settings import cache_dirs
embedder = Embedder(caches=cache_dirs(), model="all-MiniLM-L6-v2")
if sys.argv[1] == "full":
    from rag_assets.core.embedding.tokens import TokenCounter
    st = embedder.st
    counter = TokenCounter(st.tokenizer, int(st.max_seq_length), embedder.effective_passage_prefix)
else:
    counter = embedder.token_counter()
ready = time.perf_counter() - start
texts = json.loads(sys.stdin.read())
counts = counter.count_many(texts)
print(json.dumps({"ready": ready, "counts": counts, "max": counter.max_tokens,
                  "torch": "torch" in sys.modules}))
"""


def fresh(code: str, arg: str, stdin: str = "") -> dict[str, Any]:
    """Run a worker in a fresh interpreter with this bench's cache; its JSON answer."""
    done = subprocess.run(
        [sys.executable, "-c", code, arg],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def agreement(torch_vecs: np.ndarray, onnx_vecs: np.ndarray) -> dict[str, float]:
    """Worst, 1st percentile and median cosine, and the largest absolute difference."""
    cos = onnx_backend.probe_cosines(onnx_vecs, torch_vecs)
    return {
        "worst": float(cos.min()),
        "p1": percentile(cos.tolist(), 1),
        "median": median(cos.tolist()),
        "max_abs": float(np.abs(onnx_vecs - torch_vecs).max()),
    }


def main() -> None:
    """Run the five sections and print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--rounds", type=int, default=None, help="throughput rounds (4)")
    parser.add_argument("--texts", type=int, default=None, help="texts per round (128)")
    parser.add_argument("--cold", type=int, default=None, help="fresh-process rounds (3)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 4)
    n_texts = args.texts or (64 if args.quick else 128)
    cold = args.cold if args.cold is not None else (1 if args.quick else 3)
    bs = args.batch_size
    header("ONNX backend vs torch backend; light token counter vs model load", args)
    print("onnx libraries: " + ", ".join(versions("onnxruntime", "onnx", "onnxscript")))
    print(f"cache folder (temporary): {CACHE}")

    frames = load_chunk_frames(args.quick)
    texts = [t for f in frames.values() for t in f["text"].to_list()]
    print(f"{len(texts)} chunk texts from {len(frames)} versions")

    torch_emb = Embedder(caches=cache_dirs(), model="all-MiniLM-L6-v2", batch_size=bs)
    load_s, st = timed(lambda: torch_emb.st)
    print(f"torch model loaded in {load_s:.2f}s (this process)")

    print("\n-- 1. export (once per machine)")
    path = Path(resolve_model_path(torch_emb.model))
    export_s, folder = timed(
        lambda: onnx_backend.ensure_export(
            torch_emb.model, path, model_slug(torch_emb.model), lambda: st, cache_dirs()
        )
    )
    meta = json.loads((folder / onnx_backend.META_FILE).read_text())
    size_mb = (folder / onnx_backend.ONNX_FILE).stat().st_size / 1e6
    print(
        f"  export {export_s:.1f}s in all ({meta['export_seconds']:.1f}s in torch.onnx.export, "
        f"the rest the probe vectors and files); model.onnx {size_mb:.1f} MB"
    )
    onnx_emb = Embedder(
        caches=cache_dirs(), model="all-MiniLM-L6-v2", batch_size=bs, backend="onnx"
    )
    load_onnx_s, encoder = timed(onnx_emb.onnx)
    print(f"  ONNX encoder loaded + probe check in {load_onnx_s:.2f}s (this process)")

    print("\n-- 2. agreement with torch (cosine of the two vectors of each text)")
    probe = list(onnx_backend.PROBE_TEXTS)
    probe_a = agreement(np.load(folder / onnx_backend.PROBE_FILE), encoder.encode(probe, bs))
    torch_all = torch_emb.embed_passages(texts)
    onnx_all = onnx_emb.embed_passages(texts)
    chunk_a = agreement(torch_all, onnx_all)
    for name, a in (("probe set", probe_a), (f"{len(texts)} chunk texts", chunk_a)):
        print(
            f"  {name}: worst {a['worst']:.8f}, p1 {a['p1']:.8f}, median {a['median']:.8f}, "
            f"max |Δ| {a['max_abs']:.2e}  (tolerance {onnx_backend.TOLERANCE})"
        )

    print(f"\n-- 3. throughput at batch {bs}: {rounds} rounds of {n_texts} texts, alternating")
    rng = random.Random(args.seed)
    wall: dict[str, list[float]] = {"torch": [], "onnx": []}
    cpu: dict[str, list[float]] = {"torch": [], "onnx": []}
    for r in range(rounds):
        block = rng.sample(texts, min(n_texts, len(texts)))
        for side in rotated(["torch", "onnx"], r):
            emb = torch_emb if side == "torch" else onnx_emb
            w, c, _ = clocked(lambda emb=emb, block=block: emb.embed_passages(block))
            wall[side].append(w)
            cpu[side].append(c)
    ratio_wall = [t / o for t, o in zip(wall["torch"], wall["onnx"], strict=True)]
    ratio_cpu = [t / o for t, o in zip(cpu["torch"], cpu["onnx"], strict=True)]
    tps = {k: n_texts / median(v) for k, v in wall.items()}
    print(
        f"  torch {tps['torch']:.1f} texts/s, onnx {tps['onnx']:.1f} texts/s; RATIO onnx / torch "
        f"texts/s = {spread(ratio_wall)} by wall time, {spread(ratio_cpu)} by CPU time"
    )

    if cold:
        print(f"\n-- 4. fresh processes: time to the first query vector ({cold} rounds)")
        runs: dict[str, list[dict[str, Any]]] = {"torch": [], "onnx": []}
        for r in range(cold):
            for side in rotated(["torch", "onnx"], r):
                runs[side].append(fresh(COLD_WORKER, side))
        first = {k: median([x["first"] for x in v]) for k, v in runs.items()}
        ready = {k: median([x["ready"] for x in v]) for k, v in runs.items()}
        ratios = [t["first"] / o["first"] for t, o in zip(runs["torch"], runs["onnx"], strict=True)]
        print(
            f"  torch: ready {ready['torch']:.2f}s, first vector {first['torch']:.2f}s; onnx "
            f"(probe check included): ready {ready['onnx']:.2f}s, first vector "
            f"{first['onnx']:.2f}s; torch imported by onnx: "
            f"{any(x['torch'] for x in runs['onnx'])}"
        )
        print(f"  RATIO torch / onnx time to first vector = {spread(ratios)}")

        print(f"\n-- 5. fresh processes: time to a ready token counter ({cold} rounds)")
        sample = json.dumps(rng.sample(texts, min(200, len(texts))))
        counts: dict[str, list[dict[str, Any]]] = {"light": [], "full": []}
        for r in range(cold):
            for side in rotated(["light", "full"], r):
                counts[side].append(fresh(COUNTER_WORKER, side, sample))
        same = all(
            x["counts"] == counts["full"][0]["counts"] and x["max"] == counts["full"][0]["max"]
            for x in counts["light"] + counts["full"]
        )
        ready_c = {k: median([x["ready"] for x in v]) for k, v in counts.items()}
        pairs = zip(counts["light"], counts["full"], strict=True)
        ratios_c = [light["ready"] / full["ready"] for light, full in pairs]
        print(
            f"  light {ready_c['light']:.2f}s (torch imported: "
            f"{any(x['torch'] for x in counts['light'])}), full model load "
            f"{ready_c['full']:.2f}s; same counts and max_tokens on 200 texts: {same}"
        )
        print(f"  RATIO light / full time to a ready counter = {spread(ratios_c)}")

    print("\n-- summary")
    print(
        f"  export once {export_s:.1f}s; worst cosine {min(probe_a['worst'], chunk_a['worst']):.8f}"
        f", median {chunk_a['median']:.8f} (tolerance {onnx_backend.TOLERANCE})"
    )
    print(
        f"  onnx / torch throughput at batch {bs}: wall {median(ratio_wall):.2f}, "
        f"CPU {median(ratio_cpu):.2f}"
    )


if __name__ == "__main__":
    start = time.perf_counter()
    try:
        main()
    finally:
        shutil.rmtree(CACHE, ignore_errors=True)
        print(f"(bench wall time {time.perf_counter() - start:.0f}s)")
