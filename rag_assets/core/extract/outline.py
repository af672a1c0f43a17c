"""The document's own statement of its sections: the PDF's outline (bookmarks), else the
headings of its tagged structure tree (`H`, `H1`..`H6`).

Where a PDF states its sections, reading them beats guessing them from fonts: the structure
tree opens a section at each entry (`core/structure`). An entry keeps the page it points at
and, when the destination says so, how far down that page (pdfplumber's top-down points),
so that it can be matched to the printed line it names. Anything unreadable in an outline
(a broken reference, an undecodable title) drops that entry, never the document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pdfminer.pdftypes import PDFObjRef, resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import decode_text
from pdfplumber.structure import PDFStructTree

MAX_ENTRIES = 2000  # an outline longer than this is a machine's index, not sections
MAX_LEVEL = 6
HEADING_TAG = re.compile(r"^H([1-6])?$")


@dataclass(frozen=True)
class OutlineEntry:
    """One section the PDF states: its title, depth (1 = top), page and place on it."""

    title: str
    level: int
    page: int
    top: float | None = None
    source: str = "outline"  # or "tagged": a heading of the tagged structure tree

    def as_row(self) -> dict[str, Any]:
        """The entry as a Parquet struct (its page is the row it is stored on)."""
        return {"title": self.title, "level": self.level, "top": self.top, "source": self.source}


def outline_from_pages(pages: Iterable[Mapping[str, Any]]) -> list[OutlineEntry]:
    """The outline as the pages stage stored it (each page's `outline` entries), in
    document order; [] for pages stored before the stage recorded it."""
    return [
        OutlineEntry(e["title"], e["level"], page["page"], e["top"], e["source"])
        for page in pages
        for e in page.get("outline") or []
    ]


def read_outline(pdf: Any) -> list[OutlineEntry]:
    """The sections a pdfplumber `pdf` states: its outline's entries that point at a page,
    else its tagged headings; [] when it states none."""
    pages = {p.page_obj.pageid: (i + 1, float(p.height)) for i, p in enumerate(pdf.pages)}
    try:
        entries = list(_outline_entries(pdf.doc, pages))
    except Exception:  # pdfminer raises PDFNoOutlines and many others for a broken one
        entries = []
    if len(entries) >= 2:
        return entries[:MAX_ENTRIES]
    if "StructTreeRoot" in _catalog(pdf.doc):
        try:
            tagged = _tagged_headings(pdf)
        except Exception:  # a broken structure tree states nothing
            tagged = []
        if tagged:
            return tagged[:MAX_ENTRIES]
    return entries


def _catalog(doc: Any) -> dict[str, Any]:
    try:
        return dict(doc.catalog)
    except Exception:
        return {}


def _title(raw: Any) -> str:
    if isinstance(raw, bytes):
        raw = decode_text(raw)
    if not isinstance(raw, str):
        return ""
    return re.sub(r"\s+", " ", raw.replace("\x00", "")).strip()


def _outline_entries(doc: Any, pages: dict[int, tuple[int, float]]) -> Iterator[OutlineEntry]:
    for level, title, dest, action, _ in doc.get_outlines():
        text = _title(title)
        if not text:
            continue
        target = _destination(doc, dest, action)
        if target is None:
            continue
        ref, top = target
        if ref not in pages:
            continue
        page, height = pages[ref]
        yield OutlineEntry(
            text, max(1, min(int(level), MAX_LEVEL)), page, height - top if top else None
        )


def _destination(doc: Any, dest: Any, action: Any) -> tuple[int, float | None] | None:
    """(page object id, PDF y of the destination or None) of an entry's dest or action."""
    if dest is None and action is not None:
        action = resolve1(action)
        if isinstance(action, dict) and _name(action.get("S")) == "GoTo":
            dest = action.get("D")
    dest = resolve1(dest)
    if isinstance(dest, (bytes, str, PSLiteral)):
        name = dest.name if isinstance(dest, PSLiteral) else dest
        try:
            dest = resolve1(doc.get_dest(name))
        except Exception:
            return None
    if isinstance(dest, dict):
        dest = resolve1(dest.get("D"))
    if not isinstance(dest, list) or not dest:
        return None
    ref = dest[0]
    if not isinstance(ref, PDFObjRef):
        return None
    top = None
    kind = _name(dest[1]) if len(dest) > 1 else ""
    if kind == "XYZ" and len(dest) > 3:
        top = _number(dest[3])
    elif kind in ("FitH", "FitBH") and len(dest) > 2:
        top = _number(dest[2])
    return ref.objid, top


def _name(value: Any) -> str:
    value = resolve1(value)
    if isinstance(value, PSLiteral):
        return str(value.name)
    return value.decode("latin-1") if isinstance(value, bytes) else str(value or "")


def _number(value: Any) -> float | None:
    value = resolve1(value)
    return float(value) if isinstance(value, (int, float)) else None


def _tagged_headings(pdf: Any) -> list[OutlineEntry]:
    """The `H`/`H1`..`H6` elements of a tagged PDF, their text read from the characters
    of their marked content on their page."""
    found: list[tuple[int, int, set[int]]] = []  # (page, level, mcids)

    def walk(element: Any) -> None:
        match = HEADING_TAG.match(str(element.type))
        if match:
            pages = [(page, mcid) for page, mcid in element.all_mcids() if page is not None]
            if pages:
                first = pages[0][0]
                mcids = {mcid for page, mcid in pages if page == first}
                found.append((first, int(match.group(1) or 1), mcids))
            return
        for child in element.children:
            walk(child)

    for element in PDFStructTree(pdf):
        walk(element)
    entries: list[OutlineEntry] = []
    for number, level, mcids in found:
        page = pdf.pages[number - 1]
        chars = [c for c in page.chars if c.get("mcid") in mcids]
        if not chars:
            continue
        text = _title("".join(c["text"] for c in chars))
        if text:
            top = min(float(c["top"]) for c in chars)
            entries.append(OutlineEntry(text, level, number, top, "tagged"))
    return entries
