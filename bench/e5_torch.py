"""The bundled e5 on PyTorch (`TRECHO_E5_PASSAGES=torch`) against the default passage path,
side by side in one run: passages/s, worst cosine to the engine, and what a backfill of
`--backfill` chunks would take at each rate.

What it prints (each side timed in interleaved rounds, rotated, on the same texts):

1. the tokenizer alone and the 512-token cut check, texts/s (what must keep ahead of the
   device: the worker thread tokenizes, the check runs before the first batch);
2. passages/s of torch on `--device` in each of `--precisions`, and of the default path
   (`auto` on this machine's CPU: OpenVINO bf16 where the CPU has it) unless
   `--no-engine`; each torch side's ratio to the default per round;
3. each side's worst (and median) cosine to the engine on the first `--check` texts
   (the load check refuses below `e5_onnx.TOLERANCE`; issue 45's bar is 0.9998);
4. the estimated time of a `--backfill`-chunk backfill at each rate (embedding only).

Texts: chunks of the LGPD and the CDC by the default policy (e5 tokens), repeated in
order up to `--texts`.

    python bench/e5_torch.py [--texts 48] [--rounds 2] [--precisions fp32,bf16]
    # on a GPU machine (no CPU sides, the engine only for the cosine):
    python bench/e5_torch.py --device cuda --texts 1024 --rounds 3 --backfill 100000 --no-engine
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from _common import REPO, header, median, rotated, spread, timed  # noqa: E402

LAWS = REPO.parent / "shared" / "corpora" / "leis"


def law_texts(n: int) -> list[str]:
    """`n` chunk texts of the LGPD and the CDC (default policy, e5 tokens), repeated."""
    from rag_assets.core.chunking import Policy, PolicyChunker
    from rag_assets.core.corpus import source_from_pdf
    from rag_assets.core.embedding.embedder import Embedder

    e5 = Embedder()
    chunker, counter = PolicyChunker(Policy(), e5), e5.token_counter()
    texts: list[str] = []
    for name in ("lgpd", "cdc"):
        texts += [
            c.text for c in chunker(source_from_pdf(LAWS / f"{name}.pdf", f"{name}@v1"), counter)
        ]
    return [texts[i % len(texts)] for i in range(n)]


def describe(device: str) -> str:
    """The device in words: a GPU's model and memory, or the CPU."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.device(device))
        memory = props.total_memory / 2**30
        return f"{device}: {props.name}, {memory:.0f} GiB, torch {torch.__version__}"
    return f"{device}: torch {torch.__version__}, {torch.get_num_threads()} threads"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps")
    parser.add_argument(
        "--precisions", default="", help="default: fp32,bf16 on cpu, else fp16,bf16,fp32"
    )
    parser.add_argument("--texts", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--check", type=int, default=64, help="texts compared with the engine")
    parser.add_argument("--backfill", type=int, default=100_000, help="chunks of the estimate")
    parser.add_argument("--no-engine", action="store_true", help="do not time the default CPU path")
    parser.add_argument("--variant", default="original", choices=["original", "enpt"])
    args = parser.parse_args()
    header(f"e5 on torch ({args.device}) against the default passage path", args)
    from rag_assets.core.embedding import backends, e5_backend, e5_torch

    problem = e5_torch.device_problem(args.device)
    if problem:
        raise SystemExit(f"bench/e5_torch.py: {args.device}: {problem}")
    print(f"device {describe(args.device)}")
    precisions = (
        args.precisions.split(",")
        if args.precisions
        else (["fp32", "bf16"] if args.device == "cpu" else ["fp16", "bf16", "fp32"])
    )
    texts = law_texts(args.texts)
    engine = backends.e5_engine(args.variant)
    counts = [engine.engine.token_count(t, False) for t in texts]
    print(f"{len(texts)} law chunk texts, e5 tokens median {median(counts):.0f}, max {max(counts)}")

    sides: dict[str, Any] = {}
    for precision in precisions:
        seconds, graph = timed(
            lambda p=precision: e5_torch.E5Torch(args.variant, args.device, p, engine)
        )
        sides[graph.name] = backends.E5TorchEncoder(engine, args.batch_size, graph)
        print(f"   {graph.name}: built in {seconds:.1f} s")
    default = None
    if not args.no_engine:
        path = backends.e5_path(args.variant, "auto", batch_size=args.batch_size)
        default = path.name
        sides[default] = path.encoder
        print(f"   default path here: {default}" + (f" ({path.reason})" if path.reason else ""))
    for encoder in sides.values():  # warm: first kernels, first compile, caches
        encoder.encode_passages(texts[:8])

    tokenizer = e5_backend.tokenizer(args.variant)
    prefixed = [e5_backend.PASSAGE_PREFIX + t for t in texts]
    tok = [timed(lambda: tokenizer(prefixed))[0] for _ in range(args.rounds)]
    fit = [
        timed(lambda: engine.fit(texts, e5_backend.PASSAGE_PREFIX))[0] for _ in range(args.rounds)
    ]
    print(f"\n1. tokenizer alone (the worker thread): {len(texts) / median(tok):8.1f} texts/s")
    print(f"   the 512-token cut check (`E5Encoder.fit`): {len(texts) / median(fit):8.1f} texts/s")

    seconds: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in rotated(list(sides), r):
            seconds[name].append(timed(lambda e=sides[name]: e.encode_passages(texts))[0])
    print(
        f"\n2. passages/s, {args.rounds} interleaved rounds "
        f"(ratio to {default or 'no default path'} per round)"
    )
    for name, values in seconds.items():
        ratio = ""
        if default and name != default:
            ratio = "x default " + spread(
                [d / v for d, v in zip(seconds[default], values, strict=True)]
            )
        print(f"   {name:<22} {len(texts) / median(values):9.1f}/s   {ratio}")

    check = texts[: args.check]
    reference = engine.encode(check, is_query=False)
    print(
        f"\n3. cosine to the engine, {len(check)} texts "
        f"(tolerance {e5_torch.TOLERANCE}, issue 45's bar 0.9998)"
    )
    for name, encoder in sides.items():
        cos = (encoder.encode_passages(check) * reference).sum(axis=1)
        print(f"   {name:<22} worst {cos.min():.6f}   median {np.median(cos):.6f}")

    print(f"\n4. a {args.backfill:,}-chunk backfill, embedding only, at these rates")
    for name, values in seconds.items():
        estimate = args.backfill * median(values) / len(texts)
        print(f"   {name:<22} {estimate / 60:8.1f} min ({estimate / 3600:.1f} h)")


if __name__ == "__main__":
    main()
