"""The eval report: a Markdown table and a metrics.json, in `reports/<timestamp>/`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from rag_assets.core.evaluation import METRICS, EvalResult

LOWER_IS_BETTER = {"tokens@3", "orphans", "mid_line_starts", "truncated", "twin_confusion"}


def _cell(result: EvalResult, strategy: str, metric: str) -> str:
    value = result.strategies[strategy].get(metric, 0.0)
    text = (
        f"{value:.0f}"
        if metric in ("tokens@3", "orphans", "mid_line_starts", "truncated")
        else f"{value:.2f}"
    )
    low_high = result.ranges.get(strategy, {}).get(metric)
    if low_high and low_high[0] != low_high[1]:
        text += (
            f" ({low_high[0]:.2f}–{low_high[1]:.2f})"
            if "@" in metric
            else f" ({low_high[0]:.0f}–{low_high[1]:.0f})"
        )
    return text


def markdown_table(result: EvalResult) -> str:
    """One row per strategy, one column per metric; size-based ones show (min–max)."""
    head = "| strategy | chunks | " + " | ".join(METRICS) + " |"
    rule = "|---|---:|" + "---:|" * len(METRICS)
    rows = [
        f"| {name} | {result.strategies[name].get('chunks', 0):.0f} | "
        + " | ".join(_cell(result, name, m) for m in METRICS)
        + " |"
        for name in result.strategies
    ]
    return "\n".join([head, rule, *rows])


def tag_table(result: EvalResult, metric: str = "hit@3") -> str:
    """`metric` per question tag (rows) and strategy (columns)."""
    names = list(result.strategies)
    tags = sorted({t for per in result.by_tag.values() for t in per})
    lines = ["| tag | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for tag in tags:
        cells = [f"{result.by_tag.get(n, {}).get(tag, {}).get(metric, 0.0):.2f}" for n in names]
        lines.append(f"| {tag} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_markdown(result: EvalResult, title: str, sources: list[str]) -> str:
    """The whole report as Markdown."""
    return "\n".join(
        [
            f"# {title}",
            "",
            f"Questions scored: {result.questions} (from {', '.join(sources)}); "
            f"retrieval: {result.mode}, k=10. Size-based strategies: mean over start offsets, "
            "(min–max) where they differ.",
            "",
            "Retrieval: hit@k, mrr@10 (higher is better). What the LLM gets: answer_complete@3 "
            "(one top-3 chunk holds every expected answer string), tokens@3 (tokens sent for "
            "the top 3). Damage (lower is better): orphan table values, chunks starting "
            "mid-line, chunks truncated by the model, twin confusion.",
            "",
            markdown_table(result),
            "",
            "## hit@3 by question tag",
            "",
            tag_table(result),
            "",
        ]
    )


def write_report(result: EvalResult, reports_dir: Path, sources: list[str]) -> Path:
    """Write `report.md` and `metrics.json` into a new timestamped folder; returns it."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    folder = reports_dir / stamp
    folder.mkdir(parents=True, exist_ok=False)
    (folder / "report.md").write_text(
        render_markdown(result, "trecho eval report", sources), encoding="utf-8"
    )
    payload = result.to_json() | {"sources": sources, "created_at": stamp}
    (folder / "metrics.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return folder
