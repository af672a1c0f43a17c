"""The eval report: `report.html` (tables and plots, readable offline), `report.md` and
`metrics.json`, in `reports/<timestamp>/`; and the comparison with the previous report.

Plots are drawn with matplotlib (no display, no pyplot state) as SVG and embedded in the
HTML as data URIs, so the file opens anywhere without a network or a companion folder.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag_assets.core.chunking import SIZED
from rag_assets.core.eval.evaluation import METRICS, EvalResult
from rag_assets.core.lake.layout import LakePath

log = logging.getLogger(__name__)

LOWER_IS_BETTER = {"tokens@3", "orphans", "mid_line_starts", "truncated", "twin_confusion"}
COUNTS = ("tokens@3", "orphans", "mid_line_starts", "truncated")
RETRIEVAL = ("hit@1", "hit@3", "hit@5", "mrr@10", "answer_complete@3")
BASELINE = "fixed_tokens-512-o64"
"""The common recipe the default policy is read against in the report's headline."""

DEFAULT_COLOR = "#c0392b"
OTHER_COLOR = "#5b7fa6"
SIZED_COLOR = "#8e8e8e"


def _number(metric: str, value: float) -> str:
    return f"{value:.0f}" if metric in COUNTS else f"{value:.2f}"


APPLIES_TO = {"answer_complete@3": "answer_complete_questions", "twin_confusion": "twin_questions"}
"""Metrics measured over a subset of questions, and the count of that subset."""


def _cell(result: EvalResult, strategy: str, metric: str) -> str:
    counted = result.strategies[strategy].get(APPLIES_TO.get(metric, ""))
    if counted is not None and counted == 0:
        return "–"  # no question has answer_contains / not_relevant: not measured
    value = result.strategies[strategy].get(metric, 0.0)
    text = _number(metric, value)
    low_high = result.ranges.get(strategy, {}).get(metric)
    if low_high and low_high[0] != low_high[1]:
        text += f" ({_number(metric, low_high[0])}–{_number(metric, low_high[1])})"
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


MODEL_METRICS = (
    "hit@1",
    "hit@3",
    "hit@5",
    "mrr@10",
    "tokens@3",
    "orphans",
    "mid_line_starts",
    "truncated",
)


def models_table(results: dict[str, EvalResult], tag: str = "leiga") -> str:
    """Models x strategies side by side (`trecho eval --models`): retrieval, tokens and
    damage, hit@3 of the questions tagged `tag`, and each model's index time (embedding the
    default policy's chunks) as seconds and as a ratio to the first model's."""
    first = next(iter(results.values()), None)
    base = first.index_time.get("seconds", 0.0) if first else 0.0
    head = (
        "| model | strategy | chunks | "
        + " | ".join(MODEL_METRICS)
        + f" | {tag} hit@3 | index s | index time × |"
    )
    rule = "|---|---|---:|" + "---:|" * (len(MODEL_METRICS) + 3)
    rows = []
    for model, result in results.items():
        seconds = result.index_time.get("seconds", 0.0)
        for name in result.strategies:
            timed = name == "default" and seconds
            cells = [
                f"{result.strategies[name].get('chunks', 0):.0f}",
                *(_cell(result, name, m) for m in MODEL_METRICS),
                _tag_cell(result, name, tag, "hit@3"),
                f"{seconds:.0f}" if timed else "",
                f"{seconds / base:.2f}" if timed and base else "",
            ]
            rows.append(f"| {model} | {name} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def _tags(result: EvalResult) -> list[str]:
    return sorted({t for per in result.by_tag.values() for t in per})


def _tag_count(result: EvalResult, tag: str) -> int:
    """Scored questions carrying `tag` (0 for e.g. out-of-scope questions)."""
    return int(result.by_tag.get("default", {}).get(tag, {}).get("questions", 0.0))


def _tag_cell(result: EvalResult, name: str, tag: str, metric: str) -> str:
    if not _tag_count(result, tag):
        return "–"  # no scored question carries this tag
    return f"{result.by_tag.get(name, {}).get(tag, {}).get(metric, 0.0):.2f}"


def tag_table(result: EvalResult, metric: str = "hit@3") -> str:
    """`metric` per question tag (rows) and strategy (columns), with the tag's question
    count."""
    names = list(result.strategies)
    lines = [
        "| tag | questions | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for tag in _tags(result):
        cells = [_tag_cell(result, n, tag, metric) for n in names]
        lines.append(f"| {tag} | {_tag_count(result, tag)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


DOC_METRICS = ("questions", "hit@3", "mrr@10", "tokens@3", "chunks", *COUNTS[1:])


def _doc_cell(per: dict[str, float], metric: str) -> str:
    if metric in (*RETRIEVAL, "tokens@3") and not per.get("questions"):
        return "–"  # no scored question on this document
    if metric in ("questions", "chunks"):
        return f"{per.get(metric, 0.0):.0f}"
    return _number(metric, per.get(metric, 0.0))


def doc_rows(result: EvalResult) -> list[tuple[str, str, list[str]]]:
    """(document, strategy, cells of DOC_METRICS) for the per-document tables."""
    rows: list[tuple[str, str, list[str]]] = []
    docs = sorted({d for per in result.by_doc.values() for d in per})
    for doc in docs:
        for name in result.strategies:
            per = result.by_doc.get(name, {}).get(doc)
            if per is not None:
                rows.append((doc, name, [_doc_cell(per, m) for m in DOC_METRICS]))
    return rows


def doc_table(result: EvalResult) -> str:
    """Per document and strategy: its questions' retrieval metrics and its chunks' damage."""
    lines = [
        "| document | strategy | " + " | ".join(DOC_METRICS) + " |",
        "|---|---|" + "---:|" * len(DOC_METRICS),
    ]
    lines += [f"| {d} | {n} | " + " | ".join(c) + " |" for d, n, c in doc_rows(result)]
    return "\n".join(lines)


OFFSET_METRICS = ("hit@3", "mrr@10", "tokens@3", "mid_line_starts", "truncated", "orphans")


def offsets_table(result: EvalResult) -> str:
    """Each size-based strategy at each start offset."""
    lines = [
        "| strategy | offset | " + " | ".join(OFFSET_METRICS) + " |",
        "|---|---|" + "---:|" * len(OFFSET_METRICS),
    ]
    for name, runs in result.offsets.items():
        for variant, metrics in runs.items():
            cells = [_number(m, metrics.get(m, 0.0)) for m in OFFSET_METRICS]
            lines.append(f"| {name} | {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def headline(result: EvalResult) -> str:
    """One sentence reading the default policy against the common recipe (512-token
    windows, overlap 64), when both were evaluated."""
    default = result.strategies.get("default")
    base = result.strategies.get(BASELINE)
    if not default or not base:
        return ""
    share = default["tokens@3"] / base["tokens@3"] if base.get("tokens@3") else 0.0
    return (
        f"The default policy reaches hit@3 {default['hit@3']:.2f} against "
        f"{base['hit@3']:.2f} for {BASELINE} (mean over start offsets), sending "
        f"{default['tokens@3']:.0f} tokens for the top 3 against {base['tokens@3']:.0f} "
        f"({share:.0%}); its chunks have {default['orphans']:.0f} orphan table values, "
        f"{default['mid_line_starts']:.0f} mid-line starts and {default['truncated']:.0f} "
        "truncated chunks."
    )


INTRO = (
    "Retrieval: hit@k, mrr@10 (higher is better). What the LLM gets: answer_complete@3 "
    "(one top-3 chunk holds every expected answer string), tokens@3 (tokens sent for "
    "the top 3). Damage (lower is better): orphan table values, chunks starting "
    "mid-line, chunks truncated by the model, twin confusion. – : not measured (no question "
    "of that kind)."
)


def _summary(result: EvalResult, sources: Sequence[str]) -> str:
    return (
        f"Questions scored: {result.questions} (from {', '.join(sources)}); "
        f"retrieval: {result.mode}, k=10. Size-based strategies: mean over start offsets, "
        "(min–max) where they differ."
    )


def render_markdown(result: EvalResult, title: str, sources: Sequence[str]) -> str:
    """The whole report as Markdown."""
    parts = [f"# {title}", "", _summary(result, sources), "", INTRO, ""]
    if headline(result):
        parts += [headline(result), ""]
    parts += [markdown_table(result), "", "## hit@3 by question tag", "", tag_table(result), ""]
    if result.by_doc:
        parts += ["## By document", "", doc_table(result), ""]
    if result.offsets:
        parts += ["## Size-based strategies by start offset", "", offsets_table(result), ""]
    return "\n".join(parts)


# -- plots ------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Any:
    """A matplotlib Figure not registered with pyplot (no global state, no display)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(figure: Any) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "trecho", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg")
    return buffer.getvalue()


def _is_sized(name: str) -> bool:
    return SIZED.match(name.removesuffix("-noheader")) is not None


def _color(result: EvalResult, name: str) -> str:
    if name == "default":
        return DEFAULT_COLOR
    return SIZED_COLOR if name in result.ranges or _is_sized(name) else OTHER_COLOR


def _place_labels(
    points: Sequence[tuple[float, float, str]], width_pt: float, height_pt: float
) -> list[tuple[float, float]]:
    """Offsets (in points) for labels of points given in axes fractions, chosen greedily so
    that no two labels overlap (estimated 8 pt font boxes); the first free slot wins."""
    placed: list[tuple[float, float, float, float]] = []
    out: list[tuple[float, float]] = []
    candidates = [(6.0, dy) for dy in (3, -11, 15, -23, 27, -35, 39, -47)]
    candidates += [(-6.0, dy) for dy in (3, -11, 15, -23)]
    for fx, fy, label in points:
        w, h = 4.6 * len(label), 9.0
        x0, y0 = fx * width_pt, fy * height_pt
        choice = candidates[0]
        for dx, dy in candidates:
            left = x0 + dx if dx > 0 else x0 + dx - w
            box = (left, y0 + dy, left + w, y0 + dy + h)
            if all(
                box[2] <= b[0] or b[2] <= box[0] or box[3] <= b[1] or b[3] <= box[1] for b in placed
            ):
                choice = (dx, dy)
                placed.append(box)
                break
        out.append(choice)
    return out


def plot_hit_vs_tokens(result: EvalResult) -> str:
    """hit@3 against tokens@3, one point per strategy; size-based ones with their
    min–max over start offsets as error bars. Up and left is better."""
    from matplotlib.lines import Line2D

    figure = _figure(9.0, 5.5)
    axes = figure.subplots()
    names = list(result.strategies)
    xmax = max((m.get("tokens@3", 0.0) for m in result.strategies.values()), default=0.0)
    for span in result.ranges.values():
        xmax = max(xmax, span.get("tokens@3", (0.0, 0.0))[1])
    xmax = xmax * 1.25 or 1.0
    points = []
    for name in names:
        metrics = result.strategies[name]
        x, y = metrics.get("tokens@3", 0.0), metrics.get("hit@3", 0.0)
        color = _color(result, name)
        span = result.ranges.get(name, {})
        xr, yr = span.get("tokens@3", (x, x)), span.get("hit@3", (y, y))
        axes.errorbar(
            x,
            y,
            xerr=[[max(0.0, x - xr[0])], [max(0.0, xr[1] - x)]],
            yerr=[[max(0.0, y - yr[0])], [max(0.0, yr[1] - y)]],
            fmt="D" if name == "default" else "o",
            color=color,
            ecolor=color,
            elinewidth=1,
            capsize=3,
            markersize=9 if name == "default" else 6,
            zorder=3 if name == "default" else 2,
        )
        points.append((x / xmax, y / 1.05, name))
    # default first, so that its label gets the best slot
    order = sorted(range(len(points)), key=lambda i: (names[i] != "default", -points[i][1]))
    offsets = _place_labels([points[i] for i in order], 9.0 * 72 * 0.85, 5.5 * 72 * 0.8)
    for i, (dx, dy) in zip(order, offsets, strict=True):
        name = names[i]
        axes.annotate(
            name,
            (
                result.strategies[name].get("tokens@3", 0.0),
                result.strategies[name].get("hit@3", 0.0),
            ),
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left" if dx > 0 else "right",
            fontsize=8,
            color=_color(result, name),
            fontweight="bold" if name == "default" else "normal",
        )
    axes.legend(
        handles=[
            Line2D([], [], marker="D", color=DEFAULT_COLOR, linestyle="", label="default policy"),
            Line2D([], [], marker="o", color=OTHER_COLOR, linestyle="", label="other strategies"),
            Line2D(
                [],
                [],
                marker="o",
                color=SIZED_COLOR,
                label="size-based: mean, min–max over offsets",
            ),
        ],
        loc="lower right",
        fontsize=8,
    )
    axes.set_xlabel("tokens@3: tokens sent to the LLM for the top 3 chunks (mean)")
    axes.set_ylabel("hit@3")
    axes.set_ylim(0, 1.05)
    axes.set_xlim(0, xmax)
    axes.grid(True, alpha=0.3)
    axes.set_title("hit@3 against tokens sent (up and left is better)")
    return _svg(figure)


def plot_tags(result: EvalResult, metric: str = "hit@3") -> str:
    """One bar chart per question tag: `metric` of every strategy."""
    tags = [t for t in _tags(result) if _tag_count(result, t)]
    names = list(result.strategies)
    if not tags:
        tags = ["(no tagged questions)"]
    columns = min(3, len(tags))
    rows = (len(tags) + columns - 1) // columns
    figure = _figure(3.6 * columns, (0.22 * len(names) + 1.0) * rows)
    grid = figure.subplots(rows, columns, squeeze=False, sharex=True)
    for i, axes in enumerate(grid.flat):
        if i >= len(tags):
            axes.set_visible(False)
            continue
        tag = tags[i]
        values = [result.by_tag.get(n, {}).get(tag, {}).get(metric, 0.0) for n in names]
        count = _tag_count(result, tag)
        axes.barh(range(len(names)), values, color=[_color(result, n) for n in names])
        axes.set_yticks(range(len(names)))
        axes.set_yticklabels(names if i % columns == 0 else [""] * len(names), fontsize=7)
        axes.invert_yaxis()
        axes.set_xlim(0, 1)
        axes.set_title(f"{tag} ({count} questions)", fontsize=9)
        axes.grid(True, axis="x", alpha=0.3)
        axes.tick_params(axis="x", labelsize=7)
    figure.suptitle(f"{metric} by question tag")
    return _svg(figure)


def plot_offsets(result: EvalResult) -> str:
    """Size-based strategies at each start offset: hit@3 and tokens@3, the min–max range
    as a line, each offset a dot, the mean a diamond; the default policy as a dashed line."""
    names = list(result.offsets)
    figure = _figure(9.0, 0.45 * max(len(names), 1) + 1.4)
    panels = figure.subplots(1, 2, sharey=True)
    default = result.strategies.get("default", {})
    for axes, metric in zip(panels, ("hit@3", "tokens@3"), strict=True):
        for row, name in enumerate(names):
            values = [m.get(metric, 0.0) for m in result.offsets[name].values()]
            axes.hlines(row, min(values), max(values), color=SIZED_COLOR, linewidth=3, alpha=0.5)
            axes.plot(values, [row] * len(values), "o", color=SIZED_COLOR, markersize=5)
            axes.plot(
                result.strategies[name].get(metric, 0.0), row, "D", color="black", markersize=5
            )
        if metric in default:
            axes.axvline(default[metric], color=DEFAULT_COLOR, linestyle="--", label="default")
            axes.legend(fontsize=8, loc="best")
        axes.set_yticks(range(len(names)))
        axes.set_yticklabels(names, fontsize=8)
        axes.set_ylim(len(names) - 0.5, -0.5)
        axes.set_xlabel(metric)
        axes.grid(True, axis="x", alpha=0.3)
        if metric == "hit@3":
            axes.set_xlim(0, 1)
        else:
            axes.set_xlim(left=0)
    figure.suptitle("Size-based strategies over start offsets (dots: offsets, ◆ mean)")
    return _svg(figure)


# -- HTML -------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1500px;
  color: #222; line-height: 1.45; padding: 0 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.8rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f1f1f1; position: sticky; top: 0; }
td:first-child, td:nth-child(2) { white-space: nowrap; }
tr.default td { background: #fbecea; font-weight: 600; }
td.bad { color: #b00020; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption, .note { color: #555; font-size: 0.9rem; }
.headline { font-size: 1.05rem; border-left: 4px solid #c0392b; padding-left: 0.75rem; }
.scroll { overflow-x: auto; }
"""

READING = """
<ul>
<li><b>hit@k</b>: share of scored questions with a relevant chunk (one overlapping an
expected unit) in the top k; <b>mrr@10</b>: mean of 1/rank of the first one.</li>
<li><b>answer_complete@3</b>: one top-3 chunk holds every expected answer string, so an LLM
can answer from it alone.</li>
<li><b>tokens@3</b>: tokens of the top 3 chunks, what an LLM is sent. Fewer is cheaper and
leaves room in its context.</li>
<li><b>orphans</b>: table values in a chunk without their column header;
<b>mid_line_starts</b>: chunks starting inside a line and a sentence;
<b>truncated</b>: chunks longer than the model reads (their tail is never embedded);
<b>twin_confusion</b>: share of twin questions where the look-alike unit outranks every
relevant chunk in the top 3. All lower is better.</li>
<li>Size-based strategies are run at several start offsets: the table shows the mean and
(min–max); a range wider than the gap between two strategies means the gap is noise.
With n questions one question moves hit@k by 1/n.</li>
</ul>
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _html_table(
    table_id: str,
    head: Sequence[str],
    rows: Sequence[tuple[str, Sequence[str]]],
    numeric_from: int = 1,
) -> str:
    """A table; rows are (strategy, cells); the default policy's rows are highlighted."""
    out = [f'<div class="scroll"><table id="{table_id}">', "<thead><tr>"]
    out += [f"<th>{_esc(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for strategy, cells in rows:
        css = ' class="default"' if strategy == "default" else ""
        out.append(f'<tr data-strategy="{_esc(strategy)}"{css}>')
        for i, cell in enumerate(cells):
            out.append(
                f'<td class="num">{_esc(cell)}</td>'
                if i >= numeric_from
                else f"<td>{_esc(cell)}</td>"
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _img(figure_id: str, svg: str, alt: str, caption: str) -> str:
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<figure id="{figure_id}"><img alt="{_esc(alt)}" '
        f'src="data:image/svg+xml;base64,{data}"><figcaption>{_esc(caption)}</figcaption>'
        "</figure>"
    )


def render_html(
    result: EvalResult, title: str, sources: Sequence[str], created_at: str = ""
) -> str:
    """The whole report as one self-contained HTML page: tables and inline SVG plots."""
    names = list(result.strategies)
    metrics_rows = [
        (
            n,
            [n, f"{result.strategies[n].get('chunks', 0):.0f}"]
            + [_cell(result, n, m) for m in METRICS],
        )
        for n in names
    ]
    tags = _tags(result)
    tag_rows = [
        (
            "",
            [
                tag,
                str(_tag_count(result, tag)),
                *[_tag_cell(result, n, tag, "hit@3") for n in names],
            ],
        )
        for tag in tags
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="note">{_esc(_summary(result, sources))}'
        + (f" Created {_esc(created_at)}." if created_at else "")
        + "</p>",
    ]
    if headline(result):
        parts.append(f'<p class="headline">{_esc(headline(result))}</p>')
    parts += [
        "<h2>Strategies side by side</h2>",
        f'<p class="note">{_esc(INTRO)}</p>',
        _html_table("metrics", ["strategy", "chunks", *METRICS], metrics_rows),
        _img(
            "fig-hit-vs-tokens",
            plot_hit_vs_tokens(result),
            "hit@3 against tokens@3 per strategy",
            "Each point is a strategy; bars are the min–max over start offsets.",
        ),
        "<h2>By question tag</h2>",
        _html_table("tags", ["tag", "questions", *names], tag_rows),
        _img(
            "fig-tags",
            plot_tags(result),
            "hit@3 per question tag and strategy",
            "hit@3 of every strategy within each question tag (red: the default policy).",
        ),
    ]
    if result.offsets:
        offset_rows = [
            (name, [name, variant, *[_number(m, v.get(m, 0.0)) for m in OFFSET_METRICS]])
            for name, runs in result.offsets.items()
            for variant, v in runs.items()
        ]
        parts += [
            "<h2>Size-based strategies over start offsets</h2>",
            _img(
                "fig-offsets",
                plot_offsets(result),
                "hit@3 and tokens@3 of each size-based strategy per start offset",
                "Where the first cut falls moves size-based scores: compare ranges, not points.",
            ),
            _html_table("offsets", ["strategy", "offset", *OFFSET_METRICS], offset_rows, 2),
        ]
    if result.by_doc:
        parts += [
            "<h2>By document</h2>",
            _html_table(
                "documents",
                ["document", "strategy", *DOC_METRICS],
                [(n, [d, n, *cells]) for d, n, cells in doc_rows(result)],
                2,
            ),
        ]
    parts += ["<h2>Reading this report</h2>", READING, "</body></html>"]
    return "\n".join(parts)


def write_report(result: EvalResult, reports_dir: LakePath, sources: list[str]) -> LakePath:
    """Write `report.html`, `report.md` and `metrics.json` into a new timestamped folder;
    returns the folder."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    folder = reports_dir / stamp
    folder.mkdir(parents=True, exist_ok=False)
    title = "trecho eval report"
    (folder / "report.md").write_text(render_markdown(result, title, sources), encoding="utf-8")
    (folder / "report.html").write_text(
        render_html(result, title, sources, created_at=stamp), encoding="utf-8"
    )
    payload = result.to_json() | {"sources": sources, "created_at": stamp}
    (folder / "metrics.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return folder


# -- the previous report ----------------------------------------------------------------


def previous_report(
    reports_dir: LakePath, before: LakePath, sources: Sequence[str], mode: str
) -> tuple[LakePath, dict[str, Any]] | None:
    """The latest `metrics.json` written before the folder `before` over the same question
    files and retrieval mode (other reports measure something else); None if there is none.

    Report folders are named by UTC timestamp, so name order is time order; unreadable
    files are skipped with a warning.
    """
    for folder in sorted((p for p in reports_dir.iterdir() if p.is_dir()), reverse=True):
        if folder.name >= before.name:
            continue
        path = folder / "metrics.json"
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("skipping the earlier report %s: %s", path, exc)
            continue
        if sorted(payload.get("sources", [])) == sorted(sources) and payload.get("mode") == mode:
            return path, payload
    return None


@dataclass(frozen=True)
class Regression:
    """The default policy's hit@3 now and in the previous comparable report."""

    current: float
    previous: float | None
    previous_path: str
    tolerance: float

    @property
    def drop(self) -> float:
        """How far hit@3 fell (negative: it rose); 0 without a previous report."""
        return 0.0 if self.previous is None else round(self.previous - self.current, 4)

    @property
    def passed(self) -> bool:
        """hit@3 fell by no more than the tolerance (or nothing to compare with)."""
        return self.drop <= self.tolerance + 1e-9


def hit3_regression(
    result: EvalResult, previous: tuple[LakePath, dict[str, Any]] | None, tolerance: float
) -> Regression:
    """Compare the default policy's hit@3 with a previous report's (see `previous_report`)."""
    current = float(result.strategies["default"]["hit@3"])
    if previous is None:
        return Regression(current, None, "", tolerance)
    path, payload = previous
    before = payload.get("strategies", {}).get("default", {}).get("hit@3")
    return Regression(current, None if before is None else float(before), str(path), tolerance)
