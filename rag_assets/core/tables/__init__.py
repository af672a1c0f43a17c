"""Tables: found on a page, read into rows under their headings, joined across pages and
linearized so that no value is indexed apart from its header.

The stages, one module each, with typed values between them (`model`; boxes on a page and
how much two share, `boxes`):

1. `regions`: where tables are (`Region`): pdfplumber's ruled tables, boxes proposed
   from outside; the aligned reader finds runs of aligned text itself.
2. `ruled` (repairs in `ruled_repair`, turned text in `upward`) and `aligned` (with
   `words`): a region read into a `Grid`, rows and columns with merged spans.
3. `cells`: the one cell classifier (figure, not-available mark, unit, period,
   footnote mark, label).
4. `header_block`: what heads the grid, decided once (`read_header`, a typed `Header`).
5. `heading_tree`: each heading's extent; `grid_paths`: each column's path of headings.
6. `stub_tree`: each row label's path (label rests, labels beside the box, indentation).
7. `finish`: 4 to 6 applied alike to both readers' grids, giving a `PageTable`;
   `page.find_tables` runs 1 to 7 for one page (a ruled pass, then an aligned pass).
   `reader.TableReader` is the one entry `extract` uses: a page's tables with the layout
   model's proposals (the ruled pass read once), or a scanned page's from its OCR words.
8. `logical` (pieces joined across pages, with `continuation`) and `linearize` (rows
   written with their header).

Every tolerance of every stage is a field of `TableSettings` (`settings`), passed down
from `find_tables(page, settings)`.
"""

from __future__ import annotations

from rag_assets.core.tables.cells import (
    CellKind,
    classify,
    separate_mark,
)
from rag_assets.core.tables.continuation import CONTINUED, TableLayout, continued_note, continues
from rag_assets.core.tables.grid_paths import PATH_SEP
from rag_assets.core.tables.header_block import identify_header, read_header
from rag_assets.core.tables.linearize import (
    UNNAMED_COLUMN,
    TableRow,
    column_names,
    linearize,
    linearize_tables,
)
from rag_assets.core.tables.logical import (
    LogicalRow,
    LogicalTable,
    join_tables,
    logical_from_pages,
    parts_from_pages,
)
from rag_assets.core.tables.model import Grid, Header, PageTable, Region
from rag_assets.core.tables.page import find_tables
from rag_assets.core.tables.reader import Proposer, TableReader
from rag_assets.core.tables.regions import find_regions
from rag_assets.core.tables.settings import DEFAULT as DEFAULT_SETTINGS
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.text_columns import open_runs
from rag_assets.core.tables.words import height, page_words, printed_lines, segments, y_tolerance

__all__ = [
    "CONTINUED",
    "PATH_SEP",
    "CellKind",
    "Grid",
    "Header",
    "LogicalRow",
    "LogicalTable",
    "PageTable",
    "Proposer",
    "Region",
    "TableLayout",
    "TableReader",
    "TableRow",
    "UNNAMED_COLUMN",
    "DEFAULT_SETTINGS",
    "TableSettings",
    "classify",
    "column_names",
    "continued_note",
    "continues",
    "find_regions",
    "find_tables",
    "identify_header",
    "join_tables",
    "logical_from_pages",
    "linearize",
    "page_words",
    "y_tolerance",
    "linearize_tables",
    "read_header",
    "open_runs",
    "parts_from_pages",
    "separate_mark",
    "height",
    "printed_lines",
    "segments",
]
