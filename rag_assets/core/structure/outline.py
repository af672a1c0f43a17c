"""The PDF's own sections placed on its printed lines: each outline entry (bookmark or
tagged heading) matched to the line it names, on the page it points at, near where it
points; an entry whose title is printed nowhere there opens its section at the first line
of the place it points to.

`outline_found` measures the other way round: which of the outline's titles a built tree
carries as headings (the `structure_tree` stage's `bookmarks_found`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from rag_assets.core.extract import Line, OutlineEntry
from rag_assets.core.lake import Node
from rag_assets.core.structure.headings import LETTERED, fold_text
from rag_assets.core.structure.markers import CAPTION, NUMBERED, STRUCTURAL_KINDS, squash
from rag_assets.core.structure.settings import DEFAULT_STRUCTURE, StructureSettings

TABLE_REACH = 120.0  # points above a table's first line its bookmark may point
TABLE_SLACK = 12.0  # points below it


@dataclass
class OutlinePlan:
    """Where the outline opens sections: `matched` maps a line index to its entry and
    whether the next line is the title's wrap; `before` lists the entries opened just
    before a line (their title not printed there); `titles` are every entry's folded title."""

    matched: dict[int, tuple[OutlineEntry, bool]] = field(default_factory=dict)
    before: dict[int, list[OutlineEntry]] = field(default_factory=dict)
    titles: set[str] = field(default_factory=set)
    tables: list[OutlineEntry] = field(default_factory=list)
    """Entries that name a table (`Table 3. Revenue`): they name it, they open no section."""

    def table_title(self, page: int, top: float, reach: float = TABLE_REACH) -> str:
        """The title of a table bookmark pointing at `page` just above or at `top` (a
        table's first line), once: the name of a table printed without a caption."""
        for entry in self.tables:
            near = entry.top is None or top - reach <= entry.top <= top + TABLE_SLACK
            if entry.page == page and near:
                self.tables.remove(entry)
                return entry.title
        return ""


def similar(a: str, b: str) -> float:
    """How alike two folded titles are (0..1), numbering ignored when one side lacks it,
    and spaces and accents when the text layer lost them (`2.2 MODELARCHITECTURE`,
    `t´opicos`)."""
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    a2, b2 = _unnumbered(a), _unnumbered(b)
    if a2 == b2 or squash(a2) == squash(b2) or squash(a) == squash(b):
        return 1.0
    if min(len(a), len(b)) < 0.5 * max(len(a), len(b)):
        return 0.0
    return max(SequenceMatcher(None, a, b).ratio(), SequenceMatcher(None, a2, b2).ratio())


def _unnumbered(text: str) -> str:
    match = NUMBERED.match(text) or LETTERED.match(text.upper())
    return text[match.start(2) :].strip() if match else text


def plan_outline(
    lines: Sequence[Line],
    pages: Sequence[int],
    entries: Sequence[OutlineEntry],
    structure: StructureSettings = DEFAULT_STRUCTURE,
) -> OutlinePlan:
    """Match each outline entry to the printed line that names it (`OutlinePlan`)."""
    plan = OutlinePlan()
    if not entries:
        return plan
    by_page: dict[int, list[int]] = {}
    for i, (line, page) in enumerate(zip(lines, pages, strict=True)):
        if line.table < 0:
            by_page.setdefault(page, []).append(i)
    used: set[int] = set()
    for entry in entries:
        if CAPTION.match(entry.title):
            plan.tables.append(entry)  # a table's bookmark: its name, not a section
            continue
        title = fold_text(entry.title)
        plan.titles.add(title)
        found = None
        for page in (entry.page, entry.page + 1):
            candidates = [i for i in by_page.get(page, []) if i not in used]
            if entry.top is not None and page == entry.page:
                low = entry.top - structure.outline_slack
                candidates.sort(key=lambda i: (lines[i].top < low, i))
            found = _best(lines, candidates, title, structure)
            if found is not None:
                break
        if found is not None:
            i, wrapped = found
            used.update({i, i + 1} if wrapped else {i})
            plan.matched[i] = (entry, wrapped)
            continue
        anchor = _anchor(lines, by_page, entry, structure)
        if anchor is not None:
            plan.before.setdefault(anchor, []).append(entry)
    return plan


def _best(
    lines: Sequence[Line], candidates: Sequence[int], title: str, structure: StructureSettings
) -> tuple[int, bool] | None:
    """The candidate line naming `title`: alike alone first, then printing it whole at its
    start (`Results` in `Results of the survey`), then with the line below it (a title
    wrapped over two lines)."""
    folded = {i: fold_text(lines[i].text) for i in candidates}
    for i in candidates:
        alike = similar(folded[i], title)
        if alike >= structure.outline_match:
            return i, alike < 1.0 and _wraps(lines, i, folded[i], title, alike)
    for i in candidates:  # a run-in heading: the bold words opening the line
        lead = lines[i].lead
        if lead and similar(fold_text(lines[i].text[:lead]), title) >= structure.outline_match:
            return i, False
    for i in candidates:
        own = folded[i]
        if len(title) >= 4 and own.startswith(title) and len(title) >= 0.6 * len(own):
            return i, False
    for i in candidates:
        nxt = i + 1
        if nxt >= len(lines) or lines[nxt].table >= 0 or lines[nxt].top <= lines[i].top:
            continue
        if len(folded[i]) < len(title) and title.startswith(folded[i][:3]):
            joined = f"{folded[i]} {fold_text(lines[nxt].text)}"
            if similar(joined, title) >= structure.outline_match:
                return i, True
    return None


def _wraps(lines: Sequence[Line], i: int, own: str, title: str, alike: float) -> bool:
    """Whether the line after `i` is the rest of a title line `i` only begins (the title
    printed over two lines, the first alone close enough to match)."""
    nxt = i + 1
    if nxt >= len(lines) or lines[nxt].table >= 0 or lines[nxt].top <= lines[i].top:
        return False
    if lines[nxt].size != lines[i].size or len(own) >= len(title):
        return False
    return similar(f"{own} {fold_text(lines[nxt].text)}", title) > alike


def _anchor(
    lines: Sequence[Line],
    by_page: dict[int, list[int]],
    entry: OutlineEntry,
    structure: StructureSettings,
) -> int | None:
    """The first line at or after where an entry points (its page, from its place on it)."""
    own = by_page.get(entry.page, [])
    if entry.top is not None:
        own = [i for i in own if lines[i].top >= entry.top - structure.outline_slack / 4]
    if own:
        return own[0]
    later = [i for page, found in by_page.items() if page > entry.page for i in found]
    return min(later) if later else None


def heading_text(node: Node) -> str:
    """A heading node's printed text: its label and title."""
    return " ".join(p for p in (node.label, node.title) if p)


def outline_found(nodes: Sequence[Node], entries: Sequence[OutlineEntry]) -> tuple[int, int]:
    """(titles found, titles) of an outline: how many of its entries a heading of the tree
    (a part, chapter or section) carries, or a table (a table's bookmark)."""
    headings = {fold_text(heading_text(n)) for n in nodes if n.kind in STRUCTURAL_KINDS}
    headings |= {fold_text(n.title) for n in nodes if n.kind in ("table", "table_text")}
    titles = [fold_text(e.title) for e in entries if fold_text(e.title)]
    found = sum(1 for t in titles if t in headings or any(similar(t, h) >= 0.85 for h in headings))
    return found, len(titles)
