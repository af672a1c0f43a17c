"""What extraction returns: lines, pages (with their tables, `core.tables.PageTable`), the
whole document, and its error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_assets.core.errors import UserError
from rag_assets.core.extract.outline import OutlineEntry
from rag_assets.core.lake import DocText
from rag_assets.core.tables import LogicalTable, PageTable, join_tables, parts_from_pages


class PdfError(UserError, ValueError):
    """A PDF that cannot be read; the message names the file and the reason."""


@dataclass
class Line:
    """One text line of a page, with where it sits and how it is printed."""

    text: str
    x0: float
    top: float
    bottom: float
    size: float
    bold: bool
    table: int = -1
    char_start: int = 0
    char_end: int = 0
    x1: float = 0.0  # right edge (0: not recorded, a page read before it was)
    lead: int = 0  # characters of a bold run opening a line not bold throughout (run-in)

    def as_row(self) -> dict[str, Any]:
        """The line as a Parquet struct."""
        return {
            "text": self.text,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "x0": self.x0,
            "top": self.top,
            "bottom": self.bottom,
            "size": self.size,
            "bold": self.bold,
            "table": self.table,
            "x1": self.x1,
            "lead": self.lead,
        }


@dataclass
class Page:
    """One extracted page. `rotation` is how far it was turned to read its text upright."""

    page: int
    lines: list[Line]
    tables: list[PageTable]
    has_text_layer: bool
    ocr: bool = False
    char_start: int = 0
    rotation: int = 0
    width: float = 0.0
    height: float = 0.0
    sideways_chars: int = 0  # characters of margin stamps running sideways, dropped
    columns: bool = False  # set in columns, read column by column

    @property
    def text(self) -> str:
        """The page's text, one line per line."""
        return "\n".join(line.text for line in self.lines)


@dataclass
class Extraction:
    """Every page of a document plus the joined document text and what was repaired."""

    pages: list[Page]
    doc: DocText
    stats: dict[str, int] = field(default_factory=dict)
    outline: list[OutlineEntry] = field(default_factory=list)
    """The sections the PDF states (bookmarks or tagged headings), in document order."""

    def outline_on(self, page: int) -> list[dict[str, Any]]:
        """The outline entries pointing at one page, as the pages stage stores them."""
        return [e.as_row() for e in self.outline if e.page == page]

    def table_parts(self) -> list[PageTable]:
        """Every page's table pieces, in reading order, as the pipeline reads them back
        from the `page_text` rows (`parts_from_pages` over each page's stored tables)."""
        return parts_from_pages(
            {"page": p.page, "tables": [t.as_row() for t in p.tables]} for p in self.pages
        )

    def logical_tables(self) -> list[LogicalTable]:
        """The tables as a reader sees them, pieces continued across pages joined."""
        return join_tables(self.table_parts())
