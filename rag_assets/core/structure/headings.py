"""Headings by evidence: whether a line opens a section where the document's own outline is
silent, and at which depth.

No single rule decides. A line is a heading when its text can be one (`text_veto`: a line
that starts in lower case, ends mid-sentence, carries a table of contents' dot leaders, runs
rotated capitals together or is mostly figures never is) and its print says so: type larger
than the body's, or bold, numbered, in capitals or centred, set apart from the text around
it or ending well before the margin (`Evidence`). A page that is a table of contents
(`toc_pages`) holds no heading, its title included: its lines name sections printed
elsewhere. The tolerances are `StructureSettings`.

Depth comes from numbering (`2.1` is deeper than `2`), else from the heading's style: the
distinct styles of a document's unnumbered headings, largest first (`style_levels`).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.extract import Line
from rag_assets.core.structure.markers import NUMBERED, OPEN_ENDINGS
from rag_assets.core.structure.settings import DEFAULT_STRUCTURE, StructureSettings

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
ENUMERATED = re.compile(r"^([a-z][.)])\s+(\S.*)$")  # `a. Statements`: an item's letter
LETTERED = re.compile(r"^((?:[IVXLC]+|[A-Z])\.)\s+(\S.*)$")
DOT_LEADERS = re.compile(r"(?:\.\s?){4,}|…{2,}|(?:\s\.){3,}|_{4,}")
TOC_ENTRY = re.compile(r"(?:(?:\.\s?){3,}|…+|\s{2,}|\s)\s*(\d{1,4}|[ivxlc]{1,6})$")
TOC_TITLE = re.compile(
    r"(?i)^(table of contents|contents|sum[aá]rio|[íi]ndice( general)?|table des mati[èe]res|"
    r"sommaire|inhalt(sverzeichnis)?|contenido|indice)$"
)
RUN_IN = (0.0, True)  # the style key of run-in headings: the deepest of the bold ones
QUOTE_WORDS = 5  # a line this long printed again in the running text is a pull quote
ROMAN_LABEL = re.compile(r"^[IVXLC]+$")
FIGURE = re.compile(
    r"(?i)^(figure|fig\.|figura|gr[aá]fico|graphique|abbildung|abb\.|diagramm|chart|"
    r"gráfica|grafico|mapa?|carte|karte|source|fonte|fuente|quelle|note|nota)\s*"
    r"[A-Z]?[-.]?\d*[.:–—-]?\s"
)


def fold_text(text: str) -> str:
    """A line's text for comparing with a title: lower case, single spaces, no dot leaders
    or trailing page number."""
    text = DOT_LEADERS.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip(" .:;–—-").casefold()


def text_veto(text: str, settings: StructureSettings = DEFAULT_STRUCTURE) -> str | None:
    """Why a line's text cannot be a heading (None when it can): what the words alone
    say, whatever their print."""
    stripped = text.strip()
    numbered = NUMBERED.match(stripped) or LETTERED.match(stripped)
    words = stripped.split()
    if not any(c.isalpha() for c in stripped):
        return "no letters"
    if len(stripped) > settings.max_chars or len(words) > settings.max_words:
        return "too long"
    if DOT_LEADERS.search(stripped):
        return "table of contents entry"
    if FIGURE.match(stripped + " "):
        return "a figure's caption or a note"
    longest = max((len(w) for w in words if w.isupper()), default=0)
    if longest >= settings.run_together_caps and len(words) <= 2:
        return "letters run together"  # a rotated banner read across, letter by letter
    spaced = [w for w in words if not CJK.search(w)]  # scripts written without spaces
    if max((len(w) for w in spaced), default=0) >= settings.run_together_words:
        return "words run together"  # a text layer without its spaces
    digits = sum(1 for c in stripped if c.isdigit())
    if digits > settings.figure_share * len(stripped.replace(" ", "")):
        return "figures"
    enumerated = numbered or ENUMERATED.match(stripped)
    body = enumerated.group(2) if enumerated else stripped
    first = next((c for c in body if c.isalnum()), "")
    if first.isalpha() and first.islower():
        return "starts in lower case"
    if stripped.endswith((",", ";", "-", "–", "(", "/")) and not stripped.endswith("--"):
        return "ends mid-sentence"
    last = re.sub(r"[^\w]+$", "", words[-1]) if words else ""
    if len(words) > 1 and last in OPEN_ENDINGS:
        return "ends mid-sentence"
    if not numbered and stripped.endswith(".") and len(words) >= settings.sentence_words:
        return "a sentence"
    return None


@dataclass
class Evidence:
    """What a line's print says about it, read against its page and the body text."""

    larger: bool
    bold: bool
    numbered: bool
    capitals: bool
    centred: bool
    apart: bool
    short: bool
    size: float
    spread: bool = False

    def says_heading(self, words: int, settings: StructureSettings, body: float) -> bool:
        """Whether the print makes a heading of a line whose text can be one."""
        if self.spread or self.size < body - settings.smaller_by:
            return False  # a figure's labels spread along an axis, a footnote's small type
        bump = self.size >= body + settings.bump_by
        if words == 1 and not self.numbered and self.size < body + settings.one_word_larger_by:
            # one word alone: a list's item, a label, unless it is set apart as a heading
            return (self.bold or self.capitals or bump) and self.apart
        if self.larger:
            return self.apart or self.short or self.numbered
        if self.bold:
            return self.apart or self.numbered or self.short
        if self.numbered:
            return (self.capitals or bump) and self.apart
        if bump:
            return self.apart and self.short
        return self.capitals and self.apart and self.short and self.centred


@dataclass
class PageFrame:
    """A page's text block: left and right edges of its lines, and the body's usual
    space between lines."""

    left: float
    right: float
    gap: float

    @property
    def width(self) -> float:
        """Width of the text block."""
        return max(1.0, self.right - self.left)


def page_frames(lines: Sequence[Line], pages: Sequence[int], body: float) -> dict[int, PageFrame]:
    """Each page's text block (`PageFrame`), from its lines outside tables."""
    by_page: dict[int, list[Line]] = {}
    for line, page in zip(lines, pages, strict=True):
        if line.table < 0:
            by_page.setdefault(page, []).append(line)
    frames: dict[int, PageFrame] = {}
    for page, own in by_page.items():
        rights = [ln.x1 for ln in own if ln.x1 > ln.x0]
        gaps = [
            b.top - a.bottom
            for a, b in zip(own, own[1:], strict=False)
            if abs(a.size - body) < 0.6 and abs(b.size - body) < 0.6 and 0 <= b.top - a.bottom
        ]
        frames[page] = PageFrame(
            left=min(ln.x0 for ln in own),
            right=max(rights) if rights else 0.0,
            gap=statistics.median(gaps) if gaps else body * 0.3,
        )
    return frames


def evidence(
    lines: Sequence[Line],
    i: int,
    page: int,
    pages: Sequence[int],
    frame: PageFrame,
    body: float,
    settings: StructureSettings = DEFAULT_STRUCTURE,
) -> Evidence:
    """What the print of line `i` says, against its neighbours on its page."""
    line = lines[i]
    text = line.text.strip()
    prev = lines[i - 1] if i > 0 and pages[i - 1] == page else None
    if prev is None or prev.table >= 0 or line.top < prev.top:
        apart = True  # opens a page, follows a table, or opens a column
    else:
        apart = line.top - prev.bottom > max(frame.gap * settings.gap_factor, body * 0.6)
    letters = [c for c in text if c.isalpha()]
    recorded = line.x1 > line.x0
    short = (
        recorded and frame.right > 0 and line.x1 < frame.left + frame.width * settings.short_line
    )
    middle = (line.x0 + line.x1) / 2
    centred = (
        short
        and line.x0 > frame.left + frame.width * 0.05
        and abs(middle - (frame.left + frame.right) / 2) < frame.width * settings.centred_by
    )
    return Evidence(
        larger=line.size >= body + settings.larger_by,
        bold=line.bold,
        numbered=bool(NUMBERED.match(text) or LETTERED.match(text)),
        capitals=len(letters) >= 3 and all(c.isupper() for c in letters),
        centred=centred,
        apart=apart,
        short=short or not recorded,
        size=line.size,
        spread=recorded
        and line.x1 - line.x0 > settings.spread_width * line.size * len(text.replace(" ", "")),
    )


def toc_pages(
    lines: Sequence[Line], pages: Sequence[int], settings: StructureSettings = DEFAULT_STRUCTURE
) -> set[int]:
    """The pages that are a table of contents: many lines ending in a page number after
    dot leaders or a gap, or a page titled so with such lines under it."""
    entries: dict[int, int] = {}
    total: dict[int, int] = {}
    titled: set[int] = set()
    for line, page in zip(lines, pages, strict=True):  # a table reader may take it for one
        text = line.text.strip()
        total[page] = total.get(page, 0) + 1
        if TOC_TITLE.match(fold_text(text)):
            titled.add(page)
        if DOT_LEADERS.search(text) or (TOC_ENTRY.search(text) and any(c.isalpha() for c in text)):
            entries[page] = entries.get(page, 0) + 1
    found = set()
    for page, count in entries.items():
        need = settings.toc_lines if page in titled else settings.toc_lines + 2
        if count >= need and count >= settings.toc_share * total[page]:
            found.add(page)
    return found


def style_key(line: Line, body: float, settings: StructureSettings = DEFAULT_STRUCTURE) -> tuple:
    """A heading's style for its depth: its size when larger than the body's (weight and
    case aside: a document sets one level in one size), else its size and weight."""
    size = round(line.size * 2) / 2
    return (size, True) if line.size >= body + settings.larger_by else (size, line.bold)


def numbering(head: str) -> tuple[str, int] | None:
    """A heading's numbering scheme and depth: `arabic` with its depth (`2.1` is 2),
    `roman` (`II.`), `upper` (`B.`); None when it is not numbered."""
    numbered = NUMBERED.match(head)
    if numbered:
        return "arabic", numbered.group(1).count(".") + 1
    lettered = LETTERED.match(head)
    if not lettered:
        return None
    label = lettered.group(1).rstrip(".")
    return ("roman" if ROMAN_LABEL.match(label) and label != "C" else "upper"), 1


def numbering_levels(schemes: Sequence[tuple[str, int]]) -> list[int]:
    """The depth of each numbered heading, in document order: each scheme one level
    under the schemes seen before it (`I.` over `A.` over `1.`), dotted numbers deeper by
    their dots; a document numbered `1`, `1.1` only starts at 2."""
    order: list[str] = []
    out = []
    for kind, depth in schemes:
        if kind not in order:
            order.append(kind)
        out.append(2 + order.index(kind) + depth - 1)
    return out


def style_levels(styles: Sequence[tuple], first: int = 2) -> dict[tuple, int]:
    """The depth of each unnumbered heading style: larger first, then bold; the first style
    at `first`, the rest one deeper each (at most 4)."""
    ordered = sorted(set(styles), key=lambda s: (-s[0], not s[1]))
    return {style: min(4, first + rank) for rank, style in enumerate(ordered)}


def run_in(line: Line, seen: Evidence, settings: StructureSettings = DEFAULT_STRUCTURE) -> str:
    """The run-in heading opening a line (`Scope.` in `Scope. The study covers...`): bold
    words ending with a full stop or a colon, the rest of the line not bold, set apart
    from the text above or numbered; "" when the line opens with none."""
    if not line.lead or line.bold:
        return ""
    head = line.text[: line.lead].strip()
    if not head.endswith((".", ":")) or len(head.split()) > settings.run_in_words:
        return ""
    if text_veto(head.rstrip(".:"), settings) is not None:
        return ""
    numbered = NUMBERED.match(head) or LETTERED.match(head)
    if not (seen.apart or numbered):
        return ""
    return head.rstrip(".:").strip()


def quoted(text: str, running: str, times: int = 1) -> bool:
    """Whether a line of `QUOTE_WORDS` words or more is printed in the running text
    (`running`: its lines folded) at least `times` times: a pull quote repeating the
    text it sits in, not a heading."""
    folded = fold_text(text)
    if len(folded.split()) < QUOTE_WORDS or titled(text):
        return False  # a title's words repeated in the text (`Do Sistema Nacional ...`)
    return running.count(folded) >= times


def titled(text: str) -> bool:
    """Whether a text is set as a title: in capitals, or most of its longer words
    capitalized (`Coverage of Target Groups`), not as a sentence."""
    words = [w for w in re.findall(r"[^\W\d_]+", text) if len(w) >= 4]
    if not words:
        return False
    return sum(1 for w in words if w[0].isupper()) * 2 > len(words)
