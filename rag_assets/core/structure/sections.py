"""Which lines open a section where no marker does: the document's title block, and the
headings found by evidence (`headings.py`) with their depth, always below the outline's
sections (`outline.py`). `tree.py` opens them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.extract import Line
from rag_assets.core.structure.headings import (
    RUN_IN,
    evidence,
    fold_text,
    numbering,
    numbering_levels,
    page_frames,
    quoted,
    run_in,
    style_key,
    style_levels,
    text_veto,
    toc_pages,
)
from rag_assets.core.structure.markers import CAPTION, LEGAL_MARKERS, NUMBERED
from rag_assets.core.structure.outline import OutlinePlan
from rag_assets.core.structure.settings import StructureSettings

TITLE_SEARCH = 3  # lines of page 1 looked at for the document's title
TITLE_BLOCK_LINES = 3  # lines under a document's title that may still be its title block


def document_title_at(
    lines: Sequence[Line], pages: Sequence[int], body: float, plan: OutlinePlan
) -> int | None:
    """The line naming the whole document: among the first lines of page 1 outside a
    table (above it, at most a running head in small type), the first in the largest
    type of the document and larger than the body (not an outline entry)."""
    max_size = max((ln.size for ln in lines), default=0.0)
    first = [i for i, ln in enumerate(lines) if ln.table < 0 and pages[i] == 1][:TITLE_SEARCH]
    for i in first:
        line = lines[i]
        if i in plan.matched or plan.before.get(i):
            return None
        if line.size == max_size and line.size > body:
            return i
        if line.size >= body:
            return None  # body text or a heading first: no title block
    return None


def body_type(line: Line, body: float) -> bool:
    """Whether a line is set like the running text: the body's size, not bold."""
    return abs(line.size - body) < 0.6 and not line.bold and line.table < 0


def title_block(
    lines: Sequence[Line], title_at: int | None, body: float, plan: OutlinePlan
) -> set[int]:
    """The document's title line and the lines printed right under it that are not body
    text (a subtitle, the publisher and year): the root's text, not sections."""
    if title_at is None:
        return set()
    block = {title_at}
    for k in range(title_at + 1, min(len(lines), title_at + 1 + TITLE_BLOCK_LINES)):
        line = lines[k]
        if k in plan.matched or plan.before.get(k) or line.table >= 0 or line.size == body:
            break
        if CAPTION.match(line.text) or NUMBERED.match(line.text):
            break
        if any(p.match(line.text) for _, _, p, _ in LEGAL_MARKERS):
            break
        if line.top < lines[k - 1].top or line.size >= lines[title_at].size or line.bold:
            break  # a heading (bold, or as large as the title) ends the title block
        block.add(k)
    return block


@dataclass
class Decided:
    """The headings found by evidence (line index -> depth) and the table-of-contents pages."""

    levels: dict[int, int]
    toc: set[int]
    runs: dict[int, str]


def decide_headings(
    lines: Sequence[Line],
    pages: Sequence[int],
    body: float,
    plan: OutlinePlan,
    structure: StructureSettings,
    title_block: set[int],
) -> Decided:
    """Which lines open a section by evidence where no marker or outline entry does, and how
    deep: numbered ones by their number, the rest by their style (`style_levels`), always
    below the outline's level at that point."""
    frames = page_frames(lines, pages, body)
    toc = toc_pages(lines, pages, structure)
    # the running text (body type, outside the contents pages) a pull quote repeats
    prose = [i for i, ln in enumerate(lines) if pages[i] not in toc and body_type(ln, body)]
    running = " ".join(fold_text(lines[i].text) for i in prose)
    found: dict[int, tuple[int | None, tuple]] = {}
    runs: dict[int, str] = {}  # run-in headings: the bold words opening the line
    outline_level = 0
    floor: dict[int, int] = {}
    for i, line in enumerate(lines):
        for entry in plan.before.get(i, ()):
            outline_level = entry.level
        if i in plan.matched:
            outline_level = plan.matched[i][0].level
            continue
        floor[i] = outline_level
        if i in title_block or line.table >= 0 or pages[i] in toc or CAPTION.match(line.text):
            continue
        if any(p.match(line.text) for _, _, p, _ in LEGAL_MARKERS):
            continue  # the markers' own rules decide
        if plan.titles and fold_text(line.text) in plan.titles:
            continue  # an outline title printed again (a running head, a list of contents)
        seen = evidence(lines, i, pages[i], pages, frames[pages[i]], body, structure)
        head = line.text
        # cheapest first: the scan of the running text only for a line that looks a heading
        whole = (
            text_veto(line.text, structure) is None
            and seen.says_heading(len(line.text.split()), structure, body)
            and not _runs_on(lines, i, pages, frames[pages[i]].gap, body)
            and not quoted(line.text, running, 1 + body_type(line, body))
        )
        if not whole:
            head = run_in(line, seen, structure)
            if not head or fold_text(head) in plan.titles:
                continue
            runs[i] = head
        found[i] = (
            numbering(head),
            style_key(line, body, structure) if head == line.text else RUN_IN,
        )
    levels = {i: max(level, floor[i] + 1) for i, level in _depths(found).items()}
    return Decided(levels, toc, runs)


def _depths(found: dict[int, tuple[tuple[str, int] | None, tuple]]) -> dict[int, int]:
    """The depth of each heading found: numbered ones by their scheme and number
    (`numbering_levels`); the others by their style: the depth of numbered headings in the
    same style, else one under the nearest louder numbered style, else by style alone
    (`style_levels`)."""
    numbered = [i for i, (scheme, _) in found.items() if scheme is not None]
    depth = dict(zip(numbered, numbering_levels([found[i][0] for i in numbered]), strict=True))
    by_style: dict[tuple, int] = {}
    for i in numbered:
        style = found[i][1]
        by_style[style] = min(by_style.get(style, depth[i]), depth[i])
    loud = sorted(by_style, key=_loudness)
    plain = style_levels([style for scheme, style in found.values() if scheme is None])
    for i, (scheme, style) in found.items():
        if scheme is not None:
            continue
        if style in by_style:
            depth[i] = by_style[style]
            continue
        louder = [s for s in loud if _loudness(s) < _loudness(style)]
        depth[i] = max(by_style[s] for s in louder) + 1 if louder else plain[style]
    return depth


def _loudness(style: tuple) -> tuple:
    """Sort key of a heading style, loudest first: larger, then bold."""
    return (-style[0], not style[1])


def _runs_on(lines: Sequence[Line], i: int, pages: Sequence[int], gap: float, body: float) -> bool:
    """Whether line `i`'s sentence runs on into the next line: that line follows at the
    body's spacing, set as the body, and starts in lower case (`Spending reached 38,746`
    over `thousand, well within the budget.`): a bold lead-in, not a heading."""
    k = i + 1
    if k >= len(lines) or pages[k] != pages[i] or not body_type(lines[k], body):
        return False
    spacing = lines[k].top - lines[i].bottom
    start = next((c for c in lines[k].text if c.isalpha()), "")
    return 0 <= spacing <= max(gap * 1.5, 2.0) and start.islower()
