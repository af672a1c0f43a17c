"""The eval report's plots, drawn with matplotlib as SVG text (no display, no pyplot state):
hit@3 against tokens sent, hit@3 by question tag, and the size-based strategies over start
offsets. The HTML page embeds them as data URIs.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from rag_assets.core.chunking import SIZED
from rag_assets.core.eval.evaluation import EvalResult
from rag_assets.core.eval.report.markdown import question_tags, tag_count

DEFAULT_COLOR = "#c0392b"
OTHER_COLOR = "#5b7fa6"
SIZED_COLOR = "#8e8e8e"


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


def _measured(metrics: dict[str, float | None], *names: str) -> bool:
    return all(metrics.get(n) is not None for n in names)


def plot_hit_vs_tokens(result: EvalResult) -> str:
    """hit@3 against tokens@3, one point per strategy; size-based ones with their
    min–max over start offsets as error bars (when they ran at several). Up and left is
    better."""
    from matplotlib.lines import Line2D

    figure = _figure(9.0, 5.5)
    axes = figure.subplots()
    names = [n for n, m in result.strategies.items() if _measured(m, "tokens@3", "hit@3")]
    if not names:
        axes.text(0.5, 0.5, "not measured: no question was scored", ha="center", va="center")
    xmax = max((result.strategies[n]["tokens@3"] or 0.0 for n in names), default=0.0)
    for span in result.ranges.values():
        xmax = max(xmax, span.get("tokens@3", (0.0, 0.0))[1])
    xmax = xmax * 1.25 or 1.0
    points = []
    for name in names:
        metrics = result.strategies[name]
        x, y = float(metrics["tokens@3"] or 0.0), float(metrics["hit@3"] or 0.0)
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
                result.strategies[name]["tokens@3"] or 0.0,
                result.strategies[name]["hit@3"] or 0.0,
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
                label="size-based: mean, min–max over offsets"
                if result.start_offsets > 1
                else "size-based (one start offset)",
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
    tags = [t for t in question_tags(result) if tag_count(result, t)]
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
        values = [result.by_tag.get(n, {}).get(tag, {}).get(metric) or 0.0 for n in names]
        count = tag_count(result, tag)
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
            values = [m.get(metric) for m in result.offsets[name].values()]
            values = [v for v in values if v is not None]
            if not values:
                continue  # no question scored: nothing to draw
            axes.hlines(row, min(values), max(values), color=SIZED_COLOR, linewidth=3, alpha=0.5)
            axes.plot(values, [row] * len(values), "o", color=SIZED_COLOR, markersize=5)
            axes.plot(
                result.strategies[name].get(metric) or 0.0, row, "D", color="black", markersize=5
            )
        if default.get(metric) is not None:
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
