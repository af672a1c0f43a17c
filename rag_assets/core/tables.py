"""Tables linearized so that every row carries its header.

A value like `92` means nothing without its column (`Limite`) and its row (`Ruído`): each
data row becomes `Medida: Ruído; Unidade: dB; Limite: 92; Ação: Revisar o isolamento`,
and a row is the smallest unit a chunk may hold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rag_assets.core.schemas import Node

NUMERIC = re.compile(r"^[\d\s.,%/:+-]+$")


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


def looks_like_header(row: Sequence[str]) -> bool:
    """A header row names its columns: every cell filled, none a bare number."""
    return bool(row) and all(c.strip() and not NUMERIC.match(c) for c in row)


def header_for(rows: Sequence[Sequence[str]]) -> list[str]:
    """The column names of a table: its first row when that reads as a header."""
    if rows and looks_like_header(rows[0]):
        return [c.strip() for c in rows[0]]
    width = max((len(r) for r in rows), default=0)
    return [f"Coluna {i + 1}" for i in range(width)]


def linearize(header: Sequence[str], cells: Sequence[str]) -> str:
    """`Header: value; Header: value` for one row; empty cells are left out."""
    pairs = [f"{h}: {c}" for h, c in zip(header, cells, strict=False) if c.strip()]
    return "; ".join(pairs)


def linearize_tables(
    partition_key: str,
    nodes: Sequence[Node],
    page_tables: Sequence[tuple[int, list[list[str]]]],
    paths: dict[str, str],
) -> list[TableRow]:
    """Every data row of every table of a document, linearized under its header.

    `page_tables` are (page, rows) in reading order, matching the `table` nodes of the
    tree one to one; `paths` gives each table node's section path.
    """
    table_nodes = [n for n in nodes if n.kind == "table"]
    rows_by_table: dict[str, list[Node]] = {}
    for node in nodes:
        if node.kind == "table_row" and node.parent_id:
            rows_by_table.setdefault(node.parent_id, []).append(node)
    out: list[TableRow] = []
    for table, (page, rows) in zip(table_nodes, page_tables, strict=False):
        header = header_for(rows)
        first_data = 1 if rows and looks_like_header(rows[0]) else 0
        row_nodes = {int(n.label): n for n in rows_by_table.get(table.node_id, [])}
        for index in range(first_data, len(rows)):
            cells = rows[index]
            node = row_nodes.get(index)
            start, end = (
                (node.char_start, node.char_end) if node else (table.char_start, table.char_end)
            )
            out.append(
                TableRow(
                    partition_key=partition_key,
                    table_id=table.node_id,
                    caption=table.title,
                    path=paths.get(table.node_id, ""),
                    row_index=index,
                    header=list(header),
                    cells=list(cells),
                    text=linearize(header, cells),
                    page=node.page_start if node else page,
                    char_start=start,
                    char_end=end,
                )
            )
    return out
