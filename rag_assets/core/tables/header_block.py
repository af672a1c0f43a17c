"""The header block: which rows of a grid head it (a title row, rows of headings, the
columns' numbers), read from what their cells are (`cells`).

The first rows of labels above the values are the header; the path of headings each
column is read under comes from `heading_tree` (a heading over several columns leads the
**header path** of each: `Permit > Handgun`). `read_header` is the one decider of what
heads a table, returning a typed `model.Header`; the aligned reader asks
`label_over_values` of a run's first lines, and its lines' geometry (`line_kinds.is_header`:
labels set as a header, not a sentence or a caption) only says which printed lines it
passes as the header's (`Grid.header_rows`), which `read_header` honours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rag_assets.core.tables.cells import (
    CellKind,
    blank,
    classify,
    column_number,
    figure,
    header_cell,
    header_label,
    is_value,
    small_number,
)
from rag_assets.core.tables.grid_paths import boxed_paths, heading_paths, spread
from rag_assets.core.tables.model import Grid, Header
from rag_assets.core.tables.settings import DEFAULT, TableSettings


def _all_labels(row: Sequence[str]) -> bool:
    """Every cell filled and none a bare number (a year naming a column is a name)."""
    return bool(row) and all(header_label(c) for c in row)


def label_over_values(
    row: Sequence[str | None], below: Sequence[Sequence[str | None]], settings: TableSettings
) -> bool:
    """Whether a row names columns over values: one of its cells after the stub is a
    label (no value: `K`, `grades`) over a column whose filled cells `below` are values
    (`column_values` of them, two at least). Both readers ask it: the aligned reader of a
    run's first lines (`Year K 1 2 3`), the header block of a grid's rows."""
    for j in range(1, len(row)):
        cell = row[j]
        if blank(cell) or is_value(cell or "") or not header_label(cell or ""):
            continue
        filled = [r[j] for r in below if j < len(r) and not blank(r[j])]
        values = sum(1 for v in filled if is_value(v or ""))
        if len(filled) >= 2 and values >= settings.column_values * len(filled):
            return True
    return False


def column_numbers(cells: Sequence[str | None], settings: TableSettings) -> bool:
    """Whether a row numbers the columns (`1 | 2= | 3 | ... | 11`; statistical tables cite
    them in formulas): `min_numbered_columns` or more numbers counting up one by one,
    nothing else."""
    filled = [(c or "").strip() for c in cells if not blank(c)]
    numbers = [n for n in (column_number(c) for c in filled) if n is not None]
    return len(numbers) == len(filled) >= settings.min_numbered_columns and all(
        b == a + 1 for a, b in zip(numbers, numbers[1:], strict=False)
    )


def _name_rest(
    rows: Sequence[Sequence[str | None]], i: int, width: int, settings: TableSettings
) -> bool:
    """Whether row `i` only goes on with the names of the header row above it (labels
    printed on two lines, `Fraction of` / `Wealth Lost`): its stub cell empty, labels
    only, each under a named cell, and a row still to follow."""
    if i < 1 or i + 1 >= len(rows):
        return False
    row = list(rows[i]) + [None] * (width - len(rows[i]))
    above = list(rows[i - 1]) + [None] * (width - len(rows[i - 1]))
    filled = [j for j, c in enumerate(row) if not blank(c)]
    return (
        bool(filled)
        and blank(row[0])
        and all(header_cell(row[j], settings) and not blank(above[j]) for j in filled)
    )


def _names_over_values(
    rows: Sequence[Sequence[str | None]], i: int, settings: TableSettings
) -> bool:
    """Whether row `i` names columns although some of its cells are small numbers (`Year |
    K | 1 | 2 | 3`): each number in it is a short integer, and one of its other cells is
    a label over a column of values (`label_over_values`)."""
    row = rows[i]
    numbers = [c for c in row[1:] if figure(c)]
    if not numbers or not all(small_number(c) for c in numbers):
        return False
    return label_over_values(row, rows[i + 1 :], settings)


def _header_goes_on(
    rows: Sequence[Sequence[str | None]], i: int, width: int, settings: TableSettings
) -> bool:
    """Whether row `i` continues the header above it: a cell merged down from the header
    row (`None`) beside short labels, and a data row still to follow."""
    if i + 1 >= len(rows):
        return False
    row = list(rows[i]) + [None] * (width - len(rows[i]))
    return (
        None in row
        and any(not blank(c) for c in row)
        and all(header_cell(c, settings) for c in row)
    )


def _spanner_row(
    rows: Sequence[Sequence[str | None]], i: int, width: int, settings: TableSettings
) -> bool:
    """Whether a first row whose one filled cell is at `i` heads value columns rather
    than titling the table: not over the stub column (its corner empty), and over a row
    of headings."""
    row = list(rows[0]) + [None] * (width - len(rows[0]))
    below = list(rows[1]) + [None] * (width - len(rows[1]))
    headings = all(header_cell(c, settings) for c in below) or _names_over_values(rows, 1, settings)
    return i >= 1 and blank(row[0]) and any(not blank(c) for c in below) and headings


def read_header(grid: Grid, settings: TableSettings, box: Grid | None = None) -> Header:
    """What heads a grid, decided here alone: its title, header rows and column names from
    its cells (`identify_header`, honouring the header lines the reader saw printed,
    `grid.header_rows`); a ruled `box` of headings printed over it (an aligned body under
    shaded header cells) names the columns instead where it tells them apart
    (`heading_tree.boxed_paths`)."""
    header = identify_header(grid.rows, settings, grid.header_rows)
    if box is not None:
        paths = boxed_paths(box.rows, box.columns, grid.columns)
        header.names = paths or header.names
    return header


def identify_header(
    rows: Sequence[Sequence[str | None]],
    settings: TableSettings = DEFAULT,
    printed: int | None = None,
) -> Header:
    """A table's title row and header rows read from its cells: the `Header` (title,
    leading non-data rows, each column's path of headings).

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
    header too. With no columns named the names list is empty, and the rows leading the
    table are its title and rows of headings (or the lines the reader saw printed as its
    header), read as its printed header lines (`linearize`); with no heading, every row
    is data.
    `printed`: how many rows the reader saw printed as the header (the aligned reader's
    header lines): no row below them is a header row, and each of them is one; with none
    (a body read under a box of headings) there is no title and no header row either.
    """
    if not rows or printed == 0:  # no rows at all, or none printed over the body
        return Header()
    width = max(len(r) for r in rows)
    start, title = 0, ""
    filled = [i for i, c in enumerate(rows[0]) if not blank(c)]
    if width >= settings.title_min_columns and len(filled) == 1 and len(rows) > 2:
        if _spanner_row(rows, filled[0], width, settings):
            rows = [spread(rows[0], filled[0], width), *rows[1:]]
        else:
            title, start = " ".join((rows[0][filled[0]] or "").split()), 1
    first = [c or "" for c in rows[start]] if start < len(rows) else []
    corner = first[1:] if first and blank(first[0]) else first  # the stub's empty corner
    numbered = start < len(rows) and _names_over_values(rows, start, settings)
    if first and len(first) == width and start + 1 < len(rows):
        more = _header_goes_on(rows, start + 1, width, settings)
        named = numbered or (_all_labels(corner) and all(header_cell(c, settings) for c in first))
        if named and len(corner) >= 2 and not more:
            names = [" ".join(c.split()) for c in first]
            end = start + 1
            while end - start < settings.max_header_rows and _name_rest(rows, end, width, settings):
                _join_names(names, rows[end])
                end += 1
            end = _with_numbers(rows, end, width, names, settings)
            return Header(title, _printed_rest(rows, end, printed, names), names)
    stacked: list[list[str | None]] = []
    end = start + settings.max_header_rows
    if printed is not None:  # the reader saw where the header ends: no row below it
        end = min(end, max(printed, start + 1))
    for r, row in enumerate(rows[start:end], start=start):
        cells = list(row) + [None] * (width - len(row))
        # a date heads columns on a line the reader saw heading the table, or over a row
        # of labels (a period over its `$000's | %` pair); elsewhere it is a value
        dated = (printed is not None and r < printed) or _labels_below(rows, r, settings)
        labels = all(
            header_cell(c, settings) or (dated and classify(c) is CellKind.DATE) for c in cells
        ) or _names_over_values(rows, r, settings)
        if all(blank(c) for c in cells) or not labels:
            break
        if printed is None and stacked and _stub_only(cells):
            break  # a stub label alone under the headings: a group row, no heading
        stacked.append(cells)
        if not any(blank(c) for c in cells) and not _header_goes_on(
            rows, start + len(stacked), width, settings
        ):
            break  # a complete row closes the header
    if not stacked or start + len(stacked) >= len(rows):
        return Header(title, _unnamed_rows(rows, start, printed))
    names = heading_paths(stacked, width)
    if sum(1 for n in names if n) < max(2, math.ceil(settings.named_columns * width)):
        # too sparse to name the columns: its rows of headings still head it, unnamed
        return Header(title, _unnamed_rows(rows, start + len(stacked), printed))
    end = _with_numbers(rows, start + len(stacked), width, names, settings)
    return Header(title, _printed_rest(rows, end, printed, names), names)


def _labels_below(rows: Sequence[Sequence[str | None]], r: int, settings: TableSettings) -> bool:
    """Whether the row under row `r` is headings only, over the value columns."""
    if r + 1 >= len(rows):
        return False
    below = rows[r + 1]
    return any(not blank(c) for c in below[1:]) and all(header_cell(c, settings) for c in below)


def _unnamed_rows(rows: Sequence[Sequence[str | None]], end: int, printed: int | None) -> int:
    """The leading rows of a table whose columns could not be named: its title and rows
    of headings up to `end`, or every line the reader saw printed as its header, whichever
    reaches further, and then the rows with an empty stub over a body whose rows have
    their labels (sub-headings such as `Female Male Total 15-24`, read as figures); a
    data row always follows. Its rows are read under those printed lines
    (`LogicalTable.named`)."""
    end = max(end, min(printed or 0, len(rows) - 1))
    while end + 1 < len(rows) and blank(rows[end][0] if rows[end] else None):
        below = [r for r in rows[end + 1 :] if any(not blank(c) for c in r)]
        if not below or sum(1 for r in below if not blank(r[0])) < 0.8 * len(below):
            break
        end += 1
    return end


def _stub_only(cells: Sequence[str | None]) -> bool:
    """A row with its stub label alone, no cell merged over from above: in a ruled grid
    under heading rows, a group row, not a heading."""
    return not blank(cells[0]) and all(c is not None and blank(c) for c in cells[1:])


def _printed_rest(
    rows: Sequence[Sequence[str | None]], end: int, printed: int | None, names: list[str]
) -> int:
    """Where the header ends once the rows the reader saw printed as header lines below
    `end` (a units row, `Index | ($) | Rate`) are added to the names, word by word."""
    while printed is not None and end < min(printed, len(rows) - 1):
        _join_names(names, rows[end])
        end += 1
    return end


def _join_names(names: list[str], row: Sequence[str | None]) -> None:
    """A header row's cells added to the column names under them, word by word."""
    for j, cell in enumerate(row[: len(names)]):
        names[j] = " ".join(x for x in (names[j], *(cell or "").split()) if x)


def _with_numbers(
    rows: Sequence[Sequence[str | None]],
    end: int,
    width: int,
    names: list[str],
    settings: TableSettings,
) -> int:
    """Where the header ends once the columns' numbers (`1 | 2= | 3`) and the formulas
    under them (`(3 to 6)+14`), printed right under the header rows that end at `end`,
    are added to the names: a header row either way, never a data row."""
    if end + 1 >= len(rows) or not column_numbers(rows[end], settings):
        return end
    first = end
    while end == first or _name_rest(rows, end, width, settings):
        _join_names(names, rows[end])
        end += 1
    return end
