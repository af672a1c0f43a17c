"""Search latency p50/p95 (vector, full-text, hybrid) at 10k and 100k chunks, exact vs the
vector index as `Index` builds and queries it; recall@10; full-text index upkeep costs.

The corpus is synthetic, scaled up from the real chunks: each row takes a real chunk's
text with sentences dropped and one borrowed from another chunk, and a vector that mixes
the two chunks' real vectors plus a little Gaussian noise, renormalized (embedding 100k
texts for real would take over an hour here: ~25 texts/s with the machine idle).

At each size, in one table:

1. Full-text upkeep. Synthetic versions of 300 rows (new keys, each text with a word of
   its own) are upserted with `rebuild_fts=False`, then the full-text index is brought up
   to date either incrementally (`Index.update_indexes(max_lag_rows=0)`: LanceDB
   `optimize()`, which also compacts the table) or by a full rebuild
   (`Index.build_fts_index()`), alternately. Each time the version's own word
   is searched before and after, and full-text latency with the version not yet indexed
   (searched flat) is compared with the latency once it is.
2. The vector index is built the way `update_indexes()` builds it once a table reaches
   `ann_min_rows` (IVF_HNSW_SQ), then two more versions are written with the default
   upkeep (both indexes updated incrementally: one delta segment each).
3. Latency through `Index.search`: the same table, `exact=True` (index bypassed: what the
   eval does, and what search did before) against the index at `--ef`, query by query,
   every (mode, side) pair in rotated order; recall@10 of the indexed results against the
   exact ones. A last table sweeps `ef` on the product's own vector query (pre-embedded).

    python bench/search_latency.py [--quick] [--sizes 10000,100000] [--ef 200]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from _common import LAKE, REPO, header, median, percentile, rotated, timed

from rag_assets.core import index as search
from rag_assets.core.embedding.embedder import MINILM, Embedder
from rag_assets.core.index import Index, Mode, Stamp, store_schema, table_name
from rag_assets.core.index.cache import embed_cached
from rag_assets.core.lake.schemas import CHUNKS, content_hash
from rag_assets.core.request import SearchRequest

MODES: tuple[Mode, ...] = ("vector", "fts", "hybrid")
SIDES: tuple[str, ...] = ("exact", "index")
ROWS_PER_VERSION = 300  # synthetic versions the size of a law
K = 10
EF_SWEEP: tuple[int, ...] = (100, 200, 400)


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


def load_queries(src: Source | None, n: int, seed: int) -> list[str]:
    """The eval questions of the lake and the shared corpus, then pseudo-queries (the first
    words of random chunk bodies of `src`, when given) up to `n`."""
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
    bodies = [] if src is None else src.rows.column("body").to_pylist()
    bodies = [b for b in bodies if b and len(b.split()) >= 6]
    while len(queries) < n and bodies:
        words = rng.choice(bodies).split()
        queries.append(" ".join(words[: rng.randint(4, 10)]))
    return queries[:n]


@dataclass
class Level:
    """Everything measured at one corpus size."""

    size: int
    build: dict[str, float] = field(default_factory=dict)
    update: dict[str, list[float]] = field(default_factory=dict)
    merge: list[float] = field(default_factory=list)
    found: dict[str, list[bool]] = field(default_factory=dict)
    fts_flat: list[tuple[float, float]] = field(default_factory=list)
    with_vector: list[float] = field(default_factory=list)
    stats: str = ""
    rss_mib: float = 0.0
    """The process's peak RSS once this size's table and indexes were built."""
    lat: dict[tuple[str, Mode], list[float]] = field(default_factory=dict)
    recall: dict[Mode, list[float]] = field(default_factory=dict)
    sweep: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    embed_version: float = 0.0
    writes: int = 0


def keys(hits: list[Any]) -> set[tuple[str, str]]:
    """The identities of a result list."""
    return {(h.partition_key, h.chunk_id) for h in hits}


def new_version(src: Source, args: argparse.Namespace, n: int) -> tuple[str, pa.Table, np.ndarray]:
    """A fresh synthetic version (key `write<n>@v1`), each text ending with its own word."""
    rows = synthesize(src, ROWS_PER_VERSION, args.noise, args.seed + 7919 * (n + 1))
    key = f"write{n:03d}@v1"
    word = f"zqxw{n:03d}"
    cols = {name: rows.column(name) for name in rows.column_names}
    cols["partition_key"] = pa.array([key] * rows.num_rows, pa.string())
    cols["doc_id"] = pa.array([key.split("@")[0]] * rows.num_rows, pa.string())
    texts = [f"{t} {word}" for t in rows.column("text").to_pylist()]
    cols["text"] = pa.array(texts, pa.string())
    cols["content_hash"] = pa.array([content_hash(t) for t in texts], pa.string())
    table = pa.table(cols).select(CHUNKS.names).cast(CHUNKS)
    vectors = np.stack(rows.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    return key, table, vectors


def fts_latency(index: Index, queries: list[str]) -> float:
    """Median full-text latency of `queries` through `Index.search` (no embedding)."""
    return median(
        [
            timed(lambda q=q: index.search(SearchRequest(query=q, k=K, mode="fts")))[0]
            for q in queries
        ]
    )


def found(index: Index, word: str) -> bool:
    """Whether full-text search finds every row of a version by its own word."""
    return (
        len(index.search(SearchRequest(query=word, k=ROWS_PER_VERSION, mode="fts")))
        == ROWS_PER_VERSION
    )


def measure_writes(
    level: Level, index: Index, src: Source, args: argparse.Namespace, queries: list[str]
) -> None:
    """Full-text upkeep: incremental update vs full rebuild, alternately, one version each."""
    plan = [("incremental", "rebuild"), ("rebuild", "incremental")] * args.write_rounds
    level.update = {"incremental": [], "rebuild": []}
    level.found = {"before": [], "after": []}
    n = 0
    for pair in plan[: args.write_rounds]:
        for how in pair:
            key, rows, vectors = new_version(src, args, n)
            word = f"zqxw{n:03d}"
            n += 1
            start = time.perf_counter()
            index.upsert_partition(
                key, rows, vectors, Stamp("active", title=key), rebuild_fts=False
            )
            level.merge.append(time.perf_counter() - start)
            level.found["before"].append(found(index, word))
            flat = fts_latency(index, queries)
            if how == "incremental":
                action = lambda: index.update_indexes(max_lag_rows=0)  # noqa: E731
            else:
                action = index.build_fts_index
            level.update[how].append(timed(action)[0])
            level.found["after"].append(found(index, word))
            level.fts_flat.append((flat, fts_latency(index, queries)))
    level.writes = n


def measure_level(
    size: int,
    src: Source,
    embedder: Embedder,
    queries: list[str],
    args: argparse.Namespace,
    workdir: Path,
) -> Level:
    """Build one size's table, time the index upkeep, then every mode on both sides."""
    level = Level(size)
    print(f"\n-- {size} chunks")
    t, data = timed(lambda: synthesize(src, size, args.noise, args.seed + size))
    print(f"  synthesized {data.num_rows} rows in {t:.1f}s")
    uri = str(workdir / f"t{size}")
    index = Index(uri, embedder, ann_min_rows=1, ann_ef=args.ef)
    start = time.perf_counter()
    lancedb.connect(uri).create_table(index.table_name, data)
    level.build["create table"] = time.perf_counter() - start
    del data
    level.build["full-text index"] = timed(index.build_fts_index)[0]
    fts_queries = queries[: args.fts_queries]
    # 1. full-text upkeep, before the vector index exists (its deltas would add to it)
    ann_off = Index(uri, embedder, ann_min_rows=0)
    measure_writes(level, ann_off, src, args, fts_queries)
    # 2. the vector index, as update_indexes builds it, then the default upkeep
    level.build["vector index (IVF_HNSW_SQ)"] = timed(index.update_indexes)[0]
    n = level.writes
    for i in range(2):
        key, rows, vectors = new_version(src, args, n + i)
        index.upsert_partition(key, rows, vectors, Stamp("active", title=key), rebuild_fts=False)
        level.with_vector.append(timed(lambda: index.update_indexes(max_lag_rows=0))[0])
    level.stats = index.index_stats().summary()
    level.rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  {level.stats}; peak RSS so far {level.rss_mib:.0f} MiB")
    sample = src.rows.column("text").to_pylist()[:32]
    level.embed_version = timed(lambda: embedder.embed_passages(sample))[0] * (
        ROWS_PER_VERSION / len(sample)
    )
    # 3. latency, exact vs index, same table
    for mode in MODES:  # warm-up: caches, index files
        for side in SIDES:
            index.search(SearchRequest(query=queries[-1], k=K, mode=mode), exact=side == "exact")
    pairs = [(side, mode) for mode in MODES for side in SIDES]
    level.lat = {p: [] for p in pairs}
    results: dict[tuple[str, Mode], list[set[tuple[str, str]]]] = {p: [] for p in pairs}
    step = 0
    for rep in range(args.repeats):
        for q in queries:
            for side, mode in rotated(pairs, step):
                t, hits = timed(
                    lambda s=side, m=mode, q=q: index.search(
                        SearchRequest(query=q, k=K, mode=m), exact=s == "exact"
                    )
                )
                level.lat[(side, mode)].append(t)
                if rep == 0:
                    results[(side, mode)].append(keys(hits))
            step += 1
    for mode in MODES:
        exact, approx = results[("exact", mode)], results[("index", mode)]
        level.recall[mode] = [
            len(a & e) / max(1, len(e)) for a, e in zip(approx, exact, strict=True)
        ]
    refine = tuple(int(r) for r in args.refine.split(",") if r)
    ef_sweep = tuple(int(e) for e in args.ef_sweep.split(",") if e) or EF_SWEEP
    sweep_ef(level, index, embedder, queries, refine, ef_sweep)
    return level


def sweep_ef(
    level: Level,
    index: Index,
    embedder: Embedder,
    queries: list[str],
    refine: tuple[int, ...] = (),
    ef_sweep: tuple[int, ...] = EF_SWEEP,
) -> None:
    """The product's vector query (pre-embedded, Index's filter, k=10) at several `ef`
    (and with each of `refine` candidates per hit re-ranked instead of the product's),
    and LanceDB's defaults (ef 1.5 k, no re-ranking), against the exact scan, interleaved:
    speed-up (median of paired ratios), recall@10 and mean cosine of the top 10 / exact's."""
    vectors = embedder.embed_queries(queries)
    where = Index.filter_sql()
    tbl = index.current_table()
    sides: dict[str, Any] = {"exact": None, "LanceDB default": "default"}
    sides |= {f"ef={ef}": ef for ef in ef_sweep}
    sides |= {f"ef={ef}, re-ranking {r} x k": (ef, r) for ef in ef_sweep for r in refine}

    def run(label: str, vec: np.ndarray) -> tuple[set[str], float]:
        ef = sides[label]
        if ef == "default":
            q = tbl.search(vec, query_type="vector", vector_column_name="vector")
            q = q.distance_type("cosine").where(where, prefilter=True).limit(K)
        elif isinstance(ef, tuple):  # another re-ranking than the product's
            q = tbl.search(vec, query_type="vector", vector_column_name="vector")
            q = q.distance_type("cosine").where(where, prefilter=True).limit(K)
            q = q.ef(max(ef[0], K * ef[1])).refine_factor(ef[1])
        else:
            at = Index(index.uri, index.embedder, ann_min_rows=1, ann_ef=ef or 1)
            q = at._vector_query(tbl, vec, where, K, exact=ef is None)
        got = q.select(["partition_key", "chunk_id", "vector"]).to_arrow()
        found = np.stack(got.column("vector").to_numpy(zero_copy_only=False))
        ids = {
            f"{p}#{c}"
            for p, c in zip(
                got["partition_key"].to_pylist(), got["chunk_id"].to_pylist(), strict=True
            )
        }
        return ids, float((found @ vec).mean())

    times: dict[str, list[float]] = {label: [] for label in sides}
    out: dict[str, list[tuple[set[str], float]]] = {label: [] for label in sides}
    for i, vec in enumerate(vectors):
        for label in rotated(list(sides), i):
            t, res = timed(lambda label=label, vec=vec: run(label, vec))
            times[label].append(t)
            out[label].append(res)
    base, exact = times["exact"], out["exact"]
    for label in sides:
        speed = median([b / t for b, t in zip(base, times[label], strict=True)])
        rec = [len(a[0] & e[0]) / max(1, len(e[0])) for a, e in zip(out[label], exact, strict=True)]
        sims = [a[1] / e[1] for a, e in zip(out[label], exact, strict=True)]
        level.sweep[label] = (
            median(times[label]) * 1e3,
            speed,
            float(np.mean(rec)),
            float(np.mean(sims)),
        )


def report(levels: list[Level], ef: int | None) -> None:
    """The tables: latency per size, mode and side; ef sweep; index upkeep."""
    print(
        "\n-- latency through Index.search (k=10, ms; vector and hybrid include embedding "
        "the query); index = IVF_HNSW_SQ at "
        + (f"ef={ef}" if ef else "the product's default ef (the stats line of each size)")
        + ", exact = exact=True on the same table"
    )
    print(
        "| chunks | mode | exact p50 | exact p95 | index p50 | index p95 | speed-up p50 "
        "| recall@10 |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for lv in levels:
        for mode in MODES:
            ex, an = lv.lat[("exact", mode)], lv.lat[("index", mode)]
            speed = median([e / x for e, x in zip(ex, an, strict=True)])
            print(
                f"| {lv.size} | {mode} | {percentile(ex, 50) * 1e3:.1f} | "
                f"{percentile(ex, 95) * 1e3:.1f} | {percentile(an, 50) * 1e3:.1f} | "
                f"{percentile(an, 95) * 1e3:.1f} | {speed:.2f}x | "
                f"{np.mean(lv.recall[mode]):.3f} |"
            )
    print(
        "\n-- the product's vector query at several ef (pre-embedded vectors, Index's "
        f"filter, k=10, re-ranking {search.ANN_REFINE} x k on the stored vectors unless said)"
    )
    print(
        "| chunks | setting | p50 ms | speed-up vs exact (p50 of ratios) | recall@10 "
        "| mean cosine of top 10 / exact's |"
    )
    print("|---:|---|---:|---:|---:|---:|")
    for lv in levels:
        for label, (p50, speed, rec, sim) in lv.sweep.items():
            print(f"| {lv.size} | {label} | {p50:.1f} | {speed:.1f}x | {rec:.3f} | {sim:.4f} |")
    print("\n-- index upkeep after writing one 300-row version (rebuild_fts=False, then ...)")
    print(
        "| chunks | full-text rebuild s | incremental update s | rebuild / incremental "
        "| version found by full-text before / after | full-text p50 ms, version flat / indexed "
        "| incremental with the vector index s |"
    )
    print("|---:|---:|---:|---:|---|---|---:|")
    for lv in levels:
        reb, inc = lv.update["rebuild"], lv.update["incremental"]
        ratio = median([r / i for r, i in zip(reb, inc, strict=True)])
        before = sum(lv.found["before"])
        after = sum(lv.found["after"])
        n = len(lv.found["after"])
        flat = median([f for f, _ in lv.fts_flat]) * 1e3
        indexed = median([x for _, x in lv.fts_flat]) * 1e3
        print(
            f"| {lv.size} | {median(reb):.2f} | {median(inc):.2f} | {ratio:.1f}x | "
            f"{before}/{n} / {after}/{n} | {flat:.1f} / {indexed:.1f} | "
            + ", ".join(f"{x:.2f}" for x in lv.with_vector)
            + " |"
        )
    print("\n-- building, at each size")
    for lv in levels:
        build = ", ".join(f"{k} {v:.1f}s" for k, v in lv.build.items())
        print(f"  {lv.size}: {build}; merge of one version p50 {median(lv.merge):.2f}s")
        print(f"  {lv.size}: peak RSS of the process once built: {lv.rss_mib:.0f} MiB")
        print(f"  {lv.size}: after the writes: {lv.stats}")
        inc = median(lv.update["incremental"]) / lv.embed_version
        reb = median(lv.update["rebuild"]) / lv.embed_version
        print(
            f"  {lv.size}: embedding one 300-row version ~{lv.embed_version:.1f}s (timed on 32 "
            f"texts): incremental update = {inc:.3f}x, full rebuild = {reb:.3f}x of it"
        )


def main() -> None:
    """Build, measure and report every size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k chunks, 12 queries")
    parser.add_argument("--sizes", default=None, help="comma-separated (10000,100000)")
    parser.add_argument(
        "--ef", type=int, default=None, help="ef of the index side (default: the product's)"
    )
    parser.add_argument("--queries", type=int, default=None, help="queries (60)")
    parser.add_argument("--fts-queries", type=int, default=20, help="for full-text latency")
    parser.add_argument("--write-rounds", type=int, default=3, help="rebuild/update pairs")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the queries")
    parser.add_argument("--noise", type=float, default=0.02, help="per-dimension vector noise")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--ef-sweep", default="", help="the ef values of the sweep (default 100,200,400)"
    )
    parser.add_argument(
        "--refine", default="", help="also sweep these re-rankings per hit (5,20) at each ef"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("5000" if args.quick else "10000,100000")).split(",")]
    n_queries = args.queries or (12 if args.quick else 60)
    header("search latency: exact vs the vector index; full-text index upkeep", args)

    embedder = Embedder(model=MINILM)
    print(f"model loaded in {timed(lambda: embedder.st)[0]:.1f}s")
    src = real_source(embedder)
    print(f"real chunks: {src.rows.num_rows} with vectors ({src.origin})")
    queries = load_queries(src, n_queries, args.seed)
    print(f"queries: {len(queries)} (eval questions first, then pseudo-queries from chunk bodies)")
    workdir = Path(tempfile.mkdtemp(prefix="trecho-bench-search-"))
    levels = []
    try:
        for size in sizes:
            levels.append(measure_level(size, src, embedder, queries, args, workdir))
            shutil.rmtree(workdir / f"t{size}", ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report(levels, args.ef)


if __name__ == "__main__":
    main()
