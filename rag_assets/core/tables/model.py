"""The values passed between the table stages: a region, a grid, a page's table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_assets.core.page import Box, Word


@dataclass(frozen=True)
class Region:
    """Where a table may be printed on a page, and who says so.

    `kind` is `ruled` (a grid of rules pdfplumber's table finder cut into cells; `found`
    is its `Table`) or `proposed` (a box given from outside, a layout model's; read by
    alignment within it).
    """

    bbox: Box
    kind: str
    found: Any = None


@dataclass
class Grid:
    """A table as a reader read it, before its header and stub are: the rows of cells
    (`None` marks a position covered by a merged cell or a heading over several columns,
    `""` an empty cell), each row's box, the column edges and the table's box.

    `ruled`: rows cut by rules (the finish then joins label rests cut into rows of their
    own and takes group labels printed beside the box); `beside`: the page's words the
    table may take as labels beside its box; `header_rows`: how many rows the reader saw
    printed as the header (None: the header block decides alone).
    """

    bbox: Box
    rows: list[list[str | None]]
    row_boxes: list[Box]
    columns: list[float]
    ruled: bool = False
    beside: list[Word] = field(default_factory=list)
    header_rows: int | None = None


@dataclass
class Header:
    """What heads a table, as `header_block.read_header` (the one decider) reads it: the
    title row's text, how many leading rows are no data (title, rows of headings, the
    columns' numbers, a units row) and each column's path of headings (`Permit >
    Handgun`); no names when the columns could not be named, the leading rows then read
    as the table's printed header lines."""

    title: str = ""
    rows: int = 0
    names: list[str] = field(default_factory=list)

    def heads(self) -> bool:
        """Whether a header is printed over the rows: named columns, or rows of headings
        whose columns could not be named. A title alone heads nothing."""
        return bool(self.names) or self.rows > (1 if self.title else 0)


@dataclass
class PageTable:
    """A table found on a page: its cells and the span of each row in the text. As stored
    and read back (`from_row`), the piece of a table `logical.join_tables` joins."""

    index: int
    bbox: Box
    rows: list[list[str]]
    row_bboxes: list[Box]
    row_spans: list[tuple[int, int]] = field(default_factory=list)
    char_start: int = -1
    char_end: int = -1
    header_rows: int = 0
    header: list[str] = field(default_factory=list)
    title: str = ""
    continues: bool = False
    columns: list[float] = field(default_factory=list)  # column edges (not stored)
    page: int = 0  # the page it is printed on (stored with the page, not the table)

    def headed(self) -> bool:
        """Whether a header is printed over its rows (`Header.heads`): a run of number
        lines under a title alone stays text."""
        return Header(self.title, self.header_rows, self.header).heads()

    def as_row(self) -> dict[str, Any]:
        """The table as a Parquet struct."""
        return {
            "index": self.index,
            "bbox": list(self.bbox),
            "rows": self.rows,
            "row_spans": [list(s) for s in self.row_spans],
            "char_start": self.char_start,
            "char_end": self.char_end,
            "header_rows": self.header_rows,
            "header": self.header,
            "title": self.title,
            "continues": self.continues,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any], page: int) -> PageTable:
        """A table as `as_row` stored it, on its `page` (row boxes and column edges are
        not stored): the piece `logical.join_tables` joins."""
        x0, top, x1, bottom = row.get("bbox") or (0.0, 0.0, 0.0, 0.0)
        return cls(
            index=row["index"],
            bbox=(x0, top, x1, bottom),
            rows=[list(r) for r in row["rows"]],
            row_bboxes=[],
            row_spans=[(s[0], s[1]) for s in row.get("row_spans") or []],
            char_start=row.get("char_start", -1),
            char_end=row.get("char_end", -1),
            header_rows=row.get("header_rows") or 0,
            header=list(row.get("header") or []),
            title=row.get("title") or "",
            continues=bool(row.get("continues")),
            page=page,
        )
