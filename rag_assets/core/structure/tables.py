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

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SYMBOL_MARK = rf"\*+|[†‡]+|[{SUPERSCRIPTS}]+"  # stars, a dagger, superscript digits
# a footnote mark after a value: a symbol, `1)` or `(a)`
MARK = rf"(?:{SYMBOL_MARK}|\(?[0-9a-z]\))"
NUMERIC = re.compile(rf"^(?:R\$)?[\d\s.,%/:+()$€-]+(?:\s*{MARK})?$")
# a value with its mark printed against it; a digit before `)` is a mark only where it
# breaks the number's thousands groups (`54,8761)`)
MARKED = re.compile(
    rf"^([-–+]?\d[\d.,\s]*?(?:\d{{1,3}}(?:[.,\s]\d{{3}})+|\d))"
    rf"((?:{SYMBOL_MARK}|\(?[a-z]\)|\(\d\))|(?<=\d{{3}})\d\))$"
)
# a column named by a year or period (`1990`, `2009/10`, `2008*`): a header, not a value
YEAR = re.compile(rf"^(?:Q[1-4]\s*)?(?:19|20)\d\d(?:\s*[/-]\s*\d{{2,4}})?(?:\s*{MARK})?$")
UNIT = re.compile(r"^\(?[%$€]\)?$")  # a unit naming a column: `%`, `(%)`, `($)`
CONTINUED = re.compile(r"(?i)\b(?:continua[çc][ãa]o|continua|continued|cont\.)(?!\w)")
MAX_HEADER_ROWS = 4  # a lone heading over the value columns, then up to three
HEADER_CELL_MAX_CHARS = 120  # a longer cell is data, not a column name
PATH_SEP = " > "  # between a group heading and the column names under it
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


def looks_like_header(row: Sequence[str]) -> bool:
    """A header row names its columns: every cell filled, none a bare number (a year
    naming a column is a name)."""
    return bool(row) and all(
        c.strip() and (not NUMERIC.match(c) or YEAR.match(c.strip()) or UNIT.match(c.strip()))
        for c in row
    )


def header_for(rows: Sequence[Sequence[str]]) -> list[str]:
    """The column names of a table: its first row when that reads as a header."""
    if rows and looks_like_header(rows[0]):
        return [c.strip() for c in rows[0]]
    width = max((len(r) for r in rows), default=0)
    return [f"Coluna {i + 1}" for i in range(width)]


def _blank(cell: str | None) -> bool:
    return cell is None or not cell.strip()


def _numeric(cell: str | None) -> bool:
    return cell is not None and bool(cell.strip()) and bool(NUMERIC.match(cell.strip()))


def _header_cell(cell: str | None) -> bool:
    """A cell a header row may hold: empty, merged, or a short label that is not a number."""
    if _blank(cell):
        return True
    text = " ".join((cell or "").split())
    label = not _numeric(text) or bool(YEAR.match(text)) or bool(UNIT.match(text))
    return label and len(text) <= HEADER_CELL_MAX_CHARS


def _name_rest(rows: Sequence[Sequence[str | None]], i: int, width: int) -> bool:
    """Whether row `i` only goes on with the names of the header row above it (labels
    printed on two lines, `Fraction of` / `Wealth Lost`): its stub cell empty, labels
    only, each under a named cell, and a row still to follow."""
    if i < 1 or i + 1 >= len(rows):
        return False
    row = list(rows[i]) + [None] * (width - len(rows[i]))
    above = list(rows[i - 1]) + [None] * (width - len(rows[i - 1]))
    filled = [j for j, c in enumerate(row) if not _blank(c)]
    return (
        bool(filled)
        and _blank(row[0])
        and all(_header_cell(row[j]) and not _blank(above[j]) for j in filled)
    )


SMALL_NUMBER = re.compile(r"^\d{1,3}$")  # a grade, an age or a rank naming a column


def _names_over_values(rows: Sequence[Sequence[str | None]], i: int) -> bool:
    """Whether row `i` names columns although some of its cells are small numbers (`Year |
    K | 1 | 2 | 3`): each number in it is a short integer, and one of its other cells is
    a label over a column of values."""
    row = rows[i]
    numbers = [c for c in row[1:] if _numeric(c) and not YEAR.match((c or "").strip())]
    if not numbers or not all(SMALL_NUMBER.match((c or "").strip()) for c in numbers):
        return False
    for j, cell in enumerate(row):
        if j == 0 or _blank(cell) or _numeric(cell):
            continue
        below = [r[j] for r in rows[i + 1 :] if j < len(r) and not _blank(r[j])]
        if len(below) >= 2 and sum(1 for v in below if _numeric(v)) >= 0.8 * len(below):
            return True
    return False


def _header_goes_on(rows: Sequence[Sequence[str | None]], i: int, width: int) -> bool:
    """Whether row `i` continues the header above it: a cell merged down from the header
    row (`None`) beside short labels, and a data row still to follow."""
    if i + 1 >= len(rows):
        return False
    row = list(rows[i]) + [None] * (width - len(rows[i]))
    return None in row and any(not _blank(c) for c in row) and all(_header_cell(c) for c in row)


def _spanner_row(rows: Sequence[Sequence[str | None]], i: int, width: int) -> bool:
    """Whether a first row whose one filled cell is at `i` heads value columns rather
    than titling the table: not over the stub column (its corner empty), and over a row
    of headings."""
    row = list(rows[0]) + [None] * (width - len(rows[0]))
    below = list(rows[1]) + [None] * (width - len(rows[1]))
    headings = all(_header_cell(c) for c in below) or _names_over_values(rows, 1)
    return i >= 1 and _blank(row[0]) and any(not _blank(c) for c in below) and headings


def _spread(row: Sequence[str | None], i: int, width: int) -> list[str | None]:
    """A lone heading over the columns after it: those it is printed over when known (its
    merged positions), else every column to the table's end."""
    out = list(row) + [None] * (width - len(row))
    if i + 1 < width and out[i + 1] is None:
        return out  # merged positions say how far it reaches
    return out[: i + 1] + [None] * (width - i - 1)


def identify_header(rows: Sequence[Sequence[str | None]]) -> tuple[str, int, list[str]]:
    """Find a table's title row and header rows: (title, leading non-data rows, names).

    `rows` are cells as pdfplumber extracts them: `None` marks a position covered by a
    merged cell, `""` an empty cell. A first row with one filled cell over a table of
    three or more columns is the table's title, unless it stands over the value columns
    only (the stub's corner empty) above a row of headings: then it heads them (`Female
    students > Sample`), as far as its merged positions reach, else to the table's end.
    Then either one full row of non-numeric cells (or of labels and small numbers, `Year
    | K | 1 | 2`) is the header (the common case), or up to three rows of group headings
    (merged cells, short labels) over a last header row are joined per column (a heading
    over the same columns as the one above continues it: one heading on two lines): a
    group heading (`International`) also names the merged positions to its right that
    have a sub-heading below, so the columns read `International > Cargo Ton` (the
    header path). A first row whose only empty cell is the stub column's corner is a
    header too. With no header found the names list is empty and every row is data.
    """
    if not rows:
        return "", 0, []
    width = max(len(r) for r in rows)
    start, title = 0, ""
    filled = [i for i, c in enumerate(rows[0]) if not _blank(c)]
    if width >= 3 and len(filled) == 1 and len(rows) > 2:
        if _spanner_row(rows, filled[0], width):
            rows = [_spread(rows[0], filled[0], width), *rows[1:]]
        else:
            title, start = " ".join((rows[0][filled[0]] or "").split()), 1
    first = [c or "" for c in rows[start]] if start < len(rows) else []
    corner = first[1:] if first and _blank(first[0]) else first  # the stub's empty corner
    numbered = start < len(rows) and _names_over_values(rows, start)
    if first and len(first) == width and start + 1 < len(rows):
        more = _header_goes_on(rows, start + 1, width)
        named = numbered or (looks_like_header(corner) and all(_header_cell(c) for c in first))
        if named and len(corner) >= 2 and not more:
            names = [" ".join(c.split()) for c in first]
            end = start + 1
            while end - start < MAX_HEADER_ROWS and _name_rest(rows, end, width):
                for j, cell in enumerate(rows[end]):
                    names[j] = " ".join(x for x in (names[j], *(cell or "").split()) if x)
                end += 1
            return title, end, names
    stacked: list[list[str | None]] = []
    for r, row in enumerate(rows[start : start + MAX_HEADER_ROWS], start=start):
        cells = list(row) + [None] * (width - len(row))
        labels = all(_header_cell(c) for c in cells) or _names_over_values(rows, r)
        if all(_blank(c) for c in cells) or not labels:
            break
        stacked.append(cells)
        if not any(_blank(c) for c in cells) and not _header_goes_on(
            rows, start + len(stacked), width
        ):
            break  # a complete row closes the header
    if not stacked or start + len(stacked) >= len(rows):
        return title, start, []
    names = [""] * width
    group = [False] * width  # the name so far ends with a heading over several columns
    last: list[tuple[int, int]] = [(-1, -1)] * width  # the columns that heading spans
    for r, cells in enumerate(stacked):
        values, origins = [""] * width, [-1] * width
        spanning: set[int] = set()  # cells that head several columns
        carried, origin = "", -1
        for i, cell in enumerate(cells):
            if cell is None:
                below = any(not _blank(s[i]) for s in stacked[r + 1 :])
                values[i] = carried if below else ""  # a group heading over sub-headings
                if values[i]:
                    spanning.add(origin)
            else:
                values[i] = carried = " ".join(cell.split())
                origin = i
            origins[i] = origin
        ends = {origins[i]: i for i, value in enumerate(values) if value}
        for i, value in enumerate(values):
            if value:
                extent = (origins[i], ends[origins[i]])
                # a heading over the same columns as the one above it continues it (one
                # heading printed on two lines); under a wider one, it is a level down
                sep = PATH_SEP if group[i] and extent != last[i] else " "
                names[i] = f"{names[i]}{sep}{value}" if names[i] else value
                group[i] = origins[i] in spanning
                last[i] = extent
    if sum(1 for n in names if n) < max(2, (width + 1) // 2):
        return title, start, []  # too sparse to name the columns
    return title, start + len(stacked), names


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
