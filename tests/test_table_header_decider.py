"""One decider of what heads a table (`header_block.read_header`, issue 41 item 5): it
returns a typed `Header` (title, leading rows, each column's path of headings), a ruled
box of headings over an aligned body goes through it, and no table stage writes a
table's header anywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

from rag_assets.core.tables import DEFAULT_SETTINGS, Grid, Header, read_header
from rag_assets.core.tables.header_block import label_over_values

TABLES = Path(__file__).resolve().parents[1] / "rag_assets" / "core" / "tables"


def _grid(rows: list[list[str | None]], header_rows: int | None = None) -> Grid:
    boxes = [(0.0, 10.0 * i, 300.0, 10.0 * i + 10) for i in range(len(rows))]
    return Grid(
        (0, 0, 300, 10.0 * len(rows)), rows, boxes, [0, 100, 200, 300], False, [], header_rows
    )


BODY: list[list[str | None]] = [
    ["North", "1,234", "5"],
    ["South", "2,345", "6"],
    ["East", "3", "7"],
]


def test_a_title_and_a_row_of_headings_over_values() -> None:
    header = read_header(
        _grid([["Table 1. Sales", None, None], ["Region", "2019", "2020"], *BODY]), DEFAULT_SETTINGS
    )
    assert header == Header("Table 1. Sales", 2, ["Region", "2019", "2020"])
    assert header.heads()


def test_a_title_alone_heads_nothing() -> None:
    assert not Header("Table 1", 1, []).heads()
    assert Header("Table 1", 2, []).heads()  # rows of headings, columns not named
    assert Header("", 1, ["Region", "Sales"]).heads()


def test_a_box_of_headings_names_the_columns_of_a_body_under_it() -> None:
    """A body the reader saw no header lines over is headed by the ruled box above it,
    decided by the same call (its merged heading leads the paths)."""
    body = _grid([list(r) for r in BODY], header_rows=0)
    box = _grid([["", "Sales", None], ["Region", "North side", "South side"]])
    assert read_header(body, DEFAULT_SETTINGS) == Header()
    assert read_header(body, DEFAULT_SETTINGS, box).names == [
        "Region",
        "Sales > North side",
        "Sales > South side",
    ]
    # a box with one column over two of the body's tells nothing: the cells decide
    wide = _grid([["Region", "Sales"]])
    wide.columns = [0, 100, 300]
    assert read_header(body, DEFAULT_SETTINGS, wide) == Header()


def test_a_row_of_small_numbers_names_columns_when_a_label_sits_over_values() -> None:
    below: list[list[str | None]] = [["2019", "5", "6", "7"], ["2020", "8", "9", "1"]]
    assert label_over_values(["Year", "K", "1", "2"], below, DEFAULT_SETTINGS)
    assert not label_over_values(["2018", "4", "1", "2"], below, DEFAULT_SETTINGS)
    header = read_header(
        _grid([["Year", "K", "1", "2"], *below, ["2021", "3", "4", "5"]]), DEFAULT_SETTINGS
    )
    assert header.names == ["Year", "K", "1", "2"] and header.rows == 1


def test_no_stage_writes_a_tables_header_but_the_decider() -> None:
    """`table.header = ...` (a header decided once more, over the decider's) appears in no
    module of the table package."""
    writes = [
        f"{path.name}:{node.lineno}"
        for path in sorted(TABLES.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assign | ast.AugAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and target.attr in ("header", "header_rows", "title")
    ]
    assert len(list(TABLES.glob("*.py"))) >= 20
    assert not writes, f"a table's header written outside header_block.read_header: {writes}"
