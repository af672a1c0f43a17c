"""Does the eval on questions drawn from the lake rank chunking strategies as the
hand-written questions do?

On a materialized lake whose documents have gold questions (the sample lake: the laws
with their dev questions, the manuals with theirs), every strategy of `--strategies`
(default: `all`, one start offset) is scored twice per group of documents: on the gold
questions of that group, and on questions drawn from that group's documents
(`core.eval.drawn`, `--size` per seed, each of `--seeds`). The agreement of the two
rankings is Kendall's tau-b over the strategies' hit@3 (and MRR@10); the pairs of
strategies the two order differently (by more than `--tie`) are listed. Two readings
frame it: the drawn seeds against each other (is the drawn ranking stable?) and random
halves of the gold set against each other (`--splits`: how far the gold questions agree
with themselves, the most any other set can be expected to agree with them). Everything
runs in one eval per group: every question set is a tag.

    python bench/drawn_agreement.py [--lake data_lake] [--seeds 0 1 2] [--size 80]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import statistics
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
GROUPS = {
    "laws": ("leis-dev.jsonl", ("cdc", "lgpd")),
    "manuals": ("manuais.jsonl", ("manual-beneficiario", "manual-operacao")),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", type=Path, default=REPO / "data_lake")
    parser.add_argument("--strategies", nargs="+", default=["all"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--size", type=int, default=80)
    parser.add_argument("--tie", type=float, default=0.02, help="hit@3 gap read as a tie")
    parser.add_argument("--splits", type=int, default=5, help="random halves of the gold set")
    args = parser.parse_args()

    from scipy.stats import kendalltau

    from rag_assets.core.corpus import load_chunks
    from rag_assets.core.eval.drawn import DrawSettings, draw_questions, kinds_of
    from rag_assets.core.eval.evaluation import (
        EvalOptions,
        evaluate,
        resolve_strategies,
        strategy_families,
    )
    from rag_assets.core.eval.questions import load_questions
    from rag_assets.core.eval.reuse import VECTORS
    from rag_assets.core.eval.runner import indexed_versions
    from rag_assets.core.index import EmbeddingCache
    from rag_assets.core.lake.layout import Lake
    from rag_assets.settings import Settings

    lake = Lake(args.lake)
    index = Settings.from_env().serving_index(str(lake.lancedb_dir), None, None, None)
    embedder = index.embedder
    versions = indexed_versions(lake, index)
    live = [c for key in versions for c in load_chunks(lake, key)]
    index.update_indexes(max_lag_rows=0)
    families = strategy_families(resolve_strategies(args.strategies), 1, embedder)
    cache = EmbeddingCache(index.uri, embedder)
    keep = EmbeddingCache(lake.local_cache_dir / VECTORS, embedder)
    print(f"lake {lake.root}: {len(versions)} versions, model {embedder.model_id}")
    print(f"strategies: default + {', '.join(families)} (one start offset)\n")

    def tagged(questions: list, *tags: str) -> list:
        return [replace(q, tags=(*q.tags, *tags)) for q in questions]

    def tau(a: dict, b: dict, metric: str = "hit@3") -> float:
        x = [(a[n] or {}).get(metric) or 0.0 for n in names]
        y = [(b[n] or {}).get(metric) or 0.0 for n in names]
        return float(kendalltau(x, y).statistic)  # nan: one side ties every strategy

    def shown(value: float) -> str:
        return "– (all tied)" if math.isnan(value) else f"{value:.2f}"

    rows = []
    flips_of: dict[str, list[str]] = {}
    for group, (file, docs) in GROUPS.items():
        gold = [q for q in load_questions(lake.eval_dir / file) if q.doc_id in docs and q.in_scope]
        mine = {k: v for k, v in versions.items() if v.info.doc_id in docs}
        asked = tagged(gold, "gold")
        for split in range(args.splits):  # the gold questions' own noise: random halves
            order = list(gold)
            random.Random(split).shuffle(order)
            half = {q.id for q in order[: len(order) // 2]}
            asked = [
                replace(q, tags=(*q.tags, f"split{split}-{'a' if q.id in half else 'b'}"))
                for q in asked
            ]
        kinds = {}
        for seed in args.seeds:
            drawn = draw_questions(mine, args.size, DrawSettings(seed=seed))
            kinds[seed] = " ".join(f"{k} {n}" for k, n in kinds_of(drawn).items())
            asked += tagged(drawn, f"seed{seed}")
        result = evaluate(
            versions,
            asked,
            embedder,
            index,
            live,
            EvalOptions(strategies=families),
            cache=cache,
            keep=keep,
        )
        names = list(result.strategies)
        per = {
            tag: {n: result.by_tag[n].get(tag) for n in names} for tag in result.by_tag["default"]
        }
        gold_by = per["gold"]
        print(f"## {group}: hit@3 by strategy (gold | drawn seed {args.seeds[0]})")
        for n in names:
            print(
                f"  {n:<32} {gold_by[n]['hit@3'] or 0:.2f} | "
                f"{per[f'seed{args.seeds[0]}'][n]['hit@3'] or 0:.2f}"
            )
        print()
        for seed in args.seeds:
            drawn_by = per[f"seed{seed}"]
            rows.append(
                [
                    group,
                    str(seed),
                    str(len(gold)),
                    kinds[seed],
                    shown(tau(gold_by, drawn_by)),
                    shown(tau(gold_by, drawn_by, "mrr@10")),
                ]
            )
            flips = []
            for x, y in itertools.combinations(names, 2):
                g = (gold_by[x]["hit@3"] or 0.0) - (gold_by[y]["hit@3"] or 0.0)
                d = (drawn_by[x]["hit@3"] or 0.0) - (drawn_by[y]["hit@3"] or 0.0)
                if abs(g) > args.tie and abs(d) > args.tie and (g > 0) != (d > 0):
                    flips.append(f"{x} vs {y} (gold {g:+.2f}, drawn {d:+.2f})")
            flips_of[f"{group} seed {seed}"] = flips
        seeds = [
            tau(per[f"seed{a}"], per[f"seed{b}"]) for a, b in itertools.combinations(args.seeds, 2)
        ]
        halves = [tau(per[f"split{i}-a"], per[f"split{i}-b"]) for i in range(args.splits)]
        rows.append(
            [group, "seed vs seed", "", "", shown(statistics.mean(seeds)) if seeds else "", ""]
        )
        rows.append(
            [
                group,
                "gold half vs half",
                str(len(gold) // 2),
                "",
                shown(statistics.mean(halves)),
                "",
            ]
        )
    head = ["group", "drawn seed", "gold questions", "drawn kinds", "tau hit@3", "tau mrr@10"]
    print("| " + " | ".join(head) + " |")
    print("|---|---|---:|---|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("\nPairs ordered differently (gap above the tie on both sides):")
    for name, flips in flips_of.items():
        print(f"- {name}: " + ("; ".join(flips) if flips else "none"))


if __name__ == "__main__":
    main()
