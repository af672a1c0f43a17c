"""Tables: header rows identified, pieces continued across pages joined into one logical
table, and every data row linearized so that it carries its header.

A value like `92` means nothing without its column (`Limite`) and its row (`Ruído`): each
data row becomes `Medida: Ruído; Unidade: dB; Limite: 92; Ação: Revisar o isolamento`,
and a row is the smallest unit a chunk may hold. A table printed over several pages is
one table: its rows on page 16 still carry the header printed on page 1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rag_assets.core.lake.schemas import Node
from rag_assets.core.structure.headers import SYMBOL_MARK, looks_like_header

# a value with its mark printed against it; a digit before `)` is a mark only where it
# breaks the number's thousands groups (`54,8761)`)
MARKED = re.compile(
    rf"^([-–+]?\d[\d.,\s]*?(?:\d{{1,3}}(?:[.,\s]\d{{3}})+|\d))"
    rf"((?:{SYMBOL_MARK}|\(?[a-z]\)|\(\d\))|(?<=\d{{3}})\d\))$"
)
CONTINUED = re.compile(r"(?i)\b(?:continua[çc][ãa]o|continua|continued|cont\.)(?!\w)")
COLUMN_TOLERANCE = 0.015  # column edges of a continued table agree within this share of width


@dataclass
class TableRow:
    """One data row of a table with the header it is read under."""

    partition_key: str
    table_id: str
    caption: str
    path: str
    row_index: int
    header: list[str]
    cells: list[str]
    text: str
    page: int
    char_start: int
    char_end: int

    def as_row(self) -> dict[str, Any]:
        """The row as a Parquet row."""
        return asdict(self)


@dataclass
class TableLayout:
    """Where a table sits on its page: what the continuation test looks at."""

    page: int
    columns: list[float]  # x of every column edge, left to right
    page_width: float
    first_on_page: bool  # no text above it (running headers aside)
    last_on_page: bool  # no text below it (running footers and "continued" notes aside)


@dataclass
class TablePart:
    """One page's piece of a table, as `page_text` found and stored it."""

    page: int
    index: int
    rows: list[list[str]]
    row_spans: list[tuple[int, int]] = field(default_factory=list)
    char_start: int = -1
    char_end: int = -1
    header_rows: int = 0  # leading rows that are not data (title row and header rows)
    header: list[str] = field(default_factory=list)  # column names; empty when none printed
    title: str = ""  # a first row spanning the whole table that names it
    continues: bool = False  # continues the last table of the previous page


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

    parts: list[TablePart]
    header: list[str]
    has_header: bool
    title: str
    rows: list[LogicalRow]

    @property
    def structured(self) -> bool:
        """Whether the table was read into rows under named columns; one that was not is
        indexed as its printed lines (`table_text`) and flagged, never linearized."""
        width = max((len(r.cells) for r in self.rows), default=0)
        printed = all(s[0] >= 0 for p in self.parts for s in p.row_spans)  # a line per row
        return self.has_header and width >= 2 and bool(self.rows) and printed

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


def separate_mark(cell: str) -> str:
    """A value with its footnote mark set apart by a space (`54,876*` -> `54,876 *`,
    `1,234¹` -> `1,234 ¹`, `54,8761)` -> `54,876 1)`), so that the number reads, and is
    searched, as printed without its mark."""
    text = cell.strip()
    match = MARKED.match(text)
    return f"{match.group(1)} {match.group(2)}" if match else cell


def column_names(header: Sequence[str], width: int) -> list[str]:
    """Header names for every column; a column the header does not name is `Coluna N`,
    except the first (the stub column of row labels), which stays unnamed."""
    names = [h.strip() for h in header][:width] + [""] * max(0, width - len(header))
    return [name or (f"Coluna {i + 1}" if i else "") for i, name in enumerate(names)]


def _columns_agree(a: Sequence[float], b: Sequence[float], page_width: float) -> bool:
    if len(a) != len(b) or not a:
        return False
    tolerance = max(3.0, page_width * COLUMN_TOLERANCE)
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def _norm_row(row: Sequence[str]) -> list[str]:
    return [" ".join(c.split()).lower() for c in row]


def continues(
    previous: TableLayout,
    current: TableLayout,
    previous_header: Sequence[str],
    current_first_row: Sequence[str],
) -> bool:
    """Whether `current` continues `previous` on the next page: one logical table.

    Both must sit where a page break cuts a table (`previous` last on its page, `current`
    first on the next), with the same columns; the current piece either repeats the
    previous header or has its column edges where the previous piece had them.
    """
    if current.page != previous.page + 1:
        return False
    if not (previous.last_on_page and current.first_on_page):
        return False
    if len(previous.columns) != len(current.columns):
        return False
    if previous_header and _norm_row(current_first_row) == _norm_row(previous_header):
        return True
    return _columns_agree(previous.columns, current.columns, current.page_width)


def join_tables(parts: Sequence[TablePart]) -> list[LogicalTable]:
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


def _span(part: TablePart, i: int) -> tuple[int, int]:
    if i < len(part.row_spans) and part.row_spans[i][0] >= 0:
        return part.row_spans[i][0], part.row_spans[i][1]
    return part.char_start, part.char_end


def _append(table: LogicalTable, part: TablePart) -> None:
    first = table.parts[0]
    skip = 0
    header_rows = first.rows[: first.header_rows]
    repeated = [_norm_row(r) for r in header_rows if any(c.strip() for c in r)]
    for row in part.rows:
        if skip < len(part.rows) and repeated and _norm_row(row) in repeated:
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


def parts_from_pages(pages: Iterable[Mapping[str, Any]]) -> list[TablePart]:
    """The table pieces of a version from the rows the `page_text` stage wrote."""
    parts: list[TablePart] = []
    for page in sorted(pages, key=lambda p: p["page"]):
        for t in page.get("tables") or []:
            parts.append(
                TablePart(
                    page=page["page"],
                    index=t["index"],
                    rows=[list(r) for r in t["rows"]],
                    row_spans=[(s[0], s[1]) for s in t.get("row_spans") or []],
                    char_start=t.get("char_start", -1),
                    char_end=t.get("char_end", -1),
                    header_rows=t.get("header_rows") or 0,
                    header=list(t.get("header") or []),
                    title=t.get("title") or "",
                    continues=bool(t.get("continues")),
                )
            )
    return parts


def linearize(header: Sequence[str], cells: Sequence[str]) -> str:
    """`Header: value; Header: value` for one row; empty cells are left out, and a value
    without a column name (the row label of an unnamed stub column) stands alone."""
    pairs = [f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=False) if c.strip()]
    return "; ".join(pairs)


def _legacy_table(page: int, rows: list[list[str]]) -> LogicalTable:
    """A one-page table known only by its cells: header from its first row if it reads so."""
    lead = 1 if rows and looks_like_header(rows[0]) else 0
    part = TablePart(page, 0, rows, header_rows=lead, header=list(rows[0]) if lead else [])
    return join_tables([part])[0]


def linearize_tables(
    partition_key: str,
    nodes: Sequence[Node],
    tables: Sequence[LogicalTable | tuple[int, list[list[str]]]],
    paths: dict[str, str],
) -> list[TableRow]:
    """Every data row of every table of a document, linearized under its header.

    `tables` are logical tables (`join_tables`) or (page, rows) of one-page tables, in
    reading order, matching the `table` nodes of the tree one to one; `paths` gives each
    table node's section path. A row's span is its `table_row` node's when the tree has
    one, else the row's own.
    """
    table_nodes = [n for n in nodes if n.kind == "table"]
    tables = [t for t in tables if not isinstance(t, LogicalTable) or t.structured]
    rows_by_table: dict[str, dict[int, Node]] = {}
    for node in nodes:
        if node.kind == "table_row" and node.parent_id and node.label.isdigit():
            rows_by_table.setdefault(node.parent_id, {})[int(node.label)] = node
    out: list[TableRow] = []
    for node, table in zip(table_nodes, tables, strict=False):
        logical = table if isinstance(table, LogicalTable) else _legacy_table(*table)
        width = max((len(r.cells) for r in logical.rows), default=len(logical.header))
        header = column_names(logical.header, max(width, len(logical.header)))
        row_nodes = rows_by_table.get(node.node_id, {})
        for row in logical.rows:
            row_node = row_nodes.get(row.index)
            start, end, page = row.char_start, row.char_end, row.page
            if row_node is not None:
                start, end, page = row_node.char_start, row_node.char_end, row_node.page_start
            elif start < 0:
                start, end = node.char_start, node.char_end
            text = linearize(header, row.cells)
            if not text:
                continue  # an empty row says nothing
            out.append(
                TableRow(
                    partition_key=partition_key,
                    table_id=node.node_id,
                    caption=node.title,
                    path=paths.get(node.node_id, ""),
                    row_index=row.index,
                    header=list(header),
                    cells=list(row.cells),
                    text=text,
                    page=page,
                    char_start=start,
                    char_end=end,
                )
            )
    return out
