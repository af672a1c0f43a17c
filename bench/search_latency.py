"""Search latency p50/p95 (vector, full-text, hybrid) at 10k and 100k chunks, exact vs ANN.

The corpus is synthetic, scaled up from the real chunks: each row takes a real chunk's
text with sentences dropped and one borrowed from another chunk, and a vector that mixes
the two chunks' real vectors plus a little Gaussian noise, renormalized (embedding 100k
texts for real would take over an hour here: ~25 texts/s with the machine idle). The same
table is searched through trecho's `Index.search` as it is today (exact, no vector index)
and with an ANN index on `vector` (LanceDB IVF_HNSW_SQ by default, IVF_PQ on request),
query by query, alternating the order; recall@10 of the ANN results is measured against
the exact ones. A second table tunes the ANN query knobs on raw LanceDB queries
(pre-embedded vectors), and the cost of writing one version into a table of that size is
measured against embedding it.

    python bench/search_latency.py [--quick] [--ann hnsw_sq,ivf_pq]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from _common import LAKE, REPO, header, median, percentile, rotated, timed
from lancedb.index import HnswSq, IvfPq

from rag_assets.core.embedding import Embedder
from rag_assets.core.schemas import CHUNKS, content_hash
from rag_assets.core.search import Index, Mode, embed_cached, store_schema, table_name

MODES: tuple[Mode, ...] = ("vector", "fts", "hybrid")
ROWS_PER_VERSION = 300  # synthetic versions the size of a law
K = 10


def ann_config(kind: str) -> Any:
    """The LanceDB index config for an ANN kind (cosine, like Index's vector search)."""
    if kind == "hnsw_sq":
        return HnswSq(distance_type="cosine", num_partitions=1)
    if kind == "ivf_pq":
        return IvfPq(distance_type="cosine")  # sqrt(n) partitions, dim/16 sub-vectors
    raise SystemExit(f"unknown ANN kind {kind!r}: hnsw_sq or ivf_pq")


ANN_NAMES = {"hnsw_sq": "IVF_HNSW_SQ", "ivf_pq": "IVF_PQ"}
TUNING: dict[str, list[tuple[str, Callable[[Any], Any]]]] = {
    "hnsw_sq": [
        ("default (ef=1.5k)", lambda q: q),
        ("ef=50", lambda q: q.ef(50)),
        ("ef=100", lambda q: q.ef(100)),
    ],
    "ivf_pq": [
        ("default", lambda q: q),
        ("refine_factor=10", lambda q: q.refine_factor(10)),
        ("nprobes=50, refine_factor=10", lambda q: q.nprobes(50).refine_factor(10)),
    ],
}


@dataclass
class Source:
    """The real chunks (CHUNKS columns plus title) and their unit vectors."""

    rows: pa.Table
    vectors: np.ndarray
    origin: str


def real_source(embedder: Embedder) -> Source:
    """Real chunks with their vectors: read from the lake's index when it has the model's
    table (read only), else chunk texts from the lake embedded now."""
    name = table_name(embedder.model_id)
    try:
        tbl = lancedb.connect(str(LAKE / "lancedb")).open_table(name)
        data = tbl.search().select([*CHUNKS.names, "title", "vector"]).limit(None).to_arrow()
        if data.num_rows:
            vectors = np.stack(data.column("vector").to_numpy(zero_copy_only=False))
            return Source(
                data.drop_columns(["vector"]), vectors.astype(np.float32), f"{LAKE}/lancedb"
            )
    except Exception as exc:  # no lake index (or being rewritten): embed instead
        print(f"  lake index not readable ({exc}); embedding the lake's chunks")
    from _common import load_chunk_frames

    frames = load_chunk_frames()
    tables = [f.to_arrow().cast(CHUNKS) for f in frames.values()]
    rows = pa.concat_tables(tables)
    rows = rows.append_column("title", pa.array(rows.column("doc_id").to_pylist(), pa.string()))
    vectors, _ = embed_cached(embedder, None, rows.column("text").to_pylist())
    return Source(rows, vectors, "chunk files, embedded now")


SENTENCE = re.compile(r"(?<=[.;:])\s+|\n")


def synthesize(src: Source, n: int, noise: float, seed: int) -> pa.Table:
    """`n` rows in the store's schema, scaled up from the real chunks (see the docstring)."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    m = src.rows.num_rows
    base = rng.integers(0, m, n)
    donor = rng.integers(0, m, n)
    weight = rng.uniform(0.6, 1.0, (n, 1)).astype(np.float32)
    vec = weight * src.vectors[base] + (1 - weight) * src.vectors[donor]
    vec += rng.normal(0.0, noise, vec.shape).astype(np.float32)
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    cols = {name: src.rows.column(name).to_pylist() for name in CHUNKS.names}
    pieces = [[p for p in SENTENCE.split(t) if p.strip()] or [t] for t in cols["text"]]
    out: dict[str, list[Any]] = {name: [] for name in CHUNKS.names}
    for i in range(n):
        b, d = int(base[i]), int(donor[i])
        head, *rest = pieces[b]
        kept = [p for p in rest if pick.random() > 0.25]
        kept.insert(pick.randint(0, len(kept)), pick.choice(pieces[d]))
        text = "\n".join([head, *kept])
        version = i // ROWS_PER_VERSION
        for name in CHUNKS.names:
            out[name].append(cols[name][b])
        out["partition_key"][-1] = f"synth{version:05d}@v1"
        out["doc_id"][-1] = f"synth{version:05d}"
        out["version"][-1] = "v1"
        out["chunk_id"][-1] = f"{cols['chunk_id'][b]}~{i}"
        out["text"][-1] = text
        out["body"][-1] = "\n".join(kept)
        out["content_hash"][-1] = content_hash(text)
    dim = vec.shape[1]
    arrays = [pa.array(out[name], CHUNKS.field(name).type) for name in CHUNKS.names]
    arrays += [
        pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1), pa.float32()), dim),
        pa.array(["active"] * n, pa.string()),
        pa.array([None] * n, pa.date32()),
        pa.array([None] * n, pa.date32()),
        pa.array([f"Synthetic document {i // ROWS_PER_VERSION}" for i in range(n)], pa.string()),
    ]
    return pa.Table.from_arrays(arrays, schema=store_schema(dim))


def load_queries(src: Source, n: int, seed: int) -> list[str]:
    """The eval questions of the lake and the shared corpus, then pseudo-queries (the first
    words of random chunk bodies) up to `n`."""
    files = sorted((LAKE / "eval").glob("*.jsonl"))
    files += [REPO.parent / "shared" / "corpora" / "leis" / "questions-dev.jsonl"]
    queries: list[str] = []
    for path in files:
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    q = json.loads(line).get("question", "")
                    if q and q not in queries:
                        queries.append(q)
    rng = random.Random(seed)
    rng.shuffle(queries)
    bodies = [b for b in src.rows.column("body").to_pylist() if b and len(b.split()) >= 6]
    while len(queries) < n and bodies:
        words = rng.choice(bodies).split()
        queries.append(" ".join(words[: rng.randint(4, 10)]))
    return queries[:n]


@dataclass
class Level:
    """Everything measured at one corpus size."""

    size: int
    build: dict[str, float] = field(default_factory=dict)
    lat: dict[tuple[str, Mode], list[float]] = field(default_factory=dict)
    cold: dict[str, float] = field(default_factory=dict)
    recall: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    tuning: dict[tuple[str, str], tuple[float, float, float]] = field(default_factory=dict)
    embed_query: list[float] = field(default_factory=list)
    upsert: dict[str, Any] = field(default_factory=dict)


def keys(hits: list[Any]) -> set[tuple[str, str]]:
    """The identities of a result list."""
    return {(h.partition_key, h.chunk_id) for h in hits}


def measure_level(
    size: int,
    src: Source,
    embedder: Embedder,
    queries: list[str],
    anns: list[str],
    args: argparse.Namespace,
    workdir: Path,
) -> Level:
    """Build the tables for one size, time every mode on every config, measure recall."""
    level = Level(size)
    print(f"\n-- {size} chunks")
    t, data = timed(lambda: synthesize(src, size, args.noise, args.seed + size))
    print(f"  synthesized {data.num_rows} rows in {t:.1f}s")
    exact_uri = str(workdir / f"exact{size}")
    index = Index(exact_uri, embedder)
    start = time.perf_counter()
    lancedb.connect(exact_uri).create_table(index.table_name, data)
    level.build["create table"] = time.perf_counter() - start
    level.build["full-text index"] = timed(index.build_fts_index)[0]
    del data
    uris = {"exact": exact_uri}
    for kind in anns:
        uri = str(workdir / f"{kind}{size}")
        shutil.copytree(exact_uri, uri)
        tbl = lancedb.connect(uri).open_table(index.table_name)
        level.build[f"{ANN_NAMES[kind]} index"] = timed(
            lambda tbl=tbl, kind=kind: tbl.create_index("vector", config=ann_config(kind))
        )[0]
        uris[kind] = uri
    for what, seconds in level.build.items():
        print(f"  build: {what:<22} {seconds:7.1f}s")

    # cold first query: a fresh Index (what one `trecho search` process pays, model aside)
    for config, uri in uris.items():
        fresh = Index(uri, embedder)
        level.cold[config] = timed(lambda fresh=fresh: fresh.search(queries[0], K, "hybrid"))[0]
    indexes = {config: Index(uri, embedder) for config, uri in uris.items()}
    for idx in indexes.values():  # warm-up: caches, index files
        for mode in MODES:
            idx.search(queries[-1], K, mode)
    configs = list(indexes)
    pairs = [(c, m) for m in MODES for c in configs]
    level.lat = {p: [] for p in pairs}
    results: dict[tuple[str, str], list[set[tuple[str, str]]]] = {p: [] for p in pairs}
    step = 0
    for rep in range(args.repeats):
        for q in queries:
            level.embed_query.append(timed(lambda q=q: embedder.embed_queries([q]))[0])
            for config, mode in rotated(pairs, step):
                t, hits = timed(lambda c=config, m=mode, q=q: indexes[c].search(q, K, m))
                level.lat[(config, mode)].append(t)
                if rep == 0:
                    results[(config, mode)].append(keys(hits))
            step += 1
    for kind in anns:
        for mode in ("vector", "hybrid"):
            exact, approx = results[("exact", mode)], results[(kind, mode)]
            level.recall[(kind, mode)] = [
                len(a & e) / max(1, len(e)) for a, e in zip(approx, exact, strict=True)
            ]
    if anns:
        tune(level, exact_uri, uris, anns, embedder, queries, index.table_name)
    measure_upsert(level, src, embedder, indexes["exact"])
    return level


def tune(
    level: Level,
    exact_uri: str,
    uris: dict[str, str],
    anns: list[str],
    embedder: Embedder,
    queries: list[str],
    name: str,
) -> None:
    """Raw LanceDB vector queries (pre-embedded): exact scan vs each ANN setting, with
    Index's filter, interleaved; recall@10 against the exact scan."""
    vectors = embedder.embed_queries(queries)
    where = Index.filter_sql()
    exact_tbl = lancedb.connect(exact_uri).open_table(name)

    def run(tbl: Any, vec: np.ndarray, knob: Callable[[Any], Any] | None) -> tuple[set, float]:
        q = tbl.search(vec, query_type="vector", vector_column_name="vector")
        q = q.distance_type("cosine").where(where, prefilter=True)
        q = q.select(["chunk_id", "vector", "_distance"]).limit(K)
        q = q.bypass_vector_index() if knob is None else knob(q)
        got = q.to_arrow()
        found = np.stack(got.column("vector").to_numpy(zero_copy_only=False))
        return set(got.column("chunk_id").to_pylist()), float((found @ vec).mean())

    sides: list[tuple[str, str, Any, Callable[[Any], Any] | None]] = [
        ("exact", "exact scan", exact_tbl, None)
    ]
    for kind in anns:
        tbl = lancedb.connect(uris[kind]).open_table(name)
        sides += [(kind, label, tbl, knob) for label, knob in TUNING[kind]]
    times: dict[tuple[str, str], list[float]] = {(k, lbl): [] for k, lbl, _, _ in sides}
    found: dict[tuple[str, str], list[tuple[set, float]]] = {(k, lbl): [] for k, lbl, _, _ in sides}
    for i, vec in enumerate(vectors):
        for kind, label, tbl, knob in rotated(sides, i):
            t, out = timed(lambda tbl=tbl, vec=vec, knob=knob: run(tbl, vec, knob))
            times[(kind, label)].append(t)
            found[(kind, label)].append(out)
    base = times[("exact", "exact scan")]
    exact = found[("exact", "exact scan")]
    for kind, label, _, _ in sides[1:]:
        speed = median([b / t for b, t in zip(base, times[(kind, label)], strict=True)])
        approx = found[(kind, label)]
        hits = [len(a[0] & e[0]) / max(1, len(e[0])) for a, e in zip(approx, exact, strict=True)]
        sims = [a[1] / e[1] for a, e in zip(approx, exact, strict=True)]
        level.tuning[(kind, label)] = (speed, float(np.mean(hits)), float(np.mean(sims)))
    level.tuning[("exact", "p50 ms")] = (median(base) * 1000, 0.0, 0.0)


def measure_upsert(level: Level, src: Source, embedder: Embedder, index: Index) -> None:
    """Write the largest real version into the exact table of this size, as the embeddings
    asset does (merge, then the full-text rebuild), next to embedding 32 of its texts."""
    keys_col = src.rows.column("partition_key").to_pylist()
    key = max(set(keys_col), key=keys_col.count)
    mask = np.array([k == key for k in keys_col])
    rows = src.rows.filter(pa.array(mask)).select(CHUNKS.names)
    vectors = src.vectors[mask]
    texts = rows.column("text").to_pylist()[:32]
    t_embed = timed(lambda: embedder.embed_passages(texts))[0] * rows.num_rows / len(texts)
    t_merge = timed(
        lambda: index.upsert_partition(
            key, rows, vectors, "active", None, None, key, rebuild_fts=False
        )
    )[0]
    t_fts = timed(index.build_fts_index)[0]
    level.upsert = {
        "key": key,
        "rows": rows.num_rows,
        "merge": t_merge,
        "fts": t_fts,
        "embed_est": t_embed,
    }


def report(levels: list[Level], anns: list[str]) -> None:
    """The tables: latency per size, mode and config; ANN tuning; write costs."""
    print("\n-- latency through Index.search (k=10; vector and hybrid include embedding the query)")
    print(
        "| chunks | mode | exact p50 ms | exact p95 ms | "
        + " | ".join(
            f"{ANN_NAMES[a]} p50 ms | {ANN_NAMES[a]} p95 ms | speed-up p50 | recall@10"
            for a in anns
        )
        + " |"
    )
    print("|---:|---|---:|---:|" + "---:|---:|---:|---:|" * len(anns))
    for lv in levels:
        for mode in MODES:
            ex = lv.lat[("exact", mode)]
            cells = [f"{percentile(ex, 50) * 1e3:.1f}", f"{percentile(ex, 95) * 1e3:.1f}"]
            for a in anns:
                an = lv.lat[(a, mode)]
                speed = median([e / x for e, x in zip(ex, an, strict=True)])
                rec = lv.recall.get((a, mode))
                cells += [
                    f"{percentile(an, 50) * 1e3:.1f}",
                    f"{percentile(an, 95) * 1e3:.1f}",
                    f"{speed:.2f}x",
                    f"{np.mean(rec):.3f}" if rec else "n/a",
                ]
            print(f"| {lv.size} | {mode} | " + " | ".join(cells) + " |")
    for lv in levels:
        print(
            f"  {lv.size}: embedding one query p50 {percentile(lv.embed_query, 50) * 1e3:.1f} ms; "
            "cold first hybrid query of a fresh Index: "
            + ", ".join(
                f"{c} {v * 1e3:.0f} ms = {v / percentile(lv.lat[(c, 'hybrid')], 50):.1f}x warm p50"
                for c, v in lv.cold.items()
            )
        )
    if anns:
        print("\n-- ANN query knobs on raw LanceDB (pre-embedded vectors, Index's filter, k=10)")
        print(
            "| chunks | index | setting | speed-up vs exact scan (p50 of ratios) | recall@10 "
            "| mean cosine of top 10 / exact's |"
        )
        print("|---:|---|---|---:|---:|---:|")
        for lv in levels:
            p50 = lv.tuning.get(("exact", "p50 ms"), (0.0, 0.0, 0.0))[0]
            print(f"| {lv.size} | exact scan | p50 {p50:.1f} ms | 1.0x | 1.000 | 1.000 |")
            for (kind, label), (speed, rec, sim) in lv.tuning.items():
                if kind != "exact":
                    print(
                        f"| {lv.size} | {ANN_NAMES[kind]} | {label} | {speed:.1f}x | {rec:.3f} "
                        f"| {sim:.4f} |"
                    )
    print("\n-- building and writing, at each size")
    for lv in levels:
        up = lv.upsert
        build = ", ".join(f"{k} {v:.1f}s" for k, v in lv.build.items())
        print(f"  {lv.size}: {build}")
        write = up["merge"] + up["fts"]
        print(
            f"  {lv.size}: upsert of {up['key']} ({up['rows']} rows): merge {up['merge']:.2f}s + "
            f"full-text rebuild {up['fts']:.2f}s = {write / up['embed_est']:.3f}x the time to "
            f"embed its texts (~{up['embed_est']:.1f}s, timed on 32 of them)"
        )
        for what, seconds in lv.build.items():
            if what.endswith("index") and what != "full-text index":
                rate = up["rows"] / up["embed_est"]
                print(
                    f"  {lv.size}: {what} build = {seconds * rate / lv.size:.3f}x the time to "
                    f"embed all {lv.size} texts (~{lv.size / rate:.0f}s at {rate:.1f} texts/s)"
                )


def main() -> None:
    """Build, measure and report every size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k chunks, 12 queries")
    parser.add_argument("--sizes", default=None, help="comma-separated (10000,100000)")
    parser.add_argument("--ann", default="hnsw_sq", help="hnsw_sq, ivf_pq, both, or none")
    parser.add_argument("--queries", type=int, default=None, help="queries (60)")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the queries")
    parser.add_argument("--noise", type=float, default=0.02, help="per-dimension vector noise")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("5000" if args.quick else "10000,100000")).split(",")]
    n_queries = args.queries or (12 if args.quick else 60)
    anns = [] if args.ann == "none" else [a.strip() for a in args.ann.split(",") if a.strip()]
    for a in anns:
        ann_config(a)
    header("search latency: exact vs ANN, vector / full-text / hybrid", args)

    embedder = Embedder()
    print(f"model loaded in {timed(lambda: embedder.st)[0]:.1f}s")
    src = real_source(embedder)
    print(f"real chunks: {src.rows.num_rows} with vectors ({src.origin})")
    queries = load_queries(src, n_queries, args.seed)
    print(f"queries: {len(queries)} (eval questions first, then pseudo-queries from chunk bodies)")
    workdir = Path(tempfile.mkdtemp(prefix="trecho-bench-search-"))
    try:
        levels = [measure_level(s, src, embedder, queries, anns, args, workdir) for s in sizes]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(levels, anns)


if __name__ == "__main__":
    main()
