"""Last-mile layouts (issue 60): a header line of fewer cells than the body (a period
heading over each value/percent pair), headers three levels deep, stubs indented under
group labels, stubs printed apart from the values. Drawn for the last-mile seed ranges
only (`spec.LAST_FROM` and up), printed by Chromium, in ordinary type on a portrait page
(landscape when the columns are many)."""

from __future__ import annotations

import random

from .spec import Doc, Head, Page, Row, Table, pick
from .words import (
    DIMENSIONS,
    GROUP_WORDS,
    STUB_GROUPS,
    STUB_PARENTS,
    TOPICS,
    TOTALS,
    figure,
    paragraph,
)

PAIRS = (
    ("$000's", "%"),
    ("Amount", "%"),
    ("Number", "Percent"),
    ("$ millions", "Share"),
    ("Value", "% of total"),
    ("Balance", "% of loans"),
)
"""The value and percent headings repeated under each period."""

MONTH_ENDS = ("3/31", "6/30", "9/30", "12/31")


def periods(rng: random.Random, n: int) -> list[str]:
    """`n` period headings in order: dates at the end of a quarter (`12/31/2009`), years,
    fiscal years or dates written out (`Dec. 31, 2010`)."""
    year = rng.randint(2004, 2020)
    kind = pick(rng, {"dates": 0.5, "years": 0.2, "fiscal": 0.1, "written": 0.2})
    if kind == "dates":
        out, quarter = [], rng.randrange(4)
        for _ in range(n):
            out.append(f"{MONTH_ENDS[quarter]}/{year}")
            step = rng.choice([2, 4])  # half years or years apart
            quarter, year = (quarter + step) % 4, year + (quarter + step) // 4
        return out
    if kind == "years":
        return [str(year + k) for k in range(n)]
    if kind == "fiscal":
        return [f"FY {year + k}" for k in range(n)]
    month = rng.choice(["Dec. 31", "June 30", "Sept. 30", "Mar. 31"])
    return [f"{month}, {year + k}" for k in range(n)]


def period_heads(rng: random.Random) -> tuple[list[Head], list[str]]:
    """Two heading rows: a period over each value/percent pair; the kinds of figure under
    each column."""
    pair = rng.choice(PAIRS)
    heads: list[Head] = []
    kinds: list[str] = []
    for k, name in enumerate(periods(rng, rng.randint(2, 5))):
        heads.append(Head(name, 0, 2 * k, 2 * k + 1))
        heads += [Head(pair[0], 1, 2 * k, 2 * k), Head(pair[1], 1, 2 * k + 1, 2 * k + 1)]
        kinds += ["money" if pair[0].startswith("$") and rng.random() < 0.3 else "count"]
        kinds += ["percent"]
    return heads, kinds


def three_level_heads(rng: random.Random) -> tuple[list[Head], list[str]]:
    """Three heading rows: one or two groups, each over two or three middle headings
    (years, sexes, areas), each over two or three leaves (measures)."""
    tops = rng.sample(GROUP_WORDS, rng.randint(1, 2))
    middle = DIMENSIONS[rng.choice(["years", "sex2", "area", "tenure", "sector", "quarters"])]
    leaves = DIMENSIONS[rng.choice(["measure", "estimate", "change", "status", "stat"])]
    n_mid = rng.randint(2, min(3, len(middle)))
    n_leaf = rng.randint(2, min(3, len(leaves)))
    while len(tops) * n_mid * n_leaf > 14:
        n_mid -= 1
    heads: list[Head] = []
    col = 0
    start = rng.randrange(0, len(middle) - n_mid + 1)
    for top in tops:
        first = col
        for mid in middle[start : start + n_mid]:
            heads.append(Head(mid, 1, col, col + n_leaf - 1))
            for leaf in leaves[:n_leaf]:
                heads.append(Head(leaf, 2, col, col))
                col += 1
        heads.append(Head(top, 0, first, col - 1))
    heads.sort(key=lambda h: (h.level, h.first))
    kinds = [
        "percent" if "Percent" in h.text or "%" in h.text else "count"
        for h in sorted((h for h in heads if h.level == 2), key=lambda h: h.first)
    ]
    return heads, kinds


def stub_rows(rng: random.Random, shape: str) -> tuple[list[Row], str]:
    """Stub rows: flat, or indented under group labels (group rows with or without
    values, a third level at times); the theme."""
    theme = rng.choice(sorted(STUB_PARENTS))
    labels = STUB_GROUPS.get(theme) or STUB_GROUPS["state"]
    if shape != "indented":
        n = min(len(labels), rng.randint(5, 14))
        start = rng.randrange(0, len(labels) - n + 1)
        return [Row(t, 0, []) for t in labels[start : start + n]], theme
    rows: list[Row] = []
    valued = rng.random() < 0.5  # group rows print their own totals
    deep = rng.random() < 0.3
    for parent in STUB_PARENTS[theme][: rng.randint(2, 3)]:
        rows.append(Row(parent, 0, [] if valued else None))
        k = rng.randint(2, min(5, len(labels)))
        start = rng.randrange(0, len(labels) - k + 1)
        for j, label in enumerate(labels[start : start + k]):
            if deep and j == 0:
                rows.append(Row(label, 1, None))
                rows += [Row(s, 2, []) for s in rng.sample(DIMENSIONS["sex"][1:], 2)]
            else:
                rows.append(Row(label, 1, []))
    return rows, theme


def draw_lastmile_table(rng: random.Random, name: str) -> Table:
    """One last-mile table: a header of periods over pairs or three levels deep, a stub
    flat, indented or printed apart (the stub's kind drawn apart from the header's)."""
    header = pick(rng, {"periods": 0.55, "three-level": 0.45})
    heads, kinds = period_heads(rng) if header == "periods" else three_level_heads(rng)
    depth = 1 + max(h.level for h in heads)
    n = max(h.last for h in heads) + 1
    stub = pick(rng, {"indented": 0.4, "apart": 0.35, "flat": 0.25})
    rows, theme = stub_rows(rng, stub)
    if rng.random() < 0.4:
        rows.append(Row(rng.choice(TOTALS), 0, [], total=True))
    scale = [10 ** rng.randint(2, 5) for _ in range(n)]
    for row in rows:
        if row.values is not None:
            row.values = [figure(rng, kinds[j], scale[j], ",", "-") for j in range(n)]
    style = pick(rng, {"borderless": 0.3, "booktabs": 0.35, "grid": 0.15, "zebra": 0.2})
    table = Table(
        name=name,
        title=f"Table {rng.randint(1, 99)}. {rng.choice(TOPICS)} by {theme}",
        heads=heads,
        depth=depth,
        units=[],
        stub_head=rng.choice(["", "", "Item", "Category", "Area"]),
        rows=rows,
        notes=["Note: " + paragraph(rng, 1)] if rng.random() < 0.4 else [],
        style=style,
        group_rules=rng.random() < 0.5,
        font=pick(rng, {"sans": 0.45, "serif": 0.4, "condensed": 0.15}),
        size=rng.choice([7.0, 7.5, 8.0, 9.0]),
        stub_width=0.0,
        head_align="center",
        head_valign=pick(rng, {"bottom": 0.7, "middle": 0.3}),
        stub_gap=rng.uniform(25, 90) if stub == "apart" else 0.0,
    )
    table.features = {
        "style": style,
        "depth": str(depth),
        "columns": "2-10" if n <= 10 else "11-20",
        "stub": stub,
        "valueless groups": "yes" if any(r.values is None for r in rows) else "no",
        "group rules": "yes" if table.group_rules else "no",
        "units": "no",
        "not-available marks": "no",
        "footnote marks": "no",
        "totals": "yes" if any(r.total for r in rows) else "no",
        "wrapped stub": "no",
        "font": table.font,
        "number format": "en",
        "leaders": "no",
        "loose rows": "no",
        "heading align": f"{table.head_align} {table.head_valign}",
        "last mile": header,
        "stub apart": "yes" if table.stub_gap else "no",
    }
    return table


def draw_lastmile_doc(seed: int) -> Doc:
    """The last-mile document of one seed: prose and one table on a page."""
    rng = random.Random(f"last:{seed}")
    table = draw_lastmile_table(rng, f"s{seed}-t1")
    landscape = table.n_cols > 8
    prose = [paragraph(rng, rng.randint(1, 2))] if rng.random() < 0.5 else []
    table.features.update(
        producer="chromium", layout="single", page="landscape" if landscape else "portrait"
    )
    return Doc(seed, "chromium", landscape, "", [Page([table], prose)])
