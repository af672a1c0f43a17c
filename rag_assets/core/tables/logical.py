"""Logical tables: the pieces of a table printed over several pages joined into one, so
that its rows on page 16 still carry the header printed on page 1."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_assets.core.tables.cells import CellKind, classify
from rag_assets.core.tables.model import PageTable


@dataclass
class LogicalRow:
    """One row of a logical table: its cells, page and span in the document text."""

    index: int
    cells: list[str]
    page: int
    char_start: int
    char_end: int


@dataclass
class LogicalTable:
    """A table as a reader sees it: one header, its data rows from every page it spans."""

    parts: list[PageTable]
    header: list[str]
    has_header: bool
    title: str
    rows: list[LogicalRow]

    @property
    def structured(self) -> bool:
        """Whether the table was read into rows (it has a data row with a cell): indexed
        row by row, always, whether its columns are named or not (`named`). One with no
        data row is indexed as its printed lines (`table_text`)."""
        return any(any(c.strip() for c in r.cells) for r in self.rows)

    @property
    def named(self) -> bool:
        """Whether its columns were read with names: a header, and a name over every
        column holding a figure (the stub's, and a second stub's of labels, may have
        none), so that each value is written `Header: value`. A table read without named
        columns (no header, or columns of figures left without one: headings run together
        over several columns) is linearized under its printed header lines instead, and
        counted (`tables_without_named_columns`)."""
        width = max((len(r.cells) for r in self.rows), default=0)
        if not self.has_header or width < 2:
            return False
        names = [h.strip() for h in self.header] + [""] * width
        return all(
            names[j]
            or not any(
                j < len(r.cells) and classify(r.cells[j]) in (CellKind.FIGURE, CellKind.DATE)
                for r in self.rows
            )
            for j in range(1, width)
        )

    def header_lines(self, text: str = "") -> list[str]:
        """Its title and header rows as printed, one string a line: each row's cells
        joined in printed order, then, verbatim from the document `text` where the rows'
        spans say where, every printed line of those rows holding a word no cell has (a
        heading the grid did not place; words the line reading ran together, `HandgunLong`,
        set apart as the cells read them). What the rows of a table read without named
        columns are indexed under."""
        first = self.parts[0]
        rows = first.rows[: min(first.header_rows, len(first.rows))]
        lines = [" ".join(" ".join(c.split()) for c in row if c.strip()) for row in rows]
        words = {w for line in lines for w in line.split()}
        for i in range(len(rows)):
            a, b = first.row_spans[i] if i < len(first.row_spans) else (-1, -1)
            if 0 <= a < b <= len(text):
                printed = (_respaced(line, words) for line in text[a:b].split("\n"))
                lines += [line for line in printed if not set(line.split()) <= words]
        out = [line for i, line in enumerate(lines) if line and line not in lines[:i]]
        if self.title and not any(self.title in line for line in out):
            out.insert(0, self.title)
        return out

    @property
    def char_start(self) -> int:
        """Start of the first piece in the document text."""
        starts = [p.char_start for p in self.parts if p.char_start >= 0]
        return min(starts) if starts else -1

    @property
    def char_end(self) -> int:
        """End of the last piece in the document text."""
        return max((p.char_end for p in self.parts), default=-1)

    @property
    def pages(self) -> tuple[int, int]:
        """First and last page the table is printed on."""
        return self.parts[0].page, self.parts[-1].page

    @property
    def keys(self) -> list[tuple[int, int]]:
        """The (page, index) of every piece."""
        return [(p.page, p.index) for p in self.parts]

    def as_row(self) -> dict[str, Any]:
        """The table as the pages stage stores it (`schemas.LOGICAL_TABLE`): its pieces
        named by (page, index), its header, title and rows."""
        return {
            "parts": [{"page": page, "index": index} for page, index in self.keys],
            "header": self.header,
            "has_header": self.has_header,
            "title": self.title,
            "rows": [vars(row) for row in self.rows],
        }


def _respaced(line: str, words: set[str]) -> str:
    """A printed line with each token that is several of `words` run together (a line
    read at a wider word gap than the cells: `HandgunLong`) set apart again."""
    out: list[str] = []
    for token in line.split():
        out.append(token if token in words else " ".join(_run_of(token, words) or [token]))
    return " ".join(out)


def _run_of(token: str, words: set[str]) -> list[str] | None:
    """`token` as consecutive `words`, the fewest that make it, or None."""
    best: list[list[str] | None] = [[]] + [None] * len(token)  # best[i]: token[:i]
    for end in range(1, len(token) + 1):
        for start in range(end):
            run = best[start]
            if run is not None and token[start:end] in words:
                if best[end] is None or len(run) + 1 < len(best[end] or []):
                    best[end] = [*run, token[start:end]]
    return best[-1]


def norm_row(row: Sequence[str]) -> list[str]:
    """A row's cells compared without case and spacing."""
    return [" ".join(c.split()).lower() for c in row]


def join_tables(parts: Sequence[PageTable]) -> list[LogicalTable]:
    """Group page pieces into logical tables, in reading order.

    A piece marked `continues` joins the table before it: its repeated header rows are
    dropped, and a first row whose first cell is empty while every earlier row had one
    is the rest of the previous row cut by the page break (its cells are appended).
    Row indices run over the whole logical table (header rows first), so that a row keeps
    its id whichever page it is printed on.
    """
    tables: list[LogicalTable] = []
    for part in parts:
        if part.continues and tables:
            _append(tables[-1], part)
            continue
        lead = part.header_rows
        header = list(part.header)
        rows = [
            LogicalRow(i, list(cells), part.page, *_span(part, i))
            for i, cells in enumerate(part.rows)
            if i >= lead
        ]
        tables.append(LogicalTable([part], header, bool(header), part.title, rows))
    return tables


def _span(part: PageTable, i: int) -> tuple[int, int]:
    if i < len(part.row_spans) and part.row_spans[i][0] >= 0:
        return part.row_spans[i][0], part.row_spans[i][1]
    return part.char_start, part.char_end


def _append(table: LogicalTable, part: PageTable) -> None:
    first = table.parts[0]
    skip = 0
    header_rows = first.rows[: first.header_rows]
    repeated = [norm_row(r) for r in header_rows if any(c.strip() for c in r)]
    for row in part.rows:
        if skip < len(part.rows) and repeated and norm_row(row) in repeated:
            skip += 1
            continue
        break
    table.parts.append(part)
    next_index = (table.rows[-1].index + 1) if table.rows else first.header_rows
    keyed = bool(table.rows) and all(r.cells and r.cells[0].strip() for r in table.rows)
    for i in range(skip, len(part.rows)):
        cells = list(part.rows[i])
        start, end = _span(part, i)
        if i == skip and keyed and cells and not cells[0].strip() and any(cells):
            prev = table.rows[-1]  # the rest of a row cut by the page break
            prev.cells = [
                " ".join(x for x in (a, b) if x.strip())
                for a, b in zip(prev.cells, cells + [""] * len(prev.cells), strict=False)
            ]
            prev.char_end = max(prev.char_end, end)
            continue
        table.rows.append(LogicalRow(next_index, cells, part.page, start, end))
        next_index += 1


def logical_from_pages(pages: Iterable[Mapping[str, Any]]) -> list[LogicalTable]:
    """The logical tables of a version as the `page_text` stage joined and stored them
    (each page's `logical_tables`: the tables that start on it), their pieces read from
    the pages' `tables`; a pages file written before they were stored is joined here."""
    rows = sorted(pages, key=lambda p: p["page"])
    if rows and "logical_tables" not in rows[0]:  # a file from before page_text stored them
        return join_tables(parts_from_pages(rows))
    pieces = {(p.page, p.index): p for p in parts_from_pages(rows)}
    return [
        LogicalTable(
            [pieces[(k["page"], k["index"])] for k in stored["parts"]],
            list(stored["header"]),
            stored["has_header"],
            stored["title"],
            [LogicalRow(**r) for r in stored["rows"]],
        )
        for page in rows
        for stored in page.get("logical_tables") or []
    ]


def parts_from_pages(pages: Iterable[Mapping[str, Any]]) -> list[PageTable]:
    """The table pieces of a version from the rows the `page_text` stage wrote (each page's
    `page` and its tables as `PageTable.as_row` stored them), in page order."""
    return [
        PageTable.from_row(t, page["page"])
        for page in sorted(pages, key=lambda p: p["page"])
        for t in page.get("tables") or []
    ]
