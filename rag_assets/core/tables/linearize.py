"""Linearized rows: every data row of a table written with its header, so that it
carries it into whichever chunk holds it.

A value like `92` means nothing without its column (`Limite`) and its row (`Ruído`): each
data row becomes `Medida: Ruído; Unidade: dB; Limite: 92; Ação: Revisar o isolamento`,
and a row is the smallest unit a chunk may hold. A table whose columns could not be named
is linearized all the same: each row its cells (`Florida; 15,907; 50,796`), carrying the
table's printed header lines and title verbatim (`header_lines`), which every chunk of
its rows holds above them, so that a reader can still tell which number is which.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rag_assets.core.lake import Node
from rag_assets.core.tables.logical import LogicalTable


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
    # a table read without named columns (`header` empty): its printed title and header
    # lines, verbatim, that every chunk of the row holds above it
    header_lines: list[str] = field(default_factory=list)

    def as_row(self) -> dict[str, Any]:
        """The row as a Parquet row."""
        return asdict(self)

    @property
    def table_name(self) -> str:
        """How a user finds the row's table: its caption, else its name in its path
        (`Tabela 2`); empty when it has neither."""
        return self.caption or (self.path.rsplit(" > ", 1)[-1] if self.path else "")


UNNAMED_COLUMN = re.compile(r"^Coluna \d+$")
"""The name `column_names` gives a column its header does not name."""


def column_names(header: Sequence[str], width: int) -> list[str]:
    """Header names for every column; a column the header does not name is `Coluna N`
    (`UNNAMED_COLUMN`), except the first (the stub column of row labels), which stays
    unnamed."""
    names = [h.strip() for h in header][:width] + [""] * max(0, width - len(header))
    return [name or (f"Coluna {i + 1}" if i else "") for i, name in enumerate(names)]


def linearize(header: Sequence[str], cells: Sequence[str]) -> str:
    """`Header: value; Header: value` for one row; empty cells are left out, and a value
    without a column name (the row label of an unnamed stub column) stands alone."""
    pairs = [f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=False) if c.strip()]
    return "; ".join(pairs)


def linearize_tables(
    partition_key: str,
    nodes: Sequence[Node],
    tables: Sequence[LogicalTable],
    paths: dict[str, str],
    text: str = "",
) -> list[TableRow]:
    """Every data row of every table of a document, linearized under its header.

    `tables` are logical tables (`join_tables`), in reading order, matching the `table`
    nodes of the tree one to one; `paths` gives each table node's section path. A row's
    span is its `table_row` node's when the tree has one, else the row's own. A table read
    without named columns gives rows of bare cells under its printed title and header
    lines (`header_lines`, verbatim from the document `text` where the rows' spans are
    known, else its header rows' cells).
    """
    table_nodes = [n for n in nodes if n.kind == "table"]
    tables = [t for t in tables if t.structured]
    rows_by_table: dict[str, dict[int, Node]] = {}
    for node in nodes:
        if node.kind == "table_row" and node.parent_id and node.label.isdigit():
            rows_by_table.setdefault(node.parent_id, {})[int(node.label)] = node
    out: list[TableRow] = []
    for node, logical in zip(table_nodes, tables, strict=False):
        width = max((len(r.cells) for r in logical.rows), default=len(logical.header))
        header = column_names(logical.header, max(width, len(logical.header)))
        lines: list[str] = []
        if not logical.named:
            header, lines = [], logical.header_lines(text)
        row_nodes = rows_by_table.get(node.node_id, {})
        for row in logical.rows:
            row_node = row_nodes.get(row.index)
            start, end, page = row.char_start, row.char_end, row.page
            if row_node is not None:
                start, end, page = row_node.char_start, row_node.char_end, row_node.page_start
            elif start < 0:
                start, end = node.char_start, node.char_end
            line = linearize(header or [""] * len(row.cells), row.cells)
            if not line:
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
                    text=line,
                    page=page,
                    char_start=start,
                    char_end=end,
                    header_lines=list(lines),
                )
            )
    return out
