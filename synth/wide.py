"""Wide layouts (issue 41): landscape tables of 20-30 narrow columns under two heading
levels in small type, a group heading over a repeated set of three to six sub-columns;
header cells crowded so neighbouring headings touch; wrapped headings centred vertically;
a stub printed apart from the values; rows whose label sits on a line of its own. Drawn
for the wide seed ranges only (`spec.WIDE_FROM` and up), printed by Chromium."""

from __future__ import annotations

import random

from .spec import Doc, Head, Page, Row, Table, pick, split
from .words import (
    DIMENSIONS,
    GROUP_WORDS,
    NA_MARKS,
    STUB_GROUPS,
    STUB_HEADS,
    STUB_PARENTS,
    TOPICS,
    TOTALS,
    WIDE_SUBS,
    figure,
    paragraph,
)


def wide_heads(rng: random.Random) -> list[Head]:
    """Two heading rows over 20-30 data columns: groups over one repeated sub-column set,
    sometimes a `Total` column spanning both rows at the left."""
    subs = rng.choice(WIDE_SUBS)
    k = rng.randint(3, min(6, len(subs)))
    labels = subs[:k] if rng.random() < 0.6 else rng.sample(subs, k)
    total = rng.random() < 0.4
    groups = max(2, min(10, round(rng.uniform(20, 30) / k)))
    while groups * k + total < 20:
        groups += 1
    while groups * k + total > 30:
        groups -= 1
    pool = rng.choice([GROUP_WORDS, DIMENSIONS["years"], DIMENSIONS["months"], GROUP_WORDS])
    names = rng.sample(pool, groups) if pool is GROUP_WORDS else None
    if names is None:
        start = rng.randrange(0, max(1, len(pool) - groups + 1))
        names = (pool[start : start + groups] + GROUP_WORDS)[:groups]
    heads: list[Head] = []
    col = 0
    if total:
        heads.append(Head(rng.choice(["Total", "All", "Total, all"]), 0, 0, 0, 2))
        col = 1
    for name in names:
        index = len(heads)
        heads.append(Head(name, 0, col, col))
        for text in labels:
            heads.append(Head(text, 1, col, col))
            col += 1
        heads[index].last = col - 1
    return heads


def wide_rows(rng: random.Random, count: int) -> tuple[list[Row], str, str]:
    """Stub rows near `count`: flat, or grouped under label-only group rows; the theme and
    the shape."""
    theme = rng.choice(["state", "country", "division", "industry", "state"])
    labels = STUB_GROUPS[theme]
    if rng.random() < 0.6:
        n = min(len(labels), count)
        start = rng.randrange(0, len(labels) - n + 1)
        return [Row(t, 0, []) for t in labels[start : start + n]], theme, "flat"
    rows: list[Row] = []
    per = max(2, count // 4)
    for parent in STUB_PARENTS[theme][: rng.randint(2, 4)]:
        rows.append(Row(parent, 0))
        k = rng.randint(2, min(len(labels), per))
        start = rng.randrange(0, len(labels) - k + 1)
        rows.extend(Row(t, 1, []) for t in labels[start : start + k])
    return rows, theme, "grouped"


def draw_wide_table(rng: random.Random, name: str, long: bool) -> Table:
    """One wide table; `long`: runs over pages."""
    heads = wide_heads(rng)
    n = max(h.last for h in heads) + 1
    count = rng.randint(55, 80) if long else rng.randint(12, 45)
    rows, theme, shape = wide_rows(rng, count)
    total = rng.random() < 0.5
    if total:
        rows.insert(0, Row(rng.choice(TOTALS), 0, [], total=True))
    alone = rng.random() < 0.3
    for row in rows:
        if row.values is not None and alone and (len(row.label) > 14 or rng.random() < 0.3):
            row.alone = True
    scale = [10 ** rng.randint(2, 5) for _ in range(n)]
    kinds = [rng.choice(["count", "count", "count", "decimal", "change"]) for _ in range(n)]
    na = rng.choice([0.0, 0.02, 0.06])
    for row in rows:
        if row.values is None:
            continue
        row.values = [figure(rng, kinds[j], scale[j], ",", "-") for j in range(n)]
        for j in range(n):
            if rng.random() < na:
                row.values[j] = rng.choice(NA_MARKS[:6])
                row.na.add(j)
    style = pick(
        rng, {"borderless": 0.3, "booktabs": 0.25, "grid": 0.2, "shaded": 0.1, "zebra": 0.15}
    )
    title = f"Table {rng.randint(1, 99)}. {rng.choice(TOPICS)} by {theme}"
    notes = ["Note: " + paragraph(rng, 1)] if rng.random() < 0.5 else []
    table = Table(
        name=name,
        title=title,
        heads=heads,
        depth=2,
        units=[],
        stub_head=rng.choice(STUB_HEADS),
        rows=rows,
        notes=notes,
        style=style,
        group_rules=rng.random() < 0.5,
        font=pick(rng, {"sans": 0.45, "serif": 0.3, "condensed": 0.25}),
        size=rng.choice([5.0, 5.5, 6.0, 6.5, 7.0]),
        stub_width=rng.choice([0.0, 0.0, 80.0]),
        head_align=pick(rng, {"center": 0.8, "left": 0.2}),
        head_valign=pick(rng, {"middle": 0.6, "bottom": 0.3, "top": 0.1}),
        head_width=rng.choice([20.0, 24.0, 28.0, 34.0]),
        crowded=rng.random() < 0.5,
        stub_gap=rng.uniform(25, 90) if rng.random() < 0.4 else 0.0,
    )
    table.features = {
        "style": style,
        "depth": "2",
        "columns": "11-20" if n <= 20 else "21-30",
        "stub": shape,
        "valueless groups": "yes" if shape == "grouped" else "no",
        "group rules": "yes" if table.group_rules else "no",
        "units": "no",
        "not-available marks": "yes" if na else "no",
        "footnote marks": "no",
        "totals": "yes" if total else "no",
        "wrapped stub": "yes" if table.stub_width else "no",
        "font": table.font,
        "number format": "en",
        "leaders": "no",
        "loose rows": "no",
        "heading align": f"{table.head_align} {table.head_valign}",
        "wide": "yes",
        "crowded headings": "yes" if table.crowded else "no",
        "stub apart": "yes" if table.stub_gap else "no",
        "label on its own line": "yes" if alone else "no",
    }
    return table


def draw_wide_doc(seed: int) -> Doc:
    """The wide document of one seed: a landscape page (sometimes /Rotate'd), one table,
    over pages at times."""
    rng = random.Random(f"wide:{seed}")
    layout = pick(rng, {"single": 0.8, "multipage": 0.2})
    table = draw_wide_table(rng, f"s{seed}-t1", layout == "multipage")
    turn = "rotate" if rng.random() < 0.15 else ""
    if layout == "multipage":
        per_page = rng.randint(28, 40)
        pages = [Page([part]) for part in split(table, per_page)]
    else:
        prose = [paragraph(rng, rng.randint(1, 2))] if rng.random() < 0.3 else []
        pages = [Page([table], prose)]
    for page in pages:
        for t in page.tables:
            t.features.update(
                producer="chromium", layout=layout, page="rotate" if turn else "landscape"
            )
    return Doc(seed, "chromium", True, turn, pages)
