"""What a synthetic document holds, drawn from one seed: pages, the tables on them (heading
tree, stub rows, values) and how each is styled. Producer-neutral: `chromium.py` and
`lab.py` print the same spec, `truth.py` turns it into ground truth."""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field

from .words import (
    DIMENSIONS,
    GROUP_WORDS,
    NA_MARKS,
    NOTE_MARKS,
    STUB_GROUPS,
    STUB_HEADS,
    STUB_PARENTS,
    TOPICS,
    TOTALS,
    UNITS,
    figure,
    paragraph,
)

STYLES = ("borderless", "booktabs", "grid", "shaded", "zebra")
A4 = (595.28, 841.89)  # points, portrait


@dataclass
class Head:
    """A heading cell: text, header row, first and last data column, header rows spanned."""

    text: str
    level: int
    first: int
    last: int
    rows: int = 1


@dataclass
class Row:
    """A printed stub row: label, indent level, values (None: a group row without values),
    footnote marks after the label and after values (column -> mark)."""

    label: str
    level: int = 0
    values: list[str] | None = None
    mark: str = ""
    marks: dict[int, str] = field(default_factory=dict)
    na: set[int] = field(default_factory=set)  # columns printing a not-available mark
    total: bool = False
    continued: bool = False  # a group label printed again at the top of a page
    alone: bool = False  # the label printed on a line of its own, its values on the next


@dataclass
class Table:
    """One printed table (a page's part of it when it runs over pages)."""

    name: str
    title: str
    heads: list[Head]
    depth: int  # heading rows, units row excluded
    units: list[str]  # one per data column, or empty: no units row
    stub_head: str
    rows: list[Row]
    notes: list[str]
    style: str
    group_rules: bool  # a rule under each heading spanning columns
    font: str  # serif, sans, condensed, mono
    size: float
    stub_width: float  # points; 0: as wide as the longest label
    features: dict[str, str] = field(default_factory=dict)
    leaders: bool = False  # dot leaders from a row label to its first value
    loose: bool = False  # space above group and total rows
    head_align: str = "center"  # headings: center, left
    head_valign: str = "bottom"  # headings: bottom, middle, top
    head_width: float = 70.0  # points a one-column heading may take before it wraps
    crowded: bool = False  # cells padded to a hair: neighbouring headings touch
    stub_gap: float = 0.0  # points of blank between the stub and the first values

    @property
    def n_cols(self) -> int:
        return max(h.last for h in self.heads) + 1

    @property
    def header_rows(self) -> int:
        return self.depth + (1 if self.units else 0)


@dataclass
class Page:
    """A page: its tables in print order, prose paragraphs, and whether the prose runs in
    two columns with the table inside the left one."""

    tables: list[Table]
    prose: list[str] = field(default_factory=list)
    columns: bool = False


@dataclass
class Doc:
    """One PDF from one seed."""

    seed: int
    producer: str  # chromium, reportlab
    landscape: bool
    turn: str  # "", "sideways" (drawn turned on a portrait page), "rotate" (+ /Rotate 90)
    pages: list[Page]

    @property
    def size(self) -> tuple[float, float]:
        """Page width and height in points, as the page is drawn (before any /Rotate)."""
        if self.landscape and not self.turn:
            return A4[1], A4[0]
        return A4


def pick(rng: random.Random, weights: dict[str, float]) -> str:
    """A key drawn with the given weights."""
    keys = list(weights)
    return rng.choices(keys, [weights[k] for k in keys])[0]


# --- headings ----------------------------------------------------------------------------


def heading_tree(rng: random.Random, depth: int, max_cols: int) -> list[Head]:
    """A heading tree `depth` rows deep over at most `max_cols` data columns: group headings
    over dimensions (years, sexes, measures), sometimes a `Total` column spanning every
    heading row, and sometimes groups with different sub-columns."""
    levels: list[list[str]] = []
    for level in range(depth):
        leaf = level == depth - 1
        if depth == 1 or (not leaf and level == 0 and rng.random() < 0.6):
            pool = rng.choice([GROUP_WORDS, DIMENSIONS["years"], DIMENSIONS["months"]])
        else:
            pool = DIMENSIONS[rng.choice(list(DIMENSIONS))]
        levels.append(pool)
    budget = max_cols
    sizes = []
    for level, pool in enumerate(levels):
        room = max(2, round(budget ** (1 / (depth - level))))
        n = rng.randint(2 if level < depth - 1 else 1, max(2, min(len(pool), room)))
        if depth == 1:
            n = rng.randint(2, min(len(pool), max_cols))
        sizes.append(max(1, n))
        budget = max(1, budget // sizes[-1])
    ragged = rng.random() < 0.3
    heads: list[Head] = []
    col = 0
    if depth > 1 and rng.random() < 0.4:
        heads.append(Head(rng.choice(["Total", "All", "Total, all"]), 0, 0, 0, depth))
        col = 1
    used: set[str] = set()

    def build(level: int, first: int) -> int:
        pool = levels[level]
        start = rng.randrange(0, max(1, len(pool) - sizes[level] + 1))
        labels = pool[start : start + sizes[level]]
        if level == 0 and levels[0] is GROUP_WORDS:
            labels = rng.sample([w for w in GROUP_WORDS if w not in used], sizes[level])
        if ragged and level > 0 and len(labels) > 1:
            labels = labels[: rng.randint(1, len(labels))]
        c = first
        for text in labels:
            if level == depth - 1:
                heads.append(Head(text, level, c, c))
                c += 1
            else:
                used.add(text)
                index = len(heads)
                heads.append(Head(text, level, c, c))
                c = build(level + 1, c)
                heads[index].last = c - 1
        return c

    build(0, col)
    return heads


# --- stub --------------------------------------------------------------------------------


def stub_rows(rng: random.Random, shape: str, count: int) -> tuple[list[Row], str]:
    """Stub rows of `shape` (flat, grouped, nested) near `count` rows, and the stub theme."""
    theme = rng.choice(list(STUB_PARENTS))
    labels = STUB_GROUPS[theme]
    rows: list[Row] = []
    if shape == "flat":
        n = min(len(labels), max(2, count))
        start = rng.randrange(0, len(labels) - n + 1)
        return [Row(t, 0, []) for t in labels[start : start + n]], theme
    valueless = rng.random() < 0.65
    parents = STUB_PARENTS[theme]
    tops = ["Both sexes", "Male", "Female"] if shape == "nested" else [""]
    per_parent = max(1, count // max(1, len(tops) * 3))
    for top in tops:
        if top:
            rows.append(Row(top, 0))
        n_par = rng.randint(2, min(4, len(parents)))
        for parent in parents[:n_par]:
            rows.append(Row(parent, 1 if top else 0))
            if not valueless or rng.random() < 0.15:
                rows[-1].values = []
            k = rng.randint(2, max(2, min(len(labels), per_parent)))
            start = rng.randrange(0, len(labels) - k + 1)
            rows.extend(Row(t, 2 if top else 1, []) for t in labels[start : start + k])
    return rows, theme


def fill(rng: random.Random, table: Table, na: float, marks: float) -> None:
    """Values for every row that has them: one kind and scale per top heading."""
    n = table.n_cols
    kinds: list[str] = []
    scales: list[float] = []
    sep = "," if rng.random() < 0.85 else " "
    minus = rng.choice(["-", "-", "−", "("])
    for j in range(n):
        over = [h for h in table.heads if h.first <= j <= h.last]
        word = max(over, key=lambda h: h.level).text.lower()
        kind = "percent" if "percent" in word else "decimal" if "rate" in word else ""
        top = min(over, key=lambda h: h.level)
        rnd = random.Random(zlib.crc32(top.text.encode()) + rng.randint(0, 3))
        kinds.append(kind or rnd.choice(["count", "count", "decimal", "money", "change", "index"]))
        scales.append(10 ** rnd.randint(2, 7))
    for row in table.rows:
        if row.values is None:
            continue
        row.values = [figure(rng, kinds[j], scales[j], sep, minus) for j in range(n)]
        for j in range(n):
            if rng.random() < na:
                row.values[j] = rng.choice(NA_MARKS[:6])
                row.na.add(j)
            elif rng.random() < marks:
                row.marks[j] = rng.choice(NOTE_MARKS[3:])
        if rng.random() < marks:
            row.mark = rng.choice(NOTE_MARKS)


def draw_table(rng: random.Random, name: str, narrow: bool, long: bool) -> Table:
    """One random table; `narrow`: for a text column, `long`: runs over pages."""
    depth = rng.choices([1, 2, 3, 4], [0.3, 0.35, 0.2, 0.15])[0]
    max_cols = rng.choice([4, 6, 8, 10, 12, 16, 20, 24, 30])
    if narrow:
        depth, max_cols = min(depth, 2), rng.randint(2, 4)
    heads = heading_tree(rng, depth, max_cols)
    n = max(h.last for h in heads) + 1
    if n > 30 or n < 2:
        return draw_table(rng, name, narrow, long)
    shape = pick(rng, {"flat": 0.35, "grouped": 0.45, "nested": 0.2})
    count = rng.randint(60, 110) if long else rng.randint(3, 12 if narrow else 28)
    if long and shape == "flat":
        shape = "grouped"
    rows, theme = stub_rows(rng, shape, count)
    total = rng.random() < 0.45
    if total:
        at = 0 if rng.random() < 0.6 else len(rows)
        rows.insert(at, Row(rng.choice(TOTALS), 0, [], total=True))
    for i, row in enumerate(rows):  # a group label has rows under it; else it has values
        below = i + 1 < len(rows) and rows[i + 1].level > row.level
        if row.values is None and not below:
            row.values = []
    units = [rng.choice(UNITS) for _ in range(n)] if rng.random() < 0.25 else []
    if units and rng.random() < 0.5:
        units = [rng.choice(UNITS)] * n
    style = pick(
        rng, {"borderless": 0.25, "booktabs": 0.25, "grid": 0.2, "shaded": 0.15, "zebra": 0.15}
    )
    size = rng.choice([6.0, 7.0, 7.5, 8.0, 8.5, 9.0, 10.0])
    if n > 12:
        size = min(size, rng.choice([5.5, 6.0, 6.5, 7.0]))
    topic = rng.choice(TOPICS)
    title = f"Table {rng.randint(1, 99)}. {topic} by {theme}" + (
        f", {rng.randint(2015, 2024)}" if rng.random() < 0.5 else ""
    )
    notes = []
    if rng.random() < 0.6:
        notes.append("Note: " + paragraph(rng, 1))
    if rng.random() < 0.5:
        notes.append("Source: " + rng.choice(["Bureau of Statistics", "Statistical Office"]))
    table = Table(
        name=name,
        title=title,
        heads=heads,
        depth=depth,
        units=units,
        stub_head=rng.choice(STUB_HEADS),
        rows=rows,
        notes=notes,
        style=style,
        group_rules=rng.random() < 0.5,
        font=pick(rng, {"sans": 0.4, "serif": 0.35, "condensed": 0.2, "mono": 0.05}),
        size=size,
        stub_width=rng.choice([0.0, 0.0, 90.0, 120.0]) if not narrow else 70.0,
    )
    na = rng.choice([0.0, 0.0, 0.03, 0.1])
    marks = rng.choice([0.0, 0.0, 0.04])
    fill(rng, table, na, marks)
    valueless = any(r.values is None for r in rows)
    table.features = {
        "style": style,
        "depth": str(depth),
        "columns": "2-4" if n <= 4 else "5-10" if n <= 10 else "11-20" if n <= 20 else "21-30",
        "stub": shape,
        "valueless groups": "yes" if valueless else "no",
        "group rules": "yes" if table.group_rules and depth > 1 else "no",
        "units": "yes" if units else "no",
        "not-available marks": "yes" if na else "no",
        "footnote marks": "yes" if marks else "no",
        "totals": "yes" if total else "no",
        "wrapped stub": "yes" if table.stub_width else "no",
        "font": table.font,
    }
    vary(table)
    return table


def pt_number(text: str) -> str:
    """A number as Portuguese and most of Europe print it: `1.234,5`."""
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


def vary(table: Table) -> None:
    """Variants drawn from the table's own name (the draws before stay as they were):
    number format, dot leaders, loose group rows, heading alignment."""
    rng = random.Random(f"{table.name}:vary")
    numbers = pick(rng, {"en": 0.75, "pt": 0.25})
    if numbers == "pt":
        for row in table.rows:
            if row.values:
                row.values = [v if j in row.na else pt_number(v) for j, v in enumerate(row.values)]
    if any(" " in v for r in table.rows for v in r.values or [] if v[:1].isdigit()):
        numbers += " (space)"
    table.leaders = table.style in ("borderless", "booktabs") and rng.random() < 0.3
    table.loose = rng.random() < 0.25
    table.head_align = pick(rng, {"center": 0.7, "left": 0.3})
    table.head_valign = pick(rng, {"bottom": 0.7, "middle": 0.2, "top": 0.1})
    table.features.update(
        {
            "number format": numbers,
            "leaders": "yes" if table.leaders else "no",
            "loose rows": "yes" if table.loose else "no",
            "heading align": f"{table.head_align} {table.head_valign}",
        }
    )


def split(table: Table, per_page: int) -> list[Table]:
    """A long table cut into pages: header printed again on each page, the open group's
    label printed again as `label (continued)` at the top of a page."""
    parts: list[Table] = []
    rows = table.rows
    for k, start in enumerate(range(0, len(rows), per_page)):
        chunk = list(rows[start : start + per_page])
        if start and chunk and chunk[0].level > 0:
            open_groups: dict[int, Row] = {}
            for r in rows[:start]:
                open_groups = {lv: g for lv, g in open_groups.items() if lv < r.level}
                open_groups[r.level] = r
            carried = [
                Row(g.label, g.level, None, continued=True)
                for lv, g in sorted(open_groups.items())
                if lv < chunk[0].level
            ]
            chunk = carried + chunk
        title = table.title if not k else f"{table.title.split('.')[0]}. (continued)"
        part = Table(**{**table.__dict__, "title": title, "rows": chunk})
        part.name = f"{table.name}-p{k + 1}"
        part.notes = []
        parts.append(part)
    if parts:
        parts[-1].notes = table.notes
    return parts


WIDE_FROM = 20000  # seeds from here on draw the wide layouts of `wide.py`
LAST_FROM = 30000  # seeds from here on draw the last-mile layouts of `lastmile.py`


def draw_doc(seed: int) -> Doc:
    """The document of one seed: producer, page shape and the tables on its pages."""
    if seed >= LAST_FROM:
        from .lastmile import draw_lastmile_doc

        return draw_lastmile_doc(seed)
    if seed >= WIDE_FROM:
        from .wide import draw_wide_doc

        return draw_wide_doc(seed)
    rng = random.Random(seed)
    producer = "chromium" if rng.random() < 0.5 else "reportlab"
    layout = pick(rng, {"single": 0.45, "two": 0.15, "multipage": 0.2, "columns": 0.2})
    first = draw_table(rng, f"s{seed}-t1", layout == "columns", layout == "multipage")
    wide = first.n_cols > 12
    turn = ""
    landscape = wide and rng.random() < 0.7 or rng.random() < 0.1
    if landscape and layout != "columns" and rng.random() < 0.35:
        turn = rng.choice(["sideways", "rotate"])
    pages: list[Page] = []
    if layout == "multipage":
        usable = (A4[0] if landscape else A4[1]) - 140
        line = first.size * 1.25 + 4
        per_page = max(12, int(usable / line / 1.2) - first.header_rows * 2)
        pages = [Page([part]) for part in split(first, per_page)]
    elif layout == "two":
        second = draw_table(rng, f"s{seed}-t2", False, False)
        for t in (first, second):
            t.rows = t.rows[: rng.randint(3, 12)]
            while t.rows and t.rows[-1].values is None:
                t.rows.pop()
            if wide or second.n_cols > 12:
                t.size = min(t.size, 6.0)
        pages = [Page([first, second])]
    elif layout == "columns":
        prose = [paragraph(rng, rng.randint(2, 5)) for _ in range(rng.randint(3, 6))]
        pages = [Page([first], prose, columns=True)]
    else:
        prose = [paragraph(rng, rng.randint(1, 3))] if rng.random() < 0.4 else []
        pages = [Page([first], prose)]
    doc = Doc(seed, producer, landscape, turn, pages)
    if producer == "reportlab":  # its standard fonts have no U+2212: a hyphen for minus
        for t in (t for p in pages for t in p.tables if t.font != "condensed"):
            for row in t.rows:
                row.values = [v.replace("−", "-") for v in row.values] if row.values else row.values
    for page in pages:
        for t in page.tables:
            t.features.update(
                producer=producer,
                layout=layout,
                page="rotate"
                if turn == "rotate"
                else turn or ("landscape" if landscape else "portrait"),
            )
    return doc
