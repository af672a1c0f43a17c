"""Embed stage throughput ÷ raw `SentenceTransformer.encode`, and what moves encode speed.

1. What the embeddings asset does per version (`embed_cached` with a fresh, empty cache,
   then `Index.upsert_partition` into a temporary LanceDB, indexes kept current) is
   timed against a bare `encode` of the same texts, by the same loaded model, at the same
   batch size; the sides alternate (A B, then B A) version by version, and the ratio is
   the median of per-round ratios, by wall time and by process CPU time.
2. Sorting by length: encode's own batches are recorded to check that
   sentence-transformers sorts internally, then encode is timed against no sorting.
3. Batch sizes 16/32/64/128, relative to the product's 32, block by block.
4. Fresh processes, alternately with torch's default threads and with one: import +
   model load (what every Dagster step process pays), batch and single-query speed.

    python bench/embed_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _common import REPO, clocked, header, load_chunk_frames, median, rotated, spread, timed

from rag_assets.core.embedding.embedder import MINILM, Embedder
from rag_assets.core.index import Index, Stamp
from rag_assets.core.index.cache import EmbeddingCache, embed_cached


@dataclass
class TimedEmbedder(Embedder):
    """The product's Embedder, adding up the seconds spent in `embed_passages`."""

    encode_seconds: float = 0.0

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Same as Embedder.embed_passages, timed."""
        start = time.perf_counter()
        out = super().embed_passages(texts)
        self.encode_seconds += time.perf_counter() - start
        return out


@dataclass
class StageTimes:
    """One version through the embed stage: where the seconds went."""

    total: float
    encode: float
    cache: float  # hashing, cache lookup and cache write (embed_cached minus encode)
    merge: float  # Index.upsert_partition without the index upkeep
    fts: float  # the index upkeep upsert_partition does by default (update_indexes)
    embedded: int
    vectors: np.ndarray


def run_stage(embedder: TimedEmbedder, uri: str, key: str, frame: Any) -> StageTimes:
    """One version through the embed stage, as the embeddings asset runs it.

    `upsert_partition(rebuild_fts=False)` followed by `update_indexes()` is exactly what
    `upsert_partition()` does by default (the full-text index built on the first version,
    then updated once enough rows wait); split in two only to time each part.
    """
    embedder.encode_seconds = 0.0
    start = time.perf_counter()
    cache = EmbeddingCache(uri, embedder)
    index = Index(uri, embedder)
    vectors, stats = embed_cached(embedder, cache, frame["text"].to_list())
    t_cached = time.perf_counter()
    index.upsert_partition(key, frame, vectors, Stamp("active", title=key), rebuild_fts=False)
    t_merged = time.perf_counter()
    index.update_indexes()
    end = time.perf_counter()
    return StageTimes(
        total=end - start,
        encode=embedder.encode_seconds,
        cache=(t_cached - start) - embedder.encode_seconds,
        merge=t_merged - t_cached,
        fts=end - t_merged,
        embedded=stats.misses,
        vectors=vectors,
    )


def raw_encode(st: Any, texts: list[str], batch_size: int) -> np.ndarray:
    """The baseline: one bare encode call with the product's arguments."""
    return st.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )


def stage_vs_raw(
    frames: dict[str, Any], embedder: TimedEmbedder, rounds: int, workdir: Path
) -> dict[str, Any]:
    """Section 1: the embed stage against raw encode, version by version, interleaved."""
    st = embedder.st
    bs = embedder.batch_size
    n_texts = sum(f.height for f in frames.values())
    n_unique = len({t for f in frames.values() for t in f["text"].to_list()})
    print(
        f"\n-- 1. embed stage vs raw encode: {len(frames)} versions, {n_texts} chunk texts "
        f"({n_unique} distinct), batch size {bs}, {rounds} rounds"
    )
    wall: dict[str, list[float]] = {"raw": [], "stage": []}
    cpu: dict[str, list[float]] = {"raw": [], "stage": []}
    parts: dict[str, list[float]] = {"encode": [], "cache": [], "merge": [], "fts": []}
    fixed: dict[str, list[float]] = {k: [] for k in frames}  # non-encode seconds per version
    max_diff = 0.0
    for r in range(rounds):
        sums = {"raw": [0.0, 0.0], "stage": [0.0, 0.0]}
        round_parts = dict.fromkeys(parts, 0.0)
        uri = tempfile.mkdtemp(prefix=f"stage{r}-", dir=workdir)  # a fresh, empty cache
        for i, (key, frame) in enumerate(frames.items()):
            texts = frame["text"].to_list()
            order = ("raw", "stage") if (r + i) % 2 == 0 else ("stage", "raw")
            for side in order:
                if side == "raw":
                    w, c, raw_vecs = clocked(lambda texts=texts: raw_encode(st, texts, bs))
                else:
                    w, c, stage = clocked(
                        lambda key=key, frame=frame, uri=uri: run_stage(embedder, uri, key, frame)
                    )
                sums[side][0] += w
                sums[side][1] += c
            max_diff = max(max_diff, float(np.abs(stage.vectors - raw_vecs).max()))
            for name in parts:
                round_parts[name] += getattr(stage, name)
            fixed[key].append(stage.total - stage.encode)
        shutil.rmtree(uri, ignore_errors=True)
        for side in sums:
            wall[side].append(sums[side][0])
            cpu[side].append(sums[side][1])
        for name in parts:
            parts[name].append(round_parts[name])
        print(
            f"  round {r + 1}: raw {sums['raw'][0]:.2f}s, stage {sums['stage'][0]:.2f}s wall; "
            f"stage/raw throughput {sums['raw'][0] / sums['stage'][0]:.3f} by wall time, "
            f"{sums['raw'][1] / sums['stage'][1]:.3f} by CPU time"
        )
    by_wall = [a / b for a, b in zip(wall["raw"], wall["stage"], strict=True)]
    by_cpu = [a / b for a, b in zip(cpu["raw"], cpu["stage"], strict=True)]
    overhead = [s - e for s, e in zip(wall["stage"], parts["encode"], strict=True)]
    direct = [r / (r + o) for r, o in zip(wall["raw"], overhead, strict=True)]
    raw_s, stage_s = median(wall["raw"]), median(wall["stage"])
    print(f"  raw encode: {n_texts / raw_s:.1f} texts/s; embed stage: {n_texts / stage_s:.1f}")
    print(f"  RATIO embed stage throughput / raw encode, by wall time = {spread(by_wall)}")
    print(f"  RATIO embed stage throughput / raw encode, by CPU time  = {spread(by_cpu)}")
    print(
        f"  RATIO raw / (raw + the stage's non-encode seconds)       = {spread(direct)}  "
        "(timed inside the stage call: the least exposed to load drift)"
    )
    encode_ratio = [e / r for e, r in zip(parts["encode"], wall["raw"], strict=True)]
    print(f"  encode inside the stage / raw encode, wall = {spread(encode_ratio)} (1.00: same)")
    print(f"  vectors: stage vs raw max |diff| {max_diff:.2e}")
    print("  where the stage's time goes (median seconds per round, share of the stage):")
    labels = {
        "encode": "encode (embed_passages)",
        "cache": "hash + cache lookup/write",
        "merge": "LanceDB merge_insert",
        "fts": "index upkeep (update_indexes)",
    }
    for name, label in labels.items():
        value = median(parts[name])
        print(f"    {label:<28} {value:7.2f}s  {value / stage_s:6.1%}")
    per_version = {k: median(v) for k, v in fixed.items()}
    print(
        "  non-encode seconds per version: "
        + ", ".join(f"{k} ({frames[k].height} texts) {v:.3f}s" for k, v in per_version.items())
    )
    return {
        "ratio_wall": median(by_wall),
        "ratio_cpu": median(by_cpu),
        "ratio_direct": median(direct),
        "raw_tps": n_texts / raw_s,
        "fixed": per_version,
        "stage_per_version": {
            k: frames[k].height / (n_texts / raw_s) + per_version[k] for k in frames
        },
    }


def record_batches(st: Any, texts: list[str], batch_size: int) -> list[list[str]] | None:
    """The batches encode actually forms (by wrapping the model's preprocess step)."""
    name = "preprocess" if hasattr(st, "preprocess") else "tokenize"
    original = getattr(st, name)
    seen: list[list[str]] = []

    def spy(inputs: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append([t if isinstance(t, str) else str(t) for t in inputs])
        return original(inputs, *args, **kwargs)

    setattr(st, name, spy)
    try:
        raw_encode(st, texts, batch_size)
    finally:
        delattr(st, name)
    return seen or None


def padding_share(st: Any, batches: list[list[str]]) -> float:
    """Padded token positions / real tokens, for batches of texts."""
    tok = st.tokenizer
    limit = int(st.max_seq_length)
    real = padded = 0
    for batch in batches:
        lengths = [min(limit, len(tok(t)["input_ids"])) for t in batch]
        real += sum(lengths)
        padded += max(lengths) * len(lengths)
    return padded / real - 1.0


def blocks_of(sample: list[str], size: int) -> list[list[str]]:
    """The sample cut into whole blocks of `size` texts (at least one block)."""
    n = max(1, len(sample) // size)
    return [sample[i * size : (i + 1) * size] for i in range(n)]


def paired(
    variants: dict[str, Callable[[list[str]], Any]], blocks: list[list[str]], rounds: int
) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU seconds of each variant on each block, variants rotated per block."""
    out = {name: {"wall": [], "cpu": []} for name in variants}
    step = 0
    for _ in range(rounds):
        for block in blocks:
            for name in rotated(list(variants), step):
                w, c, _ = clocked(lambda name=name, block=block: variants[name](block))
                out[name]["wall"].append(w)
                out[name]["cpu"].append(c)
            step += 1
    return out


def relative(
    times: dict[str, dict[str, list[float]]], base: str, name: str, clock: str
) -> list[float]:
    """Throughput of `name` relative to `base`, pair by pair."""
    return [b / v for b, v in zip(times[base][clock], times[name][clock], strict=True)]


def sorting(st: Any, sample: list[str], batch_size: int, rounds: int) -> dict[str, float]:
    """Section 2: does sorting texts by length before batching matter?"""
    blocks = blocks_of(sample, 3 * batch_size)
    print(
        f"\n-- 2. sorting by length: blocks of {3 * batch_size} texts in random order, "
        f"batch size {batch_size}, {len(blocks)} blocks x {rounds} rounds"
    )
    block = blocks[0]
    batches = record_batches(st, block, batch_size)
    same = False
    if batches is None:
        print("  could not observe encode's batches (no preprocess/tokenize hook)")
    else:
        presorted = record_batches(st, sorted(block, key=len, reverse=True), batch_size)
        same = presorted is not None and [sorted(b) for b in batches] == [
            sorted(b) for b in presorted
        ]
        lengths = [[len(t) for t in b] for b in batches]
        sorts = all(min(a) >= max(b) for a, b in zip(lengths, lengths[1:], strict=False))
        print(
            f"  verified by recording encode's batches: sentence-transformers "
            f"{'SORTS' if sorts else 'does NOT sort'} texts by length (characters, longest "
            "first) before cutting batches; pre-sorted input gives "
            f"{'the SAME batches (pre-sorting is a no-op)' if same else 'DIFFERENT batches'}"
        )
        unsorted = [block[i : i + batch_size] for i in range(0, len(block), batch_size)]
        print(
            f"  padded / real tokens - 1: encode's own batches {padding_share(st, batches):.1%}, "
            f"batches in input order {padding_share(st, unsorted):.1%}"
        )

    def own_sorting(texts: list[str]) -> Any:
        return raw_encode(st, texts, batch_size)

    def no_sorting(texts: list[str]) -> Any:
        for i in range(0, len(texts), batch_size):
            raw_encode(st, texts[i : i + batch_size], batch_size)

    names = {"sorted": "encode as is (sorts inside)", "unsorted": "no sorting (a call per batch)"}
    times = paired({"sorted": own_sorting, "unsorted": no_sorting}, blocks, rounds)
    n = len(blocks[0])
    for key, label in names.items():
        w = relative(times, "sorted", key, "wall")
        c = relative(times, "sorted", key, "cpu")
        print(
            f"  {label:<32} {n / median(times[key]['wall']):6.1f} texts/s; throughput vs "
            f"encode as is: wall {spread(w)}, CPU {spread(c)}"
        )
    return {
        "presort_same": float(same),
        "unsorted_wall": median(relative(times, "sorted", "unsorted", "wall")),
        "unsorted_cpu": median(relative(times, "sorted", "unsorted", "cpu")),
    }


def batch_sweep(
    st: Any, sample: list[str], sizes: list[int], rounds: int, base: int
) -> dict[int, tuple[float, float]]:
    """Section 3: texts/s per batch size, relative to `base`, block by block."""
    blocks = blocks_of(sample, max(sizes))
    print(
        f"\n-- 3. batch size sweep: sizes {sizes} on blocks of {len(blocks[0])} texts, "
        f"{len(blocks)} blocks x {rounds} rounds"
    )
    ordered = [sorted(b, key=len, reverse=True) for b in blocks]  # encode's own order
    padding = {
        bs: padding_share(st, [o[i : i + bs] for o in ordered for i in range(0, len(o), bs)])
        for bs in sizes
    }
    variants = {str(bs): (lambda texts, bs=bs: raw_encode(st, texts, bs)) for bs in sizes}
    times = paired(variants, blocks, rounds)
    out: dict[int, tuple[float, float]] = {}
    for bs in sizes:
        w = relative(times, str(base), str(bs), "wall")
        c = relative(times, str(base), str(bs), "cpu")
        out[bs] = (median(w), median(c))
        print(
            f"  batch {bs:4d}: {len(blocks[0]) / median(times[str(bs)]['wall']):6.1f} texts/s; "
            f"throughput vs batch {base}: wall {spread(w)}, CPU {spread(c)}; "
            f"padding {padding[bs]:.1%}"
        )
    return out


WORKER = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    import sentence_transformers, torch
    t1 = time.perf_counter()
    if int(sys.argv[1]):
        torch.set_num_threads(int(sys.argv[1]))
    from rag_assets.core.embedding.embedder import Embedder
    embedder = Embedder(model=MINILM)
    st = embedder.st
    t2 = time.perf_counter()
    job = json.load(sys.stdin)
    bs = job["batch_size"]
    args = dict(normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    st.encode(job["blocks"][0][:2], batch_size=bs, **args)  # warm-up
    batch = []
    for block in job["blocks"]:
        start = time.perf_counter()
        st.encode(block, batch_size=bs, **args)
        batch.append(time.perf_counter() - start)
    single = []
    for query in job["queries"]:
        start = time.perf_counter()
        embedder.embed_queries([query])
        single.append(time.perf_counter() - start)
    print(json.dumps({"import": t1 - t0, "load": t2 - t1, "batch": batch, "single": single,
                      "threads": torch.get_num_threads()}))
    """
)


def fresh_processes(
    rounds: int,
    sample: list[str],
    batch_size: int,
    stage_s: dict[str, float],
    sizes: dict[str, int],
) -> dict[str, float]:
    """Section 4: fresh processes, alternately with torch's default threads and with one.

    Each one reports its import and model load (what every Dagster step process pays),
    then encodes the same blocks and embeds the same single queries. Thread counts are
    compared across processes because switching them inside one process leaves torch
    slower afterwards."""
    default = torch.get_num_threads()
    blocks = blocks_of(sample, 2 * batch_size)[:2]
    queries = [" ".join(t.split()[:8]) for t in sample[:20]]
    job = json.dumps({"blocks": blocks, "queries": queries, "batch_size": batch_size})
    print(
        f"\n-- 4. fresh processes: cold start, and torch {default} threads vs 1 ({rounds} "
        f"rounds of 2 processes; each encodes {len(blocks)} blocks of {len(blocks[0])} texts "
        f"and embeds {len(queries)} single queries)"
    )
    runs: dict[int, list[dict[str, Any]]] = {default: [], 1: []}
    for r in range(rounds):
        for n in rotated([default, 1], r):
            done = subprocess.run(
                [sys.executable, "-c", WORKER, str(n)],
                input=job,
                capture_output=True,
                text=True,
                cwd=REPO,
                check=True,
            )
            runs[n].append(json.loads(done.stdout.strip().splitlines()[-1]))
    every = runs[default] + runs[1]
    cold = median([x["import"] + x["load"] for x in every])
    print(
        f"  cold start {cold:.2f}s: import torch + sentence-transformers "
        f"{median([x['import'] for x in every]):.2f}s, model load "
        f"{median([x['load'] for x in every]):.2f}s"
    )
    biggest = max(stage_s, key=lambda k: sizes[k])
    typical = median(list(stage_s.values()))
    print(
        f"  RATIO cold start / embed stage of {biggest} ({sizes[biggest]} texts) = "
        f"{cold / stage_s[biggest]:.2f}; / median version's stage = {cold / typical:.2f}  "
        "(whole versions' stage times, from section 1's rate and fixed costs)"
    )
    print(
        "  (Dagster's multiprocess executor runs every step in its own process: the chunks "
        "and the embeddings steps each pay this, per version; `trecho materialize` runs "
        "in-process and pays it once)"
    )
    batch = [sum(a["batch"]) / sum(b["batch"]) for a, b in zip(runs[default], runs[1], strict=True)]
    single = [
        median(a["single"]) / median(b["single"])
        for a, b in zip(runs[default], runs[1], strict=True)
    ]
    n_texts = sum(len(b) for b in blocks)
    print(
        f"  batch encode: 1 thread {n_texts / median([sum(x['batch']) for x in runs[1]]):.1f} "
        f"texts/s, {default} threads "
        f"{n_texts / median([sum(x['batch']) for x in runs[default]]):.1f}; RATIO 1 thread / "
        f"{default} threads throughput = {spread(batch)}"
    )
    print(
        f"  one query: 1 thread p50 {median([median(x['single']) for x in runs[1]]) * 1e3:.1f} "
        f"ms, {default} threads "
        f"{median([median(x['single']) for x in runs[default]]) * 1e3:.1f} ms; RATIO speed of "
        f"1 thread / {default} threads = {spread(single)}"
    )
    return {"cold": cold / typical, "batch": median(batch), "single": median(single)}


def main() -> None:
    """Run the four sections and print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run, well under a minute")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of section 1 (4)")
    parser.add_argument("--max-texts", type=int, default=None, help="texts per version (48)")
    parser.add_argument("--block-rounds", type=int, default=None, help="rounds of §2, 3, 5 (2)")
    parser.add_argument("--batch-size", type=int, default=None, help="default: Embedder's")
    parser.add_argument("--sample", type=int, default=None, help="texts for sections 2-3 (256)")
    parser.add_argument("--sizes", default=None, help="batch sizes, e.g. 16,32,64,128")
    parser.add_argument(
        "--cold", type=int, default=None, help="rounds of fresh processes (2; 0 = skip)"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 4)
    max_texts = args.max_texts or (8 if args.quick else 48)
    block_rounds = args.block_rounds or (1 if args.quick else 2)
    sample_n = args.sample or (48 if args.quick else 256)
    sizes_arg = args.sizes or ("16,32" if args.quick else "16,32,64,128")
    sizes = [int(s) for s in sizes_arg.split(",")]
    cold = args.cold if args.cold is not None else (0 if args.quick else 2)
    header("embed stage throughput vs raw SentenceTransformer.encode", args)

    all_frames = load_chunk_frames(args.quick)
    chosen = all_frames
    if args.quick:
        chosen = dict(sorted(all_frames.items(), key=lambda kv: kv[1].height)[:2])
    frames = {k: f.head(max_texts) for k, f in chosen.items()}
    embedder = TimedEmbedder(model=MINILM)
    if args.batch_size:
        embedder.batch_size = args.batch_size
    load_s, st = timed(lambda: embedder.st)
    print(f"model loaded in {load_s:.2f}s (in this process, once)")
    print(f"each version capped at its first {max_texts} chunks (--max-texts)")
    all_texts = [t for f in frames.values() for t in f["text"].to_list()]
    raw_encode(st, all_texts[:16], embedder.batch_size)  # warm-up

    workdir = Path(tempfile.mkdtemp(prefix="trecho-bench-embed-"))
    try:
        s1 = stage_vs_raw(frames, embedder, rounds, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    sizes_full = {k: f.height for k, f in all_frames.items() if k in frames}
    stage_full = {k: n / s1["raw_tps"] + s1["fixed"][k] for k, n in sizes_full.items()}
    raw_full = sum(sizes_full.values()) / s1["raw_tps"]
    ratio_full = raw_full / sum(stage_full.values())
    print(
        f"  on the whole versions ({sum(sizes_full.values())} texts) the same fixed costs "
        f"give raw / stage = {ratio_full:.3f}"
    )

    pool = sorted((t for f in all_frames.values() for t in f["text"].to_list()), key=len)
    step = max(1, len(pool) // sample_n)
    sample = pool[::step][:sample_n]  # every length class, evenly
    random.Random(args.seed).shuffle(sample)
    s2 = sorting(st, sample, embedder.batch_size, block_rounds)
    base = embedder.batch_size if embedder.batch_size in sizes else sizes[0]
    s3 = batch_sweep(st, sample, sizes, block_rounds, base)
    s4 = (
        fresh_processes(cold, sample, embedder.batch_size, stage_full, sizes_full) if cold else None
    )

    print("\n-- summary")
    print(
        f"  embed stage / raw encode throughput (goal >= 0.90): wall {s1['ratio_wall']:.3f}, "
        f"CPU {s1['ratio_cpu']:.3f}, from the stage's own overhead {s1['ratio_direct']:.3f}; "
        f"whole versions {ratio_full:.3f}"
    )
    print(
        f"  raw encode {s1['raw_tps']:.1f} texts/s; stage fixed cost per version "
        + ", ".join(f"{k} {v:.2f}s" for k, v in s1["fixed"].items())
    )
    print(
        f"  pre-sorting by length: {'no-op (same batches)' if s2['presort_same'] else 'differs'}; "
        f"no sorting at all: wall {s2['unsorted_wall']:.2f}x, CPU {s2['unsorted_cpu']:.2f}x"
    )
    print(
        f"  batch sizes vs {base} (wall, CPU): "
        + ", ".join(f"{k}: {w:.2f}/{c:.2f}" for k, (w, c) in s3.items())
    )
    if s4 is not None:
        print(f"  cold process start / median version's embed stage: {s4['cold']:.2f}")
        print(
            f"  1 torch thread vs {torch.get_num_threads()}: batch throughput "
            f"{s4['batch']:.2f}x, single-query speed {s4['single']:.2f}x"
        )


if __name__ == "__main__":
    main()
