"""What the eval report costs with e5: the work `make demo`'s last step does, side by side.

The eval cuts every compared strategy from the extracted text and embeds each one's
chunks; with e5 that embedding is nearly all of its time. Three settings run on the same
materialized lake (`trecho materialize --skip-eval`), one after the other in one process:

- `before`: what `make demo` ran before issue 15's fix: the `standard` strategies with
  size-based ones at 4 start offsets, every chunk text embedded (no reuse of the live
  chunks' vectors);
- `full`: the same comparison, reusing the vectors the embedding cache already holds
  for identical texts (the live chunks');
- `demo`: what `make demo` runs now: size-based strategies at one start offset
  (`--eval-offsets 1`), with that reuse.

`--dry` embeds nothing (random vectors): the token counts for a whole lake in a minute,
and the seconds of everything else the eval does (cutting, scratch indexes, searches).

For each: distinct chunk texts, texts and tokens actually embedded, seconds, and the
time ratio to `before`. Token counts do not depend on the machine; seconds do (a loaded
machine stretches all three alike, so read the ratios).

    python bench/eval_speed.py --lake <materialized lake> [--docs manual-operacao ...] [--dry]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import LAKE, header, timed  # noqa: E402

from rag_assets.core.embedding.embedder import Embedder  # noqa: E402


@dataclass
class CountingEmbedder(Embedder):
    """The configured embedder, counting the passages it actually embeds."""

    texts: int = 0
    tokens: int = 0
    dry: bool = False
    """Count only: random unit vectors instead of embedding (the eval's other costs)."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed as usual; count texts and their tokens first."""
        self.texts += len(texts)
        self.tokens += sum(min(n, self.max_tokens) for n in self.token_counter().count_many(texts))
        if self.dry:
            vectors = np.random.default_rng(0).normal(size=(len(texts), self.dimension))
            return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        return super().embed_passages(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", type=Path, default=LAKE)
    parser.add_argument("--docs", nargs="*", help="doc ids to keep (default: every one)")
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument(
        "--dry",
        action="store_true",
        help="count what would be embedded, embed nothing (seconds: everything else)",
    )
    args = parser.parse_args()
    header("eval report cost: before / full / demo", args)
    from rag_assets.core.eval.evaluation import (
        EvalOptions,
        evaluate,
        resolve_strategies,
        strategy_families,
    )
    from rag_assets.core.eval.questions import load_questions
    from rag_assets.core.eval.runner import indexed_versions, question_files
    from rag_assets.core.index import Index
    from rag_assets.core.index.cache import EmbeddingCache
    from rag_assets.core.lake.layout import Lake
    from rag_assets.core.lifecycle.versions import load_chunks

    lake = Lake(args.lake)
    embedder = CountingEmbedder(model=args.model, dry=args.dry)
    index = Index(lake.lancedb_dir, embedder)
    versions = {
        k: v
        for k, v in indexed_versions(lake, index).items()
        if not args.docs or v.info.doc_id in args.docs
    }
    docs = {v.info.doc_id for v in versions.values()}
    questions = [q for f in question_files(lake) for q in load_questions(f) if q.doc_id in docs]
    live = [c for key in versions for c in load_chunks(lake, key)]
    index.update_indexes(max_lag_rows=0)
    embedder.embed_queries(["aquecimento"])  # engine loaded before timing
    embedder.token_counter()
    print(f"{len(versions)} versions ({', '.join(versions)}), {len(questions)} questions")
    names = resolve_strategies(["standard"])
    settings = {
        "before": (4, None),
        "full": (4, EmbeddingCache(lake.lancedb_dir, embedder)),
        "demo": (1, EmbeddingCache(lake.lancedb_dir, embedder)),
    }
    base = 0.0
    print(f"\n{'setting':<8} {'offsets':>7} {'texts embedded':>15} {'tokens':>9} {'s':>8} {'x':>6}")
    for name, (offsets, cache) in settings.items():
        embedder.texts = embedder.tokens = 0
        families = strategy_families(names, offsets, embedder)
        seconds, _ = timed(
            lambda f=families, c=cache: evaluate(
                versions, questions, embedder, index, live, EvalOptions(strategies=f), cache=c
            )
        )
        base = base or seconds
        print(
            f"{name:<8} {offsets:>7} {embedder.texts:>15} {embedder.tokens:>9} "
            f"{seconds:>8.1f} {seconds / base:>6.2f}"
        )


if __name__ == "__main__":
    main()
