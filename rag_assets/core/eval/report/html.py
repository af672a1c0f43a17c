"""The eval report as one self-contained HTML page (`report.html`): the Markdown report's
tables (abstention and each question's top 3 included) plus the plots, inline as SVG data
URIs, so it opens anywhere without a network or a companion folder.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

from rag_assets.core.eval.evaluation import METRICS, EvalResult
from rag_assets.core.eval.report.markdown import (
    ABSTENTION,
    DOC_METRICS,
    INTRO,
    OFFSET_METRICS,
    QUESTION_COLUMNS,
    SWEEP,
    abstention_note,
    abstention_rows,
    doc_rows,
    format_number,
    headline,
    metric_cell,
    question_rows,
    question_tags,
    summary,
    sweep_rows,
    tag_cell,
    tag_count,
    uncovered_note,
)
from rag_assets.core.eval.report.plots import plot_hit_vs_tokens, plot_offsets, plot_tags

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
tr.failed td:last-child { color: #b00020; font-weight: 600; }
#questions td { white-space: normal; vertical-align: top; }
#questions td:nth-child(5) { font-size: 0.75rem; }
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
<b>unnamed_tables</b>: tables read without named columns (each row indexed under the
table's printed header lines, no value named by its column);
<b>flagged_tables</b>: tables with values left without their header by the reader's
limits (their header lines more than a chunk holds), indexed all the same;
<b>bookmarks</b> (by document): the PDF's own bookmark titles that the structure tree
carries as headings, of all its bookmarks (– where the PDF has none);
<b>off_heading_paths</b>: chunks whose section path (in their context header) holds a
segment that is no heading: a fragment of prose, a table-of-contents line, a table named
in another language than the document's;
<b>twin_confusion</b>: share of twin questions where the look-alike unit outranks every
relevant chunk in the top 3. All lower is better.</li>
<li>{offsets}
With n questions one question moves hit@k by 1/n.</li>
<li><b>answered_out_of_scope</b>: out-of-scope questions that still get a hit above
min_score (the search should say "not in the documents"); <b>refused_in_scope</b>: scored
questions left with no hit. Both lower is better; raising min_score trades one for the
other (the sweep table).</li>
</ul>
"""
SEVERAL_OFFSETS = (
    "Size-based strategies are run at several start offsets: the table shows the mean and "
    "(min–max); a range wider than the gap between two strategies means the gap is noise."
)
ONE_OFFSET = (
    "Size-based strategies ran at one start offset (0): where the first cut falls moves "
    "their scores, so a small gap to them may be noise (`--offsets 4` measures the range)."
)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _html_table(
    table_id: str,
    head: Sequence[str],
    rows: Sequence[tuple[str, Sequence[str]]],
    numeric_from: int = 1,
) -> str:
    """A table; rows are (strategy, cells); the default policy's rows are highlighted
    (a `failed` mark instead: a question row the default policy failed)."""
    out = [f'<div class="scroll"><table id="{table_id}">', "<thead><tr>"]
    out += [f"<th>{_esc(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for strategy, cells in rows:
        css = f' class="{strategy}"' if strategy in ("default", "failed") else ""
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
            + [metric_cell(result, n, m) for m in METRICS],
        )
        for n in names
    ]
    tags = question_tags(result)
    tag_rows = [
        (
            "",
            [
                tag,
                str(tag_count(result, tag)),
                *[tag_cell(result, n, tag, "hit@3") for n in names],
            ],
        )
        for tag in tags
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="note">{_esc(summary(result, sources))}'
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
            "Each point is a strategy; bars are the min–max over start offsets."
            if result.start_offsets > 1
            else "Each point is a strategy (size-based ones at one start offset).",
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
    note = abstention_note(result)
    parts += ["<h2>Abstention (min_score)</h2>", f'<p class="note">{_esc(note)}</p>']
    if abstention_rows(result):
        rows = [(name, [name, *cells]) for name, cells in abstention_rows(result)]
        parts.append(_html_table("abstention", ["strategy", *ABSTENTION], rows))
    if result.sweep:
        parts += [
            '<p class="note">The default policy at each min_score (highlighted: the served '
            "default).</p>",
            _html_table("sweep", list(SWEEP), sweep_rows(result), 0),
        ]
    if result.per_question:
        parts += [
            "<h2>Each question (default policy)</h2>",
            f'<p class="note">{_esc(uncovered_note(result))} Failures first; ✓ marks a '
            "relevant hit; score is the fused rank score, cos the cosine.</p>",
            _html_table(
                "questions",
                list(QUESTION_COLUMNS),
                [("failed" if failed else "", cells) for failed, cells in question_rows(result)],
                len(QUESTION_COLUMNS),
            ),
        ]
    if result.offsets:
        offset_rows = [
            (name, [name, variant, *[format_number(m, v.get(m)) for m in OFFSET_METRICS]])
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
    offsets = SEVERAL_OFFSETS if result.start_offsets > 1 else ONE_OFFSET
    parts += ["<h2>Reading this report</h2>", READING.format(offsets=offsets), "</body></html>"]
    return "\n".join(parts)
