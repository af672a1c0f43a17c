"""Report-like PDFs with a known section tree: the `synth` source of bench/headings.py.

One seed is one PDF and one truth record (`<seed>.json`), drawn with `random.Random(seed)`
and printed by reportlab on a canvas (a small line-by-line layout of its own, so that the
page of every heading, table and distractor is known when it is placed). The PDF and its
truth are written once into `<dir>/v<VERSION>/` (default /tmp/trecho-headings) and read
from there after; a new generator version writes anew.

What a document holds (bench/headings.md): 2-8 pages in one of five languages; a section
tree one to three levels deep whose headings are styled per document and level (numbered
`2.1` / `2.1.` / `II.` / `A.` or not, all caps, centred, bold at body size, larger, run-in,
wrapped over two lines); 0-3 tables with or without a caption; and distractors that are
not headings (table of contents, running heads and footers, a turned margin banner, bold
fragments and phrases, pull quotes, figure labels, one-word list lines, prose that goes on
lower-case after a break, the title block). About 40% carry an outline (bookmarks).

    python bench/synth/headings.py write --seeds tune|report|A-B
    python bench/synth/headings.py check --seeds tune|report|A-B   # truth against the PDF
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__:
    from . import seeds
    from .heading_words import LANGS, Lang, number, paragraph, sentence
else:  # run as a file: python bench/synth/headings.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from synth import seeds
    from synth.heading_words import LANGS, Lang, number, paragraph, sentence

VERSION = 1  # raise when a seed would print differently
TUNE = range(0, 400)  # tune the heading decider on these
REPORT = range(5000, 5300)  # report on these; never tuned on
NAMED = {"tune": TUNE, "report": REPORT}
DEFAULT_DIR = Path("/tmp/trecho-headings")
MAX_PAGES = 8

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FAMILIES = {  # regular, bold, italic, bold italic
    "helvetica": ("Helvetica", "Helvetica-Bold", "Helvetica-Oblique", "Helvetica-BoldOblique"),
    "times": ("Times-Roman", "Times-Bold", "Times-Italic", "Times-BoldItalic"),
    "dejavu": ("DejaVuSans", "DejaVuSans-Bold", "DejaVuSans-Oblique", "DejaVuSans-BoldOblique"),
    "dejaserif": (
        "DejaVuSerif",
        "DejaVuSerif-Bold",
        "DejaVuSerif-Italic",
        "DejaVuSerif-BoldItalic",
    ),
}
_registered = False


def parse_seeds(text: str) -> range | list[int]:
    """`tune`, `report`, `A-B` (inclusive) or `A,B,C`; named ranges joined by `+`."""
    return seeds.parse_seeds(text, NAMED)


def folder(root: Path) -> Path:
    """Where this generator version's seeds live under `root`."""
    return root / f"v{VERSION}"


def register() -> None:
    """Register the DejaVu faces (the standard 14 need nothing)."""
    global _registered
    if _registered:
        return
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    for faces in (FAMILIES["dejavu"], FAMILIES["dejaserif"]):
        for name in faces:
            pdfmetrics.registerFont(TTFont(name, str(FONT_DIR / f"{name}.ttf")))
    _registered = True


def face(family: str, bold: bool = False, italic: bool = False) -> str:
    """The font name of a family's face."""
    return FAMILIES[family][int(bold) + 2 * int(italic)]


def width(text: str, font: str, size: float) -> float:
    """Printed width of `text` in points."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return stringWidth(text, font, size)


# ---- the plan: what a seed's document says, before layout ---------------------------------


@dataclass
class Style:
    """How one heading level looks in a document."""

    family: str
    size: float
    bold: bool
    italic: bool
    caps: bool
    centred: bool
    runin: bool
    hanging: bool  # number and title apart, a wrapped title's lines under the title
    before: float
    after: float


@dataclass
class Heading:
    """A heading of the plan: its number as printed (`label`, `2.1.`), the number alone
    (`2.1`), title as printed (caps applied), level and parent (index or None)."""

    index: int
    level: int
    label: str
    number: str
    title: str
    parent: int | None

    @property
    def text(self) -> str:
        """The printed heading, its number included."""
        return f"{self.label} {self.title}" if self.label else self.title


@dataclass
class Para:
    """A paragraph: prose, optionally opened by a run-in heading, a bold lead-in fragment
    (its first `lead` words) or a bold phrase (words `bold[0]` to `bold[1]`)."""

    text: str
    runin: Heading | None = None
    lead: int = 0
    bold: tuple[int, int] | None = None


@dataclass
class TableSpec:
    """A table: rows (the first is the header), caption (None: none), its place."""

    rows: list[list[str]]
    caption: str | None
    position: str  # above | below
    label: str  # "Table 3", "Tabela A-1" (what the caption starts with; printed or not)
    grid: bool
    shaded: bool


@dataclass
class FigureSpec:
    """A figure-like block: bars with short labels under them and values above."""

    labels: list[str]
    values: list[float]
    texts: list[str]
    caption: str
    bold: bool


@dataclass
class Block:
    """One block of the flow: kind heading | para | list | table | figure | quote."""

    kind: str
    heading: Heading | None = None
    para: Para | None = None
    items: list[str] = field(default_factory=list)
    bullet: str = ""
    table: TableSpec | None = None
    figure: FigureSpec | None = None
    quote: str = ""


@dataclass
class Plan:
    """A seed's document before layout."""

    seed: int
    lang: Lang
    pagesize: tuple[float, float]
    margins: tuple[float, float, float, float]  # left, right, top, bottom
    columns: int
    gutter: float
    family: str
    size: float
    leading: float
    indent: float
    styles: dict[int, Style]
    title: str
    subtitle: str
    running: str
    running_align: str
    footer: str
    toc: bool
    toc_depth: int
    contents: str
    leader: str
    outline: bool
    banner: str | None
    banner_side: str
    caption_style: str  # bold | italic | plain
    blocks: list[Block]


def _roman(n: int) -> str:
    out = ""
    for value, mark in ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out += mark
            n -= value
    return out


def _letter(n: int) -> str:
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[n - 1]


def numbering(scheme: str, counters: list[int]) -> tuple[str, str]:
    """The printed label and the bare number of a heading from its counters (one per level
    down to its own)."""
    level = len(counters)
    c = [str(x) for x in counters]
    if scheme == "decimal":
        n = ".".join(c)
        return n, n
    if scheme == "decimal_dot":
        n = ".".join(c)
        return n + ".", n
    if scheme == "roman":
        n = (_roman(counters[0]), _letter(counters[1]) if level > 1 else "", c[-1])[level - 1]
        return n + ".", n
    if scheme == "letter":
        n = ".".join([_letter(counters[0]), *c[1:]])
        return (n + "." if level == 1 else n), n
    return "", ""


def _styles(rng: random.Random, family: str, size: float, depth: int) -> dict[int, Style]:
    """Heading styles per level, each level no louder than the one above."""
    other = {"helvetica": "times", "times": "helvetica", "dejavu": "dejaserif"}
    other["dejaserif"] = "dejavu"
    hfamily = other[family] if rng.random() < 0.3 else family
    out: dict[int, Style] = {}
    prev = 99.0
    for level in range(1, depth + 1):
        runin = level == depth and depth > 1 and rng.random() < 0.35
        if runin:
            out[level] = Style(
                family, size, True, rng.random() < 0.25, False, False, True, False, size * 0.6, 0
            )
            continue
        bump = rng.choice(((0, 2, 3, 4, 6), (0, 1, 2), (0, 0, 1))[level - 1])
        hsize = min(prev, size + bump)
        prev = hsize
        bold = True if hsize <= size else rng.random() < 0.7
        caps = rng.random() < (0.3, 0.15, 0.05)[level - 1]
        italic = not caps and not bold and rng.random() < 0.5
        if hsize <= size and not bold:
            bold = True
        out[level] = Style(
            hfamily,
            hsize,
            bold,
            italic or (level == 3 and rng.random() < 0.25),
            caps,
            rng.random() < (0.2, 0.08, 0.0)[level - 1],
            False,
            rng.random() < 0.2,
            size * rng.uniform(0.8, 1.8),
            size * rng.uniform(0.2, 0.7),
        )
    return out


def draw(seed: int) -> Plan:
    """A seed's document plan."""
    rng = random.Random(seed)
    lang = LANGS[rng.choice(("en", "pt", "fr", "es", "de"))]
    pagesize = rng.choice(((595.28, 841.89), (612.0, 792.0)))
    margins = (
        rng.uniform(50, 80),
        rng.uniform(50, 80),
        rng.uniform(62, 85),
        rng.uniform(58, 80),
    )
    columns = 2 if rng.random() < 0.25 else 1
    family = rng.choice(tuple(FAMILIES))
    size = rng.choice((9.5, 10.0, 10.5, 11.0))
    depth = rng.choices((1, 2, 3), (0.2, 0.5, 0.3))[0]
    styles = _styles(rng, family, size, depth)
    scheme = rng.choices(
        ("decimal", "decimal_dot", "roman", "letter", "none"), (0.3, 0.2, 0.12, 0.08, 0.3)
    )[0]
    numbered = rng.randint(1, depth) if rng.random() < 0.4 else depth
    toc = rng.random() < 0.7
    kind, topic = rng.choice(lang.doc_kinds), rng.choice(lang.doc_topics)
    year = rng.randint(2015, 2024)
    title = f"{kind} {year} – {topic}" if rng.random() < 0.6 else f"{topic}: {kind.lower()}"
    org = rng.choice(lang.orgs)
    plan = Plan(
        seed=seed,
        lang=lang,
        pagesize=pagesize,
        margins=margins,
        columns=columns,
        gutter=rng.uniform(16, 26),
        family=family,
        size=size,
        leading=size * rng.uniform(1.2, 1.4),
        indent=rng.choice((0.0, 0.0, 12.0, 18.0)),
        styles=styles,
        title=title,
        subtitle=f"{org} · {year}",
        running=rng.choice((topic, org, f"{kind} {year}")),
        running_align=rng.choice(("left", "centre", "right")),
        footer=rng.choice(lang.page_of),
        toc=toc,
        toc_depth=rng.choice((depth, min(depth, 2))),
        contents=rng.choice(lang.contents),
        leader=rng.choice((".", ". ")),
        outline=rng.random() < 0.4,
        banner=rng.choice(lang.banners) if rng.random() < 0.3 else None,
        banner_side=rng.choice(("left", "right")),
        caption_style=rng.choice(("bold", "italic", "plain")),
        blocks=[],
    )
    plan.blocks = _blocks(rng, lang, depth, scheme, numbered, styles, toc)
    return plan


def _blocks(
    rng: random.Random,
    lang: Lang,
    depth: int,
    scheme: str,
    numbered: int,
    styles: dict[int, Style],
    toc: bool,
) -> list[Block]:
    """The flow of a document: its section tree with prose, then tables, figures, lists and
    pull quotes put in after paragraphs."""
    target = rng.randint(2, MAX_PAGES)
    budget = max(3, round((target - (1 if toc else 0.4)) * rng.uniform(4.0, 6.5)))
    pool = list(lang.titles)
    rng.shuffle(pool)
    longs = list(lang.long_titles)
    rng.shuffle(longs)
    short = [t for t in pool if len(t.split()) <= 3]
    headings: list[Heading] = []
    blocks: list[Block] = []
    counters = [0, 0, 0]
    last_at: dict[int, int] = {}
    level = 1
    long_left = rng.choice((0, 1, 1, 2))
    while budget > 0 and len(headings) < 26:
        if headings:
            r = rng.random()
            if r < 0.45 and level < depth:
                level += 1
            elif r > 0.8 and level > 1:
                level = rng.randint(1, level - 1)
        counters[level - 1] += 1
        for k in range(level, 3):
            counters[k] = 0
        label, num = ("", "")
        if scheme != "none" and level <= numbered:
            label, num = numbering(scheme, counters[:level])
        st = styles[level]
        if st.runin:
            title = short.pop() if short else rng.choice(lang.titles[:8])
        elif long_left and rng.random() < 0.15:
            title = longs.pop()
            long_left -= 1
        else:
            title = pool.pop() if pool else f"{rng.choice(lang.titles)} {len(headings) + 1}"
        if title in short:
            short.remove(title)
        if title in pool:
            pool.remove(title)
        if st.caps:
            title = title.upper()
        parent = last_at.get(level - 1) if level > 1 else None
        h = Heading(len(headings), level, label, num, title, parent)
        headings.append(h)
        last_at[level] = h.index
        for k in range(level + 1, 4):
            last_at.pop(k, None)
        if st.runin:
            blocks.append(Block("para", para=Para(paragraph(lang, rng, 2, 5), runin=h)))
            budget -= 1
            count = rng.randint(0, 1)
        else:
            blocks.append(Block("heading", heading=h))
            count = 0 if (level < depth and rng.random() < 0.3) else rng.randint(1, 3)
        for _ in range(count):
            p = Para(paragraph(lang, rng))
            r = rng.random()
            if r < 0.12:
                p.lead = rng.randint(3, 6)
            elif r < 0.2:
                a = rng.randint(3, 8)
                p.bold = (a, a + rng.randint(1, 2))
            blocks.append(Block("para", para=p))
            budget -= 1
    extras: list[Block] = []
    label = rng.choice(lang.table_labels)
    letters = rng.random() < 0.15
    for n in range(rng.choices((0, 1, 2, 3), (0.2, 0.35, 0.3, 0.15))[0]):
        extras.append(Block("table", table=_table(rng, lang, label, n + 1, letters)))
    for n in range(rng.choices((0, 1, 2), (0.5, 0.35, 0.15))[0]):
        extras.append(Block("figure", figure=_figure(rng, lang, n + 1)))
    for _ in range(rng.choices((0, 1, 2), (0.4, 0.4, 0.2))[0]):
        k = rng.randint(3, 6)
        extras.append(
            Block("list", items=rng.sample(lang.list_words, k), bullet=rng.choice(("•", "–", "")))
        )
    if rng.random() < 0.35:
        words = sentence(lang, rng).rstrip(".").split()
        cut = rng.randint(5, min(10, len(words) - 1))
        extras.append(Block("quote", quote=" ".join(words[:cut])))
    rng.shuffle(extras)
    spots = [i + 1 for i, b in enumerate(blocks) if b.kind == "para"]
    for extra in extras:
        spot = rng.choice(spots)
        blocks.insert(spot, extra)
        spots = [s + 1 if s >= spot else s for s in spots]
    return blocks


def _table(rng: random.Random, lang: Lang, label: str, n: int, letters: bool) -> TableSpec:
    """A simple grid: a header row and 3-8 rows of regions with figures."""
    year = rng.randint(2016, 2022)
    shape = rng.choice(("years", "years_change", "counts"))
    if shape == "counts":
        head = [lang.region_word, *rng.sample(lang.list_words, rng.randint(2, 3))]
    else:
        years = [str(year + k) for k in range(rng.randint(2, 3))]
        head = [lang.region_word, *years] + ([lang.change] if shape == "years_change" else [])
    regions = list(lang.regions)
    rng.shuffle(regions)
    nrows = rng.randint(3, 8)
    rows = [head]
    for k in range(nrows):
        name = regions[k] if k < len(regions) else f"{lang.region_word} {k + 1}"
        if k == nrows - 1 and rng.random() < 0.4:
            name = lang.total
        values = []
        for col in head[1:]:
            if col == lang.change:
                values.append(number(lang, rng.uniform(-15, 25), 1))
            else:
                values.append(number(lang, rng.randint(100, 90000)))
        rows.append([name, *values])
    ident = f"A-{n}" if letters else str(n)
    full = f"{label} {ident}"
    caption = None
    if rng.random() < 0.8:
        caption = f"{full}{rng.choice(lang.caption_seps)}{rng.choice(lang.table_titles)}"
    return TableSpec(
        rows,
        caption,
        rng.choice(("above", "above", "below")),
        full,
        rng.random() < 0.6,
        rng.random() < 0.4,
    )


def _figure(rng: random.Random, lang: Lang, n: int) -> FigureSpec:
    """Bars over years or regions, their values printed above them."""
    k = rng.randint(3, 6)
    if rng.random() < 0.5:
        start = rng.randint(2014, 2019)
        labels = [str(start + i) for i in range(k)]
    else:
        labels = rng.sample(list(lang.regions), min(k, len(lang.regions)))
    values = [rng.uniform(10, 90) for _ in labels]
    texts = [number(lang, v, 1) for v in values]
    caption = f"{lang.figure_label} {n}{rng.choice(lang.caption_seps)}"
    # figure_titles: by region, by round, per beneficiary
    years = labels[0].isdigit()
    caption += lang.figure_titles[rng.choice((1, 2) if years else (0, 2))]
    return FigureSpec(labels, values, texts, caption, rng.random() < 0.5)


# ---- layout: the plan placed on pages ------------------------------------------------------


Token = tuple[str, str]  # font, word
Op = tuple[Any, ...]


class Layout:
    """Places a plan's blocks on pages, line by line, in one or two columns, and records
    where each heading, table and distractor lands."""

    def __init__(self, plan: Plan) -> None:
        self.p = plan
        self.w, self.h = plan.pagesize
        ml, mr, mt, mb = plan.margins
        self.left, self.top, self.bottom = ml, mt, self.h - mb
        self.full = self.w - ml - mr
        self.cols = plan.columns
        self.colw = (self.full - plan.gutter) / 2 if self.cols == 2 else self.full
        self.pages: list[list[Op]] = [[]]
        self.page = 0
        self.col = 0
        self.frame_top = self.top
        self.y = self.top
        self.headings: dict[int, dict[str, Any]] = {}
        self.order: list[Heading] = []
        self.tables: list[dict[str, Any]] = []
        self.distractors: list[dict[str, Any]] = []
        self.regular = face(plan.family)
        self.boldface = face(plan.family, bold=True)
        self.lead = plan.leading
        self.frame_top_p1 = self.top

    # frames
    def x0(self) -> float:
        return self.left + self.col * (self.colw + self.p.gutter)

    def room(self) -> float:
        return self.bottom - self.y

    def at_top(self) -> bool:
        return self.y <= self.frame_top + 0.01

    def next_frame(self) -> None:
        if self.col + 1 < self.cols:
            self.col += 1
        else:
            self.pages.append([])
            self.page += 1
            self.col = 0
            self.frame_top = self.top
        self.y = self.frame_top

    def ensure(self, height: float) -> None:
        if self.room() < height and not self.at_top():
            self.next_frame()

    def op(self, *args: Any) -> None:
        self.pages[self.page].append(args)

    def distractor(self, text: str, kind: str, page: int | None = None) -> None:
        self.distractors.append({"text": text, "page": (page or self.page + 1), "kind": kind})

    # text
    def wrap(self, tokens: list[Token], size: float, avail: float, first: float = 0.0) -> list:
        lines: list[list[Token]] = []
        cur: list[Token] = []
        used = 0.0
        for font, word in tokens:
            ww = width(word, font, size)
            sp = width(" ", font, size) if cur else 0.0
            limit = avail - (first if not lines else 0.0)
            if cur and used + sp + ww > limit:
                lines.append(cur)
                cur, used, sp = [], 0.0, 0.0
            cur.append((font, word))
            used += sp + ww
        if cur:
            lines.append(cur)
        return lines

    @staticmethod
    def runs(line: list[Token]) -> list[tuple[str, str]]:
        """A line's tokens as runs of one font, the space after a word in its font."""
        out: list[tuple[str, str]] = []
        for k, (font, word) in enumerate(line):
            text = word + (" " if k + 1 < len(line) else "")
            if out and out[-1][0] == font:
                out[-1] = (font, out[-1][1] + text)
            else:
                out.append((font, text))
        return out

    def line_width(self, line: list[Token], size: float) -> float:
        return sum(width(t, f, size) for f, t in self.runs(line))

    def text(self, x: float, top: float, line: list[Token], size: float) -> None:
        self.op("runs", x, top + size * 0.8, self.runs(line), size)

    # blocks
    def title_block(self) -> None:
        size = self.p.size * 2.0
        font = face(self.p.family, bold=True)
        lines = self.wrap([(font, w) for w in self.p.title.split()], size, self.full)
        for line in lines:
            self.text(self.left, self.y, line, size)
            self.y += size * 1.25
        self.distractor(self.p.title, "title")
        self.y += 4
        sub = [(self.regular, w) for w in self.p.subtitle.split()]
        self.text(self.left, self.y, sub, self.p.size + 1)
        self.distractor(self.p.subtitle, "title")
        self.y += (self.p.size + 1) * 1.3 + 18
        self.frame_top = self.y

    def heading(self, h: Heading) -> None:
        st = self.p.styles[h.level]
        font = face(st.family, st.bold, st.italic)
        size, lead = st.size, st.size * 1.25
        num_w = 0.0
        if st.hanging and h.label:
            num_w = max(width(h.label, font, size) + 8, 2.6 * size)
            lines = self.wrap([(font, w) for w in h.title.split()], size, self.colw - num_w)
        else:
            words = ([h.label] if h.label else []) + h.title.split()
            lines = self.wrap([(font, w) for w in words], size, self.colw)
        height = len(lines) * lead
        before = 0.0 if self.at_top() else st.before
        if self.room() < before + height + st.after + 3 * self.lead and not self.at_top():
            self.next_frame()
            before = 0.0
        self.y += before
        self.headings[h.index] = {
            "page": self.page + 1,
            "column": self.col + 1,
            "lines": len(lines),
        }
        self.order.append(h)
        if self.p.outline:
            self.op("bookmark", f"h{h.index}", h.text, h.level, self.y)
        for k, line in enumerate(lines):
            x = self.x0()
            if st.centred:
                x += max(0.0, (self.colw - num_w - self.line_width(line, size)) / 2)
            if num_w:
                if k == 0:
                    self.text(x, self.y, [(font, h.label)], size)
                x += num_w
            self.text(x, self.y, line, size)
            self.y += lead
        self.y += st.after

    def para(self, p: Para) -> None:
        size = self.p.size
        words = p.text.split()
        tokens: list[Token] = []
        if p.runin:
            st = self.p.styles[p.runin.level]
            hfont = face(st.family, True, st.italic)
            head = ([p.runin.label] if p.runin.label else []) + p.runin.title.split()
            head[-1] += "."
            tokens += [(hfont, w) for w in head]
        for k, word in enumerate(words):
            bold = k < p.lead or (p.bold is not None and p.bold[0] <= k < p.bold[1])
            tokens.append((self.boldface if bold else self.regular, word))
        first = 0.0 if p.runin else self.p.indent
        lines = self.wrap(tokens, size, self.colw, first)
        if p.runin:
            before = 0.0 if self.at_top() else self.p.styles[p.runin.level].before
            if self.room() < before + 2 * self.lead and not self.at_top():
                self.next_frame()
                before = 0.0
            self.y += before
        else:
            self.ensure(min(2, len(lines)) * self.lead)
        if p.runin:
            self.headings[p.runin.index] = {
                "page": self.page + 1,
                "column": self.col + 1,
                "lines": 1,
            }
            self.order.append(p.runin)
            if self.p.outline:
                self.op("bookmark", f"h{p.runin.index}", p.runin.text, p.runin.level, self.y)
        if p.lead:
            self.distractor(" ".join(words[: p.lead]), "bold_fragment")
        phrase = p.bold is not None
        seen = len(tokens) - len(words)  # tokens before the prose (a run-in heading's)
        for k, line in enumerate(lines):
            if self.room() < self.lead:
                self.next_frame()
                if k and line[0][1][:1].islower():
                    self.distractor(" ".join(w for _, w in line), "continuation")
            seen += len(line)
            if phrase and p.bold and seen - (len(tokens) - len(words)) > p.bold[0]:
                self.distractor(" ".join(words[p.bold[0] : p.bold[1]]), "bold_phrase")
                phrase = False
            self.text(self.x0() + (first if k == 0 else 0.0), self.y, line, size)
            self.y += self.lead
        self.y += self.lead * 0.5

    def listing(self, items: list[str], bullet: str) -> None:
        self.ensure(len(items) * self.lead + 4)
        for item in items:
            if self.room() < self.lead:
                self.next_frame()
            x = self.x0() + 10
            if bullet:
                self.text(x, self.y, [(self.regular, bullet)], self.p.size)
                x += 12
            self.text(x, self.y, [(self.regular, item)], self.p.size)
            self.distractor(item, "list_word")
            self.y += self.lead
        self.y += self.lead * 0.5

    def caption_lines(self, text: str, avail: float) -> tuple[list, float]:
        size = self.p.size - 0.5
        style = self.p.caption_style
        font = face(self.p.family, style == "bold", style == "italic")
        return self.wrap([(font, w) for w in text.split()], size, avail), size

    def table(self, t: TableSpec) -> None:
        from reportlab.lib import colors
        from reportlab.platypus import Table, TableStyle

        size = 8.0 if self.cols == 2 or len(t.rows) > 6 else 9.0
        ncols = len(t.rows[0])
        first = max(width(r[0], "Helvetica", size) for r in t.rows) + 10
        rest = max(width(c, "Helvetica-Bold", size) for r in t.rows for c in r[1:]) + 10
        total = first + rest * (ncols - 1)
        if total > self.colw:
            rest = (self.colw - first) / (ncols - 1)
        style = [
            ("FONT", (0, 0), (-1, -1), "Helvetica", size),
            ("FONT", (0, 0), (-1, 0), "Helvetica-Bold", size),
            ("ALIGN", (1, 0), (-1, -1), "RIGHT"),
            ("TOPPADDING", (0, 0), (-1, -1), 2),
            ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
        ]
        if t.grid:
            style.append(("GRID", (0, 0), (-1, -1), 0.5, colors.black))
        else:
            style += [
                ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
            ]
        if t.shaded:
            style.append(("BACKGROUND", (0, 0), (-1, 0), colors.Color(0.85, 0.85, 0.85)))
        table = Table(t.rows, colWidths=[first] + [rest] * (ncols - 1), style=TableStyle(style))
        tw, th = table.wrap(self.colw, self.h)
        lines, csize = self.caption_lines(t.caption, tw) if t.caption else ([], 0.0)
        cap_h = len(lines) * csize * 1.25 + (4 if lines else 0)
        self.ensure(th + cap_h + self.lead)
        self.y += self.lead * 0.3
        x = self.x0()

        def caption() -> None:
            for line in lines:
                self.text(x, self.y, line, csize)
                self.y += csize * 1.25
            self.y += 4 if lines else 0

        page = self.page + 1
        if t.position == "above":
            caption()
        self.op("table", table, x, self.y + th)
        self.y += th + 4
        if t.position == "below":
            caption()
        self.y += self.lead * 0.6
        if t.caption:
            self.distractor(t.caption, "caption", page)
        self.tables.append(
            {
                "page": page,
                "caption": t.caption,
                "position": t.position if t.caption else None,
                "label": t.label,
                "rows": len(t.rows),
                "cols": ncols,
            }
        )

    def figure(self, f: FigureSpec) -> None:
        fw = min(self.colw, 300.0)
        fh = 90.0
        lines, csize = self.caption_lines(f.caption, fw)
        need = fh + 24 + len(lines) * csize * 1.25 + self.lead
        self.ensure(need)
        x = self.x0()
        base = self.y + 10 + fh  # the axis line
        step = fw / len(f.labels)
        lfont = "Helvetica-Bold" if f.bold else "Helvetica"
        self.op("line", x, base, x + fw, base)
        for k, (label, value, text) in enumerate(zip(f.labels, f.values, f.texts, strict=True)):
            bx = x + k * step + step * 0.2
            bh = fh * value / 100
            self.op("rect", bx, base - bh, step * 0.6, bh)
            self.op("runs", bx, base - bh - 2, [("Helvetica", text)], 7.0)
            self.op("runs", bx, base + 9, [(lfont, label)], 7.0)
            self.distractor(label, "axis_label")
            self.distractor(text, "axis_label")
        self.y = base + 16
        for line in lines:
            self.text(x, self.y, line, csize)
            self.y += csize * 1.25
        self.distractor(f.caption, "figure_caption")
        self.y += self.lead * 0.6

    def quote(self, text: str) -> None:
        size = self.p.size + 4
        font = face(self.p.family, bold=len(text) % 2 == 0, italic=True)
        avail = self.colw * 0.8
        lines = self.wrap([(font, w) for w in text.split()], size, avail)
        self.ensure(len(lines) * size * 1.3 + 16)
        self.y += 6
        x0 = self.x0() + self.colw * 0.1
        self.op("line", x0, self.y, x0 + avail, self.y)
        self.y += 4
        for line in lines:
            self.text(x0, self.y, line, size)
            self.y += size * 1.3
        self.op("line", x0, self.y + 2, x0 + avail, self.y + 2)
        self.y += 10
        self.distractor(text, "pull_quote")

    def toc(self) -> None:
        """The table of contents on page 1 under the title (the body starts on page 2)."""
        ops = self.pages[0]
        y = self.frame_top
        size = self.p.size + 3
        font = face(self.p.family, bold=True)
        ops.append(("runs", self.left, y + size * 0.8, [(font, self.p.contents)], size))
        self.distractor(self.p.contents, "toc", 1)
        y += size * 1.6
        entries = [h for h in self.order if h.level <= self.p.toc_depth]
        room = self.bottom - y
        tsize = 10.0
        step = min(tsize * 1.5, room / max(1, len(entries)))
        tsize = min(tsize, step / 1.2)
        for h in entries:
            indent = 14.0 * (h.level - 1)
            page = str(self.headings[h.index]["page"])
            pw = width(page, self.regular, tsize)
            tw = width(h.text, self.regular, tsize)
            size = tsize
            avail = self.full - indent - pw - 24
            if tw > avail:
                size = tsize * avail / tw
                tw = avail
            leader_w = self.full - indent - tw - pw - 10
            dots = self.p.leader * max(3, int(leader_w / width(self.p.leader, self.regular, size)))
            text = f"{h.text} {dots}"
            ops.append(("runs", self.left + indent, y + size * 0.8, [(self.regular, text)], size))
            ops.append(
                ("runs", self.left + self.full - pw, y + size * 0.8, [(self.regular, page)], size)
            )
            self.distractor(f"{h.text} {dots.strip()} {page}", "toc", 1)
            y += step

    def decorate(self) -> None:
        """Running heads, footers and the turned banner, once the page count is known."""
        n = len(self.pages)
        hs = 8.0
        for k, ops in enumerate(self.pages):
            text = self.p.running
            tw = width(text, self.regular, hs)
            x = {
                "left": self.left,
                "centre": (self.w - tw) / 2,
                "right": self.left + self.full - tw,
            }
            base = self.top - 22
            ops.append(("runs", x[self.p.running_align], base, [(self.regular, text)], hs))
            ops.append(("line", self.left, base + 4, self.left + self.full, base + 4))
            self.distractor(text, "running", k + 1)
            foot = self.p.footer.format(p=k + 1, n=n)
            fw = width(foot, self.regular, hs)
            ops.append(("runs", (self.w - fw) / 2, self.bottom + 28, [(self.regular, foot)], hs))
            self.distractor(foot, "running", k + 1)
            if self.p.banner:
                x = 22.0 if self.p.banner_side == "left" else self.w - 16.0
                ops.append(("turned", x, self.h / 2 + 120, self.p.banner, 8.5))
                self.distractor(self.p.banner, "banner", k + 1)

    def run(self) -> None:
        self.title_block()
        if self.p.toc:
            self.next_frame_page()
        for block in self.p.blocks:
            if block.kind == "heading" and block.heading:
                self.heading(block.heading)
            elif block.kind == "para" and block.para:
                self.para(block.para)
            elif block.kind == "list":
                self.listing(block.items, block.bullet)
            elif block.kind == "table" and block.table:
                self.table(block.table)
            elif block.kind == "figure" and block.figure:
                self.figure(block.figure)
            elif block.kind == "quote":
                self.quote(block.quote)
        if self.p.toc:
            self.frame_top = self.frame_top_p1
            self.toc()
        self.decorate()

    def next_frame_page(self) -> None:
        self.frame_top_p1 = self.frame_top
        self.pages.append([])
        self.page = 1
        self.col = 0
        self.frame_top = self.top
        self.y = self.top


def lay(plan: Plan) -> Layout:
    """Lay a plan out, dropping trailing sections until it fits MAX_PAGES pages and adding
    prose while it has fewer than two."""
    while True:
        layout = Layout(plan)
        layout.run()
        n = len(layout.pages)
        if n > MAX_PAGES:
            heads = [
                i
                for i, b in enumerate(plan.blocks)
                if b.kind == "heading" or (b.kind == "para" and b.para and b.para.runin)
            ]
            tops = [i for i in heads if _level(plan.blocks[i]) == 1]
            cut = tops[-1] if len(tops) > 2 else heads[-1]
            if cut == 0:
                plan.blocks = plan.blocks[: max(2, len(plan.blocks) // 2)]
            else:
                plan.blocks = plan.blocks[:cut]
            continue
        if n < 2:
            rng = random.Random(plan.seed + 1)
            plan.blocks.append(Block("para", para=Para(paragraph(plan.lang, rng, 4, 6))))
            continue
        return layout


def _level(block: Block) -> int:
    h = block.heading or (block.para.runin if block.para else None)
    return h.level if h else 0


# ---- printing --------------------------------------------------------------------------------


def render(plan: Plan, layout: Layout, path: Path) -> None:
    """Print a laid-out plan with reportlab (same seed, same bytes)."""
    from reportlab.lib import colors
    from reportlab.pdfgen.canvas import Canvas

    register()
    w, h = plan.pagesize
    c = Canvas(str(path), pagesize=plan.pagesize, invariant=1, pageCompression=1)
    for ops in layout.pages:
        for op in ops:
            kind = op[0]
            if kind == "runs":
                _, x, base, runs, size = op
                for font, text in runs:
                    c.setFont(font, size)
                    c.drawString(x, h - base, text)
                    x += width(text, font, size)
            elif kind == "line":
                _, x0, y0, x1, y1 = op
                c.setLineWidth(0.5)
                c.line(x0, h - y0, x1, h - y1)
            elif kind == "rect":
                _, x, top, bw, bh = op
                c.setFillColor(colors.Color(0.45, 0.55, 0.7))
                c.rect(x, h - top - bh, bw, bh, stroke=0, fill=1)
                c.setFillColor(colors.black)
            elif kind == "table":
                _, table, x, bottom = op
                table.drawOn(c, x, h - bottom)
            elif kind == "turned":
                _, x, y, text, size = op
                c.saveState()
                c.setFillColor(colors.Color(0.5, 0.5, 0.5))
                c.translate(x, h - y)
                c.rotate(90)
                c.setFont(face(plan.family), size)
                c.drawString(0, 0, text)
                c.restoreState()
            elif kind == "bookmark":
                _, key, title, level, top = op
                c.bookmarkPage(key, fit="XYZ", left=0, top=h - top + 2)
                c.addOutlineEntry(title, key, level=level - 1, closed=False)
        c.showPage()
    if plan.outline:
        c.showOutline()
    c.save()


def truth(plan: Plan, layout: Layout) -> dict[str, Any]:
    """The truth record of a laid-out plan."""
    headings = []
    for h in sorted(layout.order, key=lambda h: h.index):
        st = plan.styles[h.level]
        where = layout.headings[h.index]
        tags = [
            tag
            for tag, on in (
                ("numbered", bool(h.label)),
                ("caps", st.caps),
                ("centred", st.centred),
                ("bold_body", st.bold and st.size <= plan.size and not st.runin),
                ("larger", st.size > plan.size),
                ("runin", st.runin),
                ("wrapped", where["lines"] > 1),
                ("italic", st.italic),
                ("hanging", st.hanging and bool(h.label)),
            )
            if on
        ]
        headings.append(
            {
                "text": h.text,
                "number": h.number,
                "title": h.title,
                "level": h.level,
                "page": where["page"],
                "parent": h.parent,
                "column": where["column"],
                "style": tags,
            }
        )
    return {
        "version": VERSION,
        "seed": plan.seed,
        "language": plan.lang.code,
        "has_outline": plan.outline,
        "columns": plan.columns,
        "split": round(layout.left + layout.colw + plan.gutter / 2, 1),  # between the columns
        "pages": len(layout.pages),
        "title": plan.title,
        "toc": plan.toc,
        "headings": headings,
        "tables": layout.tables,
        "distractors": layout.distractors,
    }


def write(seed: int, pdf: Path) -> dict[str, Any]:
    """Print one seed's PDF to `pdf`; returns its truth."""
    register()
    plan = draw(seed)
    layout = lay(plan)
    render(plan, layout, pdf)
    return truth(plan, layout)


def _write_one(job: tuple[int, str]) -> int:
    seed, out = job
    folder_ = Path(out)
    pdf = folder_ / f"{seed}.pdf.{os.getpid()}"
    record = write(seed, pdf)
    # written aside, then renamed: another process reading the cache sees whole files
    os.replace(pdf, folder_ / f"{seed}.pdf")
    aside = folder_ / f"{seed}.json.{os.getpid()}"
    aside.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    os.replace(aside, folder_ / f"{seed}.json")
    return seed


def generate(root: Path, seeds: Iterable[int], progress: bool = False, workers: int = 0) -> int:
    """Write the PDFs and truth of the seeds not yet in `root`; returns how many were new."""
    out = folder(root)
    out.mkdir(parents=True, exist_ok=True)
    todo = [(s, str(out)) for s in seeds if not (out / f"{s}.json").exists()]
    workers = workers or min(4, os.cpu_count() or 1)
    if len(todo) < 16 or workers < 2:
        for k, job in enumerate(todo):
            _write_one(job)
            if progress and (k + 1) % 50 == 0:
                print(f"  {k + 1}/{len(todo)} written", file=sys.stderr, flush=True)
        return len(todo)
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        for k, _ in enumerate(pool.map(_write_one, todo, chunksize=8)):
            if progress and (k + 1) % 50 == 0:
                print(f"  {k + 1}/{len(todo)} written", file=sys.stderr, flush=True)
    return len(todo)


def read(root: Path, seed: int) -> tuple[Path, dict[str, Any]]:
    """A generated seed's PDF and truth."""
    out = folder(root)
    return out / f"{seed}.pdf", json.loads((out / f"{seed}.json").read_text(encoding="utf-8"))


def cases(root: Path, seeds: Iterable[int], progress: bool = False) -> Iterator:
    """Each seed's (seed, PDF, truth), generated first where missing."""
    seeds = list(seeds)
    generate(root, seeds, progress)
    for seed in seeds:
        yield (seed, *read(root, seed))


# ---- the check: truth against the printed PDF -------------------------------------------


def flat(text: str) -> str:
    """Text for a containment test: NFKC, case folded, whitespace collapsed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().casefold()


def problems(pdf: Path, record: dict[str, Any]) -> list[str]:
    """What in the truth the PDF does not bear out (empty: all of it holds): every heading
    and table caption read by pdfplumber's `extract_text` on its page (or in its column,
    where two columns share lines), the page count, the outline's presence."""
    import pdfplumber

    out: list[str] = []
    with pdfplumber.open(pdf) as doc:
        if len(doc.pages) != record["pages"]:
            out.append(f"{len(doc.pages)} pages, truth says {record['pages']}")
            return out
        texts: dict[int, list[str]] = {}

        def page_texts(n: int) -> list[str]:
            if n not in texts:
                page = doc.pages[n - 1]
                found = [flat(page.extract_text() or "")]
                if record["columns"] == 2:
                    split = record["split"]
                    for side in (lambda o: o["x0"] < split, lambda o: o["x0"] >= split):
                        part = page.filter(
                            lambda o, side=side: o.get("object_type") != "char" or side(o)
                        )
                        found.append(flat(part.extract_text() or ""))
                texts[n] = found
            return texts[n]

        for h in record["headings"]:
            if not any(flat(h["text"]) in t for t in page_texts(h["page"])):
                out.append(f"heading {h['text']!r} not on page {h['page']}")
            if (
                h["parent"] is not None
                and record["headings"][h["parent"]]["level"] != h["level"] - 1
            ):
                out.append(f"heading {h['text']!r}: parent not one level up")
        for t in record["tables"]:
            if t["caption"] and not any(flat(t["caption"]) in x for x in page_texts(t["page"])):
                out.append(f"caption {t['caption']!r} not on page {t['page']}")
        try:
            outline = list(doc.doc.get_outlines())
        except Exception:  # PDFNoOutlines
            outline = []
        if record["has_outline"] and len(outline) != len(record["headings"]):
            out.append(f"outline has {len(outline)} entries, {len(record['headings'])} headings")
        if not record["has_outline"] and outline:
            out.append("an outline the truth does not say")
    return out


def main(argv: list[str] | None = None) -> int:
    """`write` or `check` a seed range."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("write", "check"))
    parser.add_argument("--seeds", default="tune", help="tune (0-399), report (5000-5299), A-B")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    seeds = list(parse_seeds(args.seeds))
    start = time.perf_counter()
    new = generate(args.dir, seeds, progress=True)
    spent = time.perf_counter() - start
    print(f"{new} new of {len(seeds)} seeds in {spent:.1f} s ({folder(args.dir)})")
    if args.what == "write":
        return 0
    bad = 0
    for seed in seeds:
        pdf, record = read(args.dir, seed)
        found = problems(pdf, record)
        if found:
            bad += 1
            print(f"seed {seed}: " + "; ".join(found[:4]))
    print(f"{len(seeds) - bad} of {len(seeds)} seeds hold")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
