"""Table proposals for the reader: the model's boxes where a page's rules and alignment
found no table, looked for only on pages that may hold one.

The model costs about as much CPU as reading the page, so it is not run on every page:
only where something outside the tables already found looks tabular (`worth_a_look`:
printed lines of three or more column-separated segments of a few words that are not
justified prose, or cells drawn as filled rectangles). Its boxes that a found table
already covers are dropped: the rule-based finder's boxes, and the model's where it has
none (the joining `bench/table_regions.py` chose by region recall and precision).
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_assets.core.layout.regions import LayoutModelError, LayoutSettings, page_table_regions
from rag_assets.core.page import Box, Word, area, centred_in, covered, intersection
from rag_assets.core.tables import DEFAULT_SETTINGS as TABLES
from rag_assets.core.tables import TableSettings, height, printed_lines, segments

DEFAULT = LayoutSettings()


def _tabular(line: list[Word], settings: LayoutSettings, tables: TableSettings) -> bool:
    """A printed line that looks like a table row: three or more segments of a few words
    each (not prose set in columns), and not a justified line of prose (every segment
    one word, the gaps between them alike and under three character heights: the
    stretched spaces of justified text)."""
    parts = segments(line, tables)
    if len(parts) < settings.look_segments:
        return False
    if statistics.median(len(part) for part in parts) > tables.proposed_cell_words:
        return False  # runs of prose side by side: a page in columns
    if any(len(part) > 1 for part in parts):
        return True
    gaps = [b[0]["x0"] - a[-1]["x1"] for a, b in zip(parts, parts[1:], strict=False)]
    if max(gaps) > settings.justified_max_em * height(line):
        return True  # spaces are never stretched that wide: columns
    return max(gaps) > settings.justified_spread * max(min(gaps), settings.justified_min_gap)


def worth_a_look(
    words: list[Word],
    rects: list[dict[str, Any]],
    tables: list[Box],
    settings: LayoutSettings = DEFAULT,
    table_settings: TableSettings = TABLES,
) -> bool:
    """Whether a page may hold a table that its found `tables` do not: outside them, at
    least `look_lines` printed lines that look like table rows (`_tabular`), or at least
    `look_filled_cells` filled rectangles the size of a cell or larger."""
    free = [w for w in words if w["text"].strip() and not any(centred_in(t, w) for t in tables)]
    lines = printed_lines(free, table_settings)
    if sum(1 for line in lines if _tabular(line, settings, table_settings)) >= settings.look_lines:
        return True
    filled = [
        r
        for r in rects
        if r.get("fill")
        and r["x1"] - r["x0"] >= settings.filled_cell
        and r["bottom"] - r["top"] >= settings.filled_cell
        and not any(centred_in(t, r) for t in tables)
    ]
    return len(filled) >= settings.look_filled_cells


def found_there(box: Box, tables: list[Box], settings: LayoutSettings = DEFAULT) -> bool:
    """Whether the model's `box` is a table already found, so proposing it adds nothing:
    a found table shares `found_covered` of the box's area or of its own with it, unless
    the tables found inside the box fill less than `found_part` of it between them (a
    ruled box of headings found, the body under it not: the box says where the rest is)."""
    if not covered(box, tables, settings.found_covered):
        return False
    size = area(box)
    if size <= 0:
        return True
    near = [t for t in tables if intersection(box, t) > 0]
    inside = [t for t in near if intersection(box, t) >= settings.found_inside * area(t)]
    if len(inside) < len(near):
        return True  # a table found across the box's edge: the box is (part of) that one
    return sum(intersection(box, t) for t in inside) >= settings.found_part * size


class PageProposer:
    """The model's table boxes for the pages of one PDF (a path, its bytes, or a function
    giving them: a file in an object store is read only if a page needs the model),
    opened with pypdfium2 on first need; `close` when the document is read. `tables`: the
    table reader's settings, how a page's words are read into lines and segments when
    deciding whether it is worth a look."""

    def __init__(
        self,
        pdf: Path | bytes | Callable[[], bytes],
        settings: LayoutSettings | None = None,
        tables: TableSettings = TABLES,
    ) -> None:
        self.pdf = pdf
        self.settings = settings or LayoutSettings()
        self.tables = tables
        self.looked = 0  # pages the model looked at
        self._document: Any = None
        self._lock = threading.Lock()

    def regions(self, number: int) -> list[Box]:
        """The model's table boxes on page `number` (1-based), PDF points, top-left origin;
        none when pdfium cannot render the page (it is read without them). A missing or
        broken model raises `LayoutModelError`."""
        import pypdfium2 as pdfium

        with self._lock:
            try:
                if self._document is None:
                    source = self.pdf() if callable(self.pdf) else self.pdf
                    self._document = pdfium.PdfDocument(
                        source if isinstance(source, bytes) else str(source)
                    )
                page = self._document[number - 1]
            except Exception:  # pdfium refuses what pdfplumber read: no proposals
                return []
            try:
                self.looked += 1
                return [r.bbox for r in page_table_regions(page, self.settings)]
            except LayoutModelError:
                raise
            except Exception:  # a page pdfium cannot render: no proposals
                return []
            finally:
                page.close()

    def proposals(self, number: int, page: Any, words: list[Word], tables: list[Box]) -> list[Box]:
        """Boxes on a pdfplumber `page` (as read: upright, not turned by trecho) where the
        model sees a table none of the found `tables` covers; none when the page shows
        nothing tabular outside them or the model is off."""
        settings = self.settings
        if not settings.enabled:
            return []
        if not worth_a_look(words, page.rects, tables, settings, self.tables):
            return []
        return [b for b in self.regions(number) if not found_there(b, tables, settings)]

    def close(self) -> None:
        """Let go of the pypdfium2 document."""
        with self._lock:
            if self._document is not None:
                self._document.close()
                self._document = None
