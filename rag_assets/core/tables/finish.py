"""The shared finish of both readers: a grid's header block and heading paths, its stub
tree, its cells cleaned, as the page's table."""

from __future__ import annotations

from rag_assets.core.tables.cells import clean_cell
from rag_assets.core.tables.header_block import read_header
from rag_assets.core.tables.model import Grid, PageTable, Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.stub_tree import (
    carry_row_labels,
    indent_paths,
    join_label_rests,
    join_own_line_labels,
    join_wrapped_labels,
    outer_labels,
)


def finish(
    grid: Grid, words: list[Word], settings: TableSettings, box: Grid | None = None
) -> PageTable:
    """A grid read as a table: which rows head it and the path of headings each column
    is read under (`header_block.read_header`, with the ruled `box` of headings printed
    over an aligned body), each stub label's path (`stub_tree`: label rests and labels
    beside the box where rows are ruled, indentation, labels merged over rows), every
    cell on one line. `words` are the page's words. The grid is left as it was."""
    rows = [list(r) for r in grid.rows]
    boxes = list(grid.row_boxes)
    head = read_header(grid, settings, box)
    title, header_rows, header = head.title, head.rows, head.names
    if grid.ruled:
        join_label_rests(rows, boxes, header_rows)
    else:
        join_wrapped_labels(rows, boxes, header_rows, settings)
    join_own_line_labels(rows, boxes, header_rows)
    indent_paths(rows, header_rows, boxes, grid.columns, words, settings)
    bbox = grid.bbox
    if grid.ruled:
        bbox = outer_labels(grid.beside, bbox, rows, header_rows, boxes, settings)
    carry_row_labels(rows[header_rows:])
    return PageTable(
        index=0,
        bbox=bbox,
        rows=[[clean_cell(c) for c in raw] for raw in rows],
        row_bboxes=boxes,
        header_rows=header_rows,
        header=header,
        title=title,
        columns=grid.columns,
    )
