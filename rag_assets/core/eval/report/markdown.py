"""The eval report's tables and text, as Markdown: the strategies side by side, by question
tag, by document and by start offset, abstention (min_score) and its sweep, each question
with its top 3, the headline, and the whole `report.md`.

The cell formatting here (`metric_cell`, `tag_cell`, ...) is shared with the HTML page.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.eval.evaluation import METRICS, EvalResult
from rag_assets.core.eval.questions import JudgedHit, QuestionResult

COUNTS = METRICS[METRICS.index("tokens@3") : METRICS.index("twin_confusion")]
"""The metrics printed as whole numbers: tokens sent and the damage counts."""
LOWER_IS_BETTER = {*COUNTS, "twin_confusion"}
RETRIEVAL = ("hit@1", "hit@3", "hit@5", "mrr@10", "answer_complete@3")
BASELINE = "fixed_tokens-512-o64"
"""The common recipe the default policy is read against in the report's headline."""


NOT_MEASURED = "–"
"""What the report prints for a figure no question measured (`null` in metrics.json)."""


def format_number(metric: str, value: float | None) -> str:
    """`value` as the report prints it: counts as integers, the rest with two decimals, –
    where nothing measured it."""
    return NOT_MEASURED if value is None else f"{value:.0f}" if metric in COUNTS else f"{value:.2f}"


def share(value: float | None) -> str:
    """A share or rate with two decimals, – where nothing measured it."""
    return format_number("share", value)


APPLIES_TO = {"answer_complete@3": "answer_complete_questions", "twin_confusion": "twin_questions"}
"""Metrics measured over a subset of questions, and the count of that subset."""


def metric_cell(result: EvalResult, strategy: str, metric: str) -> str:
    """One strategy's `metric` as a table cell: the value, its (min–max) over start offsets
    where they differ, or – where no question of that kind was scored."""
    counted = result.strategies[strategy].get(APPLIES_TO.get(metric, ""))
    if counted is not None and counted == 0:
        return NOT_MEASURED  # no question has answer_contains / not_relevant
    value = result.strategies[strategy].get(metric)
    text = format_number(metric, value)
    low_high = result.ranges.get(strategy, {}).get(metric)
    if low_high and low_high[0] != low_high[1]:
        text += f" ({format_number(metric, low_high[0])}–{format_number(metric, low_high[1])})"
    return text


def markdown_table(result: EvalResult) -> str:
    """One row per strategy, one column per metric; size-based ones show (min–max)."""
    head = "| strategy | chunks | " + " | ".join(METRICS) + " |"
    rule = "|---|---:|" + "---:|" * len(METRICS)
    rows = [
        f"| {name} | {result.strategies[name].get('chunks', 0):.0f} | "
        + " | ".join(metric_cell(result, name, m) for m in METRICS)
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
                *(metric_cell(result, name, m) for m in MODEL_METRICS),
                tag_cell(result, name, tag, "hit@3"),
                f"{seconds:.0f}" if timed else "",
                f"{seconds / base:.2f}" if timed and base else "",
            ]
            rows.append(f"| {model} | {name} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def question_tags(result: EvalResult) -> list[str]:
    """Every question tag seen in the result, sorted."""
    return sorted({t for per in result.by_tag.values() for t in per})


def tag_count(result: EvalResult, tag: str) -> int:
    """Scored questions carrying `tag` (0 for e.g. out-of-scope questions)."""
    return int(result.by_tag.get("default", {}).get(tag, {}).get("questions", 0.0))


def tag_cell(result: EvalResult, name: str, tag: str, metric: str) -> str:
    """Strategy `name`'s `metric` over the questions tagged `tag`, as a table cell."""
    if not tag_count(result, tag):
        return NOT_MEASURED  # no scored question carries this tag
    return share(result.by_tag.get(name, {}).get(tag, {}).get(metric))


def tag_table(result: EvalResult, metric: str = "hit@3") -> str:
    """`metric` per question tag (rows) and strategy (columns), with the tag's question
    count."""
    names = list(result.strategies)
    lines = [
        "| tag | questions | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for tag in question_tags(result):
        cells = [tag_cell(result, n, tag, metric) for n in names]
        lines.append(f"| {tag} | {tag_count(result, tag)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


DOC_METRICS = ("questions", "hit@3", "mrr@10", "tokens@3", "chunks", *COUNTS[1:], "bookmarks")


def _doc_cell(per: dict[str, float], metric: str) -> str:
    if metric in (*RETRIEVAL, "tokens@3") and not per.get("questions"):
        return NOT_MEASURED  # no scored question on this document
    if metric == "bookmarks":  # the PDF's bookmark titles carried as headings, of all
        total = per.get("bookmarks", 0.0)
        return f"{per.get('bookmarks_found', 0.0):.0f} of {total:.0f}" if total else "–"
    if metric in ("questions", "chunks"):
        return f"{per.get(metric, 0.0):.0f}"
    return format_number(metric, per.get(metric))


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
            cells = [format_number(m, metrics.get(m)) for m in OFFSET_METRICS]
            lines.append(f"| {name} | {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def headline(result: EvalResult) -> str:
    """One sentence reading the default policy against the common recipe (512-token
    windows, overlap 64), when both were evaluated."""
    default = result.strategies.get("default")
    base = result.strategies.get(BASELINE)
    if not default or not base:
        return ""
    if default.get("hit@3") is None or base.get("hit@3") is None:
        return (
            f"No question was scored, so retrieval is not measured; the default policy's "
            f"chunks have {default['orphans']:.0f} orphan table values, "
            f"{default['mid_line_starts']:.0f} mid-line starts and "
            f"{default['truncated']:.0f} truncated chunks."
        )
    ratio = default["tokens@3"] / base["tokens@3"] if base.get("tokens@3") else 0.0
    over = "mean over start offsets" if result.start_offsets > 1 else "one start offset"
    return (
        f"The default policy reaches hit@3 {default['hit@3']:.2f} against "
        f"{base['hit@3']:.2f} for {BASELINE} ({over}), sending "
        f"{default['tokens@3']:.0f} tokens for the top 3 against {base['tokens@3']:.0f} "
        f"({ratio:.0%}); its chunks have {default['orphans']:.0f} orphan table values, "
        f"{default['mid_line_starts']:.0f} mid-line starts and {default['truncated']:.0f} "
        "truncated chunks."
    )


INTRO = (
    "Retrieval: hit@k, mrr@10 (higher is better). What the LLM gets: answer_complete@3 "
    "(one top-3 chunk holds every expected answer string), tokens@3 (tokens sent for "
    "the top 3). Damage (lower is better): orphan table values, chunks starting "
    "mid-line, chunks truncated by the model, tables read without named columns (their "
    "rows indexed under the printed header lines), tables flagged for values the reader "
    "left without their header (indexed all the same), twin confusion. – : not measured."
)


def offsets_note(result: EvalResult) -> str:
    """How the size-based strategies ran, as it ran: the mean of several start offsets
    with its (min–max), or one start offset (no range); empty without any."""
    if result.start_offsets > 1:
        return (
            f"Size-based strategies: mean over {result.start_offsets} start offsets, "
            "(min–max) where they differ."
        )
    if any(_sized(name) for name in result.strategies):
        return "Size-based strategies: one start offset (0), so no range."
    return ""


def _sized(name: str) -> bool:
    from rag_assets.core.chunking import SIZED

    return SIZED.match(name.removesuffix("-noheader")) is not None


def summary(result: EvalResult, sources: Sequence[str]) -> str:
    """The report's first line: how many questions, from which files, which retrieval."""
    origin = ", ".join(sources) or "no question file, none drawn"
    kinds = ", ".join(f"{n} {kind}" for kind, n in result.kinds.items())
    text = (
        f"Questions scored: {result.questions} (from {origin}"
        + (f"; drawn from the lake: {kinds}" if kinds else "")
        + f"); retrieval: {result.mode}, k=10."
    )
    if not result.questions:
        text += " No question was scored: every retrieval figure is – (not measured)."
    return f"{text} {offsets_note(result)}".strip()


ABSTENTION = ("answered_out_of_scope", "refused_in_scope", "hit@3", "hit@3_min_score")


def abstention_note(result: EvalResult) -> str:
    """What the abstention figures are, at which min_score, over how many questions."""
    default = result.strategies.get("default", {})
    if result.min_score is None or "out_of_scope_questions" not in default:
        return "Abstention is not measured in mode fts (no cosine, no min_score)."
    return (
        f"A search drops the hits whose cosine to the question is below min_score "
        f"{result.min_score:g} (what `trecho search`, `POST /search` and MCP apply by "
        f"default for {result.model or 'this model'}). answered_out_of_scope: share of the "
        f"{default['out_of_scope_questions']:.0f} out-of-scope questions (no expected "
        f"answer) that still get a hit; refused_in_scope: share of the "
        f"{default.get('questions', 0):.0f} scored questions that get none; hit@3_min_score: "
        "hit@3 once the hits below min_score are dropped. Lower is better for the first "
        "two."
    )


def abstention_rows(result: EvalResult) -> list[tuple[str, list[str]]]:
    """(strategy, cells of ABSTENTION) at the report's min_score."""
    rows = []
    for name, metrics in result.strategies.items():
        if "answered_out_of_scope" in metrics:
            rows.append((name, [share(metrics.get(m)) for m in ABSTENTION]))
    return rows


def abstention_table(result: EvalResult) -> str:
    """Per strategy: answered when it should not, refused when it should not, hit@3
    without and with min_score."""
    lines = ["| strategy | " + " | ".join(ABSTENTION) + " |", "|---|" + "---:|" * len(ABSTENTION)]
    lines += [f"| {n} | " + " | ".join(c) + " |" for n, c in abstention_rows(result)]
    return "\n".join(lines)


SWEEP = ("min_score", "answered_out_of_scope", "refused_in_scope", "hit@3")


def sweep_rows(result: EvalResult) -> list[tuple[str, list[str]]]:
    """(mark, cells of SWEEP) per threshold of the default policy's sweep; mark is
    `default` on the row of the report's min_score."""
    rows = []
    for point in result.sweep:
        mark = "default" if point["min_score"] == result.min_score else ""
        cells = [f"{point['min_score']:g}"] + [share(point.get(m)) for m in SWEEP[1:]]
        rows.append((mark, cells))
    return rows


def sweep_table(result: EvalResult) -> str:
    """The default policy's abstention figures at each threshold (the served default in
    bold)."""
    lines = ["| " + " | ".join(SWEEP) + " |", "|" + "---:|" * len(SWEEP)]
    for mark, cells in sweep_rows(result):
        shown = [f"**{c}**" for c in cells] if mark else cells
        lines.append("| " + " | ".join(shown) + " |")
    return "\n".join(lines)


QUESTION_COLUMNS = ("id", "question", "tags", "expected", "top 3", "result")


def _hit_text(hit: JudgedHit) -> str:
    cosine = f", cos {hit.cosine:.3f}" if hit.cosine is not None else ""
    mark = " ✓" if hit.relevant else ""
    return f"{hit.doc_id} › {hit.path or '(início)'} (score {hit.score:.4f}{cosine}){mark}"


def question_outcome(result: EvalResult, question: QuestionResult) -> tuple[str, bool]:
    """What the default policy did on one question, and whether that is a failure: a hit
    at rank r (`hit@r`) or a `miss` for a scored question; for an out-of-scope one,
    `abstains` or `answers` at min_score; `not scored` when its labels are not indexed."""
    from rag_assets.core.eval.metrics import answers

    if question.answerable:
        rank = question.rank
        return ("miss", True) if rank is None or rank > 3 else (f"hit@{rank}", False)
    if question.out_of_scope:
        if result.min_score is None:
            return ("out of scope (no min_score)", False)
        cosines = [h.cosine for h in question.hits]
        answered = answers(cosines, result.min_score)
        best = max((c for c in cosines if c is not None), default=None)
        best_text = f" (best cos {best:.3f})" if best is not None else ""
        return (("answers" if answered else "abstains") + best_text, answered)
    return ("not scored (labels not indexed)", False)


def question_rows(result: EvalResult) -> list[tuple[bool, list[str]]]:
    """(failed, cells of QUESTION_COLUMNS) for every question of the default policy,
    failures first; the top 3 as `doc › path (score, cos)` with ✓ on relevant hits."""
    rows = []
    for q in result.per_question:
        outcome, failed = question_outcome(result, q)
        top = " · ".join(_hit_text(h) for h in q.hits[:3]) or "(no hit)"
        expected = ", ".join(q.expected) or "– (out of scope)"
        cells = [q.id, q.question, ", ".join(q.tags), expected, top, outcome]
        rows.append((failed, cells))
    return sorted(rows, key=lambda row: not row[0])


def questions_table(result: EvalResult) -> str:
    """Every question with its top 3 and hit or miss (the default policy), failures first."""
    lines = ["| " + " | ".join(QUESTION_COLUMNS) + " |", "|---" * len(QUESTION_COLUMNS) + "|"]
    for _, cells in question_rows(result):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def uncovered_note(result: EvalResult) -> str:
    """The indexed documents no scored question is about (their retrieval is untested)."""
    if not result.uncovered:
        return "Every indexed document has at least one scored question."
    return (
        f"Documents no scored question covers (their retrieval is not measured): "
        f"{', '.join(result.uncovered)}."
    )


def render_markdown(result: EvalResult, title: str, sources: Sequence[str]) -> str:
    """The whole report as Markdown."""
    parts = [f"# {title}", "", summary(result, sources), "", INTRO, ""]
    if headline(result):
        parts += [headline(result), ""]
    parts += [markdown_table(result), "", "## hit@3 by question tag", "", tag_table(result), ""]
    parts += ["## Abstention (min_score)", "", abstention_note(result), ""]
    if abstention_rows(result):
        parts += [abstention_table(result), ""]
    if result.sweep:
        parts += ["Default policy, by min_score:", "", sweep_table(result), ""]
    if result.per_question:
        parts += ["## Each question (default policy)", "", uncovered_note(result), ""]
        parts += [questions_table(result), ""]
    if result.by_doc:
        parts += ["## By document", "", doc_table(result), ""]
    if result.offsets:
        parts += ["## Size-based strategies by start offset", "", offsets_table(result), ""]
    return "\n".join(parts)
