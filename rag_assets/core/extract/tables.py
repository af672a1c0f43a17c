"""Tables on a page: ruled ones (cells cut and merged as printed, columns beside the ruled
box), then those set by alignment alone (`aligned`); pieces continued across pages."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pdfplumber.utils import crop_to_bbox, extract_text, extract_words

from rag_assets.core.extract.aligned import aligned_tables, printed_lines
from rag_assets.core.extract.columns import _split_line
from rag_assets.core.extract.hyphenation import _dehyphenate_cell
from rag_assets.core.extract.model import Line, Page, PageTable
from rag_assets.core.structure.tables import (
    CONTINUED,
    TableLayout,
    continues,
    identify_header,
    separate_mark,
)

NOTE_MAX_CHARS = 60  # a "continued" note between table pieces is short


def _clean_cell(cell: str | None) -> str:
    return separate_mark(_dehyphenate_cell(cell or ""))


def _edges(values: Iterable[float]) -> list[float]:
    edges: list[float] = []
    for x in sorted(values):
        if not edges or x - edges[-1] > 1.5:
            edges.append(x)
    return edges


NUMBER = re.compile(r"^[-–+]?[\d\s.,%()]*\d[\d\s.,%()]*[*a-z¹²³]?$")


@dataclass
class _Row:
    """A row cut from a ruled row: only its box is needed."""

    bbox: tuple[float, ...]


def _blank_cell(cell: str | None) -> bool:
    return cell is None or not cell.strip()


def _heading(cell: str | None) -> bool:
    """A cell that can name its column: filled, and not a number (a value)."""
    return not _blank_cell(cell) and not NUMBER.match((cell or "").strip())


def collapse_columns(
    rows: list[list[str | None]], edges: list[float]
) -> tuple[list[list[str | None]], list[float]]:
    """Merge neighbouring grid columns that no row fills both of.

    Shading boxes and partial rules make pdfplumber cut a table into more columns than it
    prints (a header over positions 2-3, its values under position 1, an empty column in
    between); a pair of columns never filled in the same row, and not both named in the
    first rows (a number there is a value, not a name), is one printed column.
    """
    width = max((len(r) for r in rows), default=0)
    rows = [list(r) + [None] * (width - len(r)) for r in rows]
    i = 0
    while i + 1 < width:
        both = any(not _blank_cell(r[i]) and not _blank_cell(r[i + 1]) for r in rows)
        named = [any(_heading(r[j]) for r in rows[:3]) for j in (i, i + 1)]
        if both or all(named):  # two headings of their own: two columns, however sparse
            i += 1
            continue
        for r in rows:
            left, right = r[i], r[i + 1]
            r[i] = right if _blank_cell(left) and not _blank_cell(right) else left
            if r[i] is None and (left == "" or right == ""):
                r[i] = ""
            del r[i + 1]
        if len(edges) == width + 1:
            del edges[i + 1]
        width -= 1
    return rows, edges


def _sub_label(cell: str | None) -> bool:
    return not _blank_cell(cell) and not NUMBER.match((cell or "").strip())


def _carry_row_labels(rows: list[list[str | None]]) -> None:
    """A row label merged over several rows (its position empty below it, `None`) is the
    label of each of those rows. Under a stub of two columns (`Asthma | Count`, then
    ` | Percentage`) an empty label is the one above, and a label wrapped onto the next
    row (`Chronic fatigue` / `syndrome`) is one label for both rows."""
    for previous, row in zip(rows, rows[1:], strict=False):
        if not row or not previous or _blank_cell(previous[0]):
            continue
        if row[0] is None and any(not _blank_cell(c) for c in row[1:]):
            row[0] = previous[0]
            continue
        if len(row) < 3 or not (_sub_label(row[1]) and _sub_label(previous[1])):
            continue
        if _blank_cell(row[0]):
            row[0] = previous[0]
        elif (row[0] or "")[:1].islower():
            previous[0] = row[0] = f"{previous[0]} {row[0]}"


def _cells_of(line: list[dict[str, Any]], boxes: list[Any]) -> list[str]:
    """A printed line's text by column: a word goes to the column it starts in (a long
    word running over into the next column stays in its own)."""
    parts: list[list[dict[str, Any]]] = [[] for _ in boxes]
    column, previous = -1, None
    for char in sorted(line, key=lambda c: c["x0"]):
        middle = (char["x0"] + char["x1"]) / 2
        if previous is None or char["x0"] - previous["x1"] > 1.5 or column < 0:
            column = next((j for j, b in enumerate(boxes) if b[0] <= middle < b[2]), -1)
        if column >= 0:
            parts[column].append(char)
        previous = char
    return [" ".join(extract_text(p, x_tolerance=1.5).split()) if p else "" for p in parts]


def _chars_in(page: Any, bbox: Any) -> list[dict[str, Any]]:
    """The page's characters inside `bbox`, clipped to it: what `page.crop(bbox).chars`
    gives, without cropping every other kind of object (rects, lines, curves) of the page
    nor copying every character for each row."""
    x0, top, x1, bottom = bbox
    near = [
        c
        for c in page.chars
        if c["x0"] <= x1 and x0 <= c["x1"] and c["top"] <= bottom and top <= c["bottom"]
    ]
    return crop_to_bbox(near, bbox)


def split_by_lines(
    page: Any, row: Any, spans: list[tuple[float, float]] | None = None
) -> list[tuple[tuple[float, ...], list[str | None]]] | None:
    """A ruled row that holds several table rows, cut at its printed lines.

    A table ruled by columns only comes out of pdfplumber as one row whose cells each
    hold a whole column; when at least one column holds a number on each of several
    lines, each printed line is a row (cells by column). A line that only continues the
    text of the row above (no number in it, and an empty first cell or a first cell
    starting in lower case with nothing beside it) is joined to that row. None when the
    row is one row. A row merged over several columns is cut by the table's column
    `spans`.
    """
    boxes = list(row.cells)
    if any(b is None for b in boxes) and spans is not None and len(spans) == len(boxes):
        boxes = [(x0, row.bbox[1], x1, row.bbox[3]) for x0, x1 in spans]
    if len(boxes) < 2 or any(b is None for b in boxes):
        return None
    chars = [c for c in _chars_in(page, row.bbox) if c["text"].strip()]
    lines = printed_lines(chars)
    if len(lines) < 2:
        return None
    grid = [_cells_of(line, boxes) for line in lines]
    numeric = [
        i
        for i in range(1, len(boxes))
        if sum(1 for r in grid if r[i] and NUMBER.match(r[i])) >= 2
        and all(not r[i] or NUMBER.match(r[i]) for r in grid)
    ]
    if not numeric:
        return None
    out: list[tuple[tuple[float, ...], list[str | None]]] = []
    for line, cells in zip(lines, grid, strict=True):
        has_number = any(cells[i] for i in numeric)
        lower = cells[0][:1].islower() and not any(cells[1:])
        if out and not has_number and (not cells[0] or lower):
            previous = out[-1][1]
            out[-1] = (
                out[-1][0],
                [
                    " ".join(x for x in (a or "", b) if x)
                    for a, b in zip(previous, cells, strict=True)
                ],
            )
            continue
        top = min(c["top"] for c in line)
        bottom = max(c["bottom"] for c in line)
        out.append(((row.bbox[0], top, row.bbox[2], bottom), list(cells)))
    return out if len(out) >= 2 else None


def _same_line_twice(
    previous: tuple[Any, list[str | None]], row: tuple[Any, list[str | None]]
) -> bool:
    """Whether two ruled rows hold the same printed line (a shading grid drawn over the
    rule grid repeats every value)."""
    (a, cells_a), (b, cells_b) = previous, row
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    if overlap < 0.5 * (b.bbox[3] - b.bbox[1]):
        return False
    texts_a = sorted(_clean_cell(c) for c in cells_a if not _blank_cell(c))
    return bool(texts_a) and texts_a == sorted(
        _clean_cell(c) for c in cells_b if not _blank_cell(c)
    )


def _under(cells: list[str | None], head: list[str | None]) -> int:
    """How many of a row's values sit under a heading of the first row."""
    return sum(1 for c, h in zip(cells, head, strict=False) if not _blank_cell(c) and h)


def _column_spans(found: Any, width: int) -> list[tuple[float, float]] | None:
    """The x range of each grid column of a found table (None when the grid's starts do
    not give one per column)."""
    starts = _edges(c[0] for c in found.cells)
    if len(starts) != width:
        return None
    return list(zip(starts, [*starts[1:], found.bbox[2]], strict=True))


def split_merged(
    page: Any, row: Any, raw: list[str | None], spans: list[tuple[float, float]] | None
) -> list[str | None]:
    """A row printed as one cell over several ruled columns, cut into those columns.

    Tables ruled only around the header (or by a few rows) come out of pdfplumber with
    each data row as one cell over the whole width (`Austria 86.2 13.8 0 3,375`); when
    the words of such a merged cell fall inside the columns it covers, without crossing
    a column edge, and fill at least two of them with a number among them, each column
    gets its words; a value printed in one of them (not the first) moves there. A
    heading over several columns (`number of | franchisors`, or words across an edge)
    is left as it is.
    """
    if spans is None or None not in raw or not len(spans) == len(raw) == len(row.cells):
        return raw
    out = list(raw)
    for j, box in enumerate(row.cells):
        end = j + 1
        while end < len(raw) and row.cells[end] is None:
            end += 1
        if box is None or end == j + 1 or not raw[j]:
            continue
        words = [
            w
            for w in extract_words(_chars_in(page, box), x_tolerance=1.5)
            if w["bottom"] - w["top"] > 1  # not a line above or below clipped to the edge
        ]
        cells: list[list[str]] = [[] for _ in range(j, end)]
        for word in words:
            inside = [
                k
                for k in range(j, end)
                if spans[k][0] - 1 <= word["x0"] and word["x1"] <= spans[k][1] + 1
            ]
            if not inside:
                break  # a word across a column edge: one cell indeed
            cells[inside[0] - j].append(word["text"])
        else:
            texts = [" ".join(c) for c in cells]
            filled = [k for k, c in enumerate(texts) if c]
            if len(filled) >= 2 and any(NUMBER.match(c) for c in texts[1:]):
                out[j:end] = texts
            elif filled and filled[0] > 0 and any(NUMBER.match(c or "") for c in raw):
                out[j:end] = [c or None for c in texts]  # printed in a later column of it
    return out


Box = tuple[float, float, float, float]


def _side_columns(words: list[dict[str, Any]], row_boxes: list[Box]) -> list[list[str]]:
    """Words printed beside a table's rows as columns: one list of cells per row.

    Word spans from every row that overlap or nearly touch (a space apart) are one
    column; a row gets each column's words that sit in its band.
    """
    spans: list[list[float]] = []
    for word in sorted(words, key=lambda w: w["x0"]):
        gap = (word["bottom"] - word["top"]) * 0.6
        if spans and word["x0"] <= spans[-1][1] + gap:
            spans[-1][1] = max(spans[-1][1], word["x1"])
        else:
            spans.append([word["x0"], word["x1"]])
    cells: list[list[str]] = []
    for _, top, _, bottom in row_boxes:
        row = [""] * len(spans)
        for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
            middle = (word["top"] + word["bottom"]) / 2
            if top - 1 <= middle <= bottom + 1:
                j = next(i for i, (x0, x1) in enumerate(spans) if x0 <= word["x0"] <= x1)
                row[j] = f"{row[j]} {word['text']}".strip()
        cells.append(row)
    return cells


def widen(
    words: list[dict[str, Any]],
    bbox: Box,
    row_boxes: list[Box],
    grid: list[list[str | None]],
    columns: list[float],
) -> tuple[list[list[str | None]], list[float], Box]:
    """A table whose ruled box leaves out columns printed beside it, with those columns.

    Stub columns (`1996`, `2000`) are often printed left of the ruled area, and a last
    column right of it; words at the height of the table's rows and outside its box, in
    at least half of its rows, are the table's columns there.
    """
    if not row_boxes:
        return grid, columns, bbox
    top, bottom = row_boxes[0][1], row_boxes[-1][3]
    within = [w for w in words if bbox[0] - 1 <= w["x0"] and w["x1"] <= bbox[2] + 1]
    baselines = [w["bottom"] for w in within if top - 1 <= w["top"] and w["bottom"] <= bottom + 1]
    # beside a row, on the baseline of a word printed in the table (a chart's labels next
    # to a table are not)
    level = [
        w
        for w in words
        if top - 1 <= (w["top"] + w["bottom"]) / 2 <= bottom + 1
        and any(abs(w["bottom"] - b) <= 1.5 for b in baselines)
    ]
    x0, x1 = bbox[0], bbox[2]
    for side in ("left", "right"):
        beside = [
            w
            for w in level
            if (w["x1"] <= bbox[0] + 1 if side == "left" else w["x0"] >= bbox[2] - 1)
        ]
        if not beside:
            continue
        cells = _side_columns(beside, row_boxes)
        enough = max(2, len(row_boxes) // 2)
        keep = [j for j in range(len(cells[0])) if sum(1 for r in cells if r[j]) >= enough]
        if not keep:
            continue
        cells = [[row[j] for j in keep] for row in cells]
        if side == "left":
            grid = [list(extra) + list(row) for extra, row in zip(cells, grid, strict=True)]
            x0 = min(x0, *(w["x0"] for w in beside))
            columns = [x0, *columns]
        else:
            grid = [list(row) + list(extra) for row, extra in zip(grid, cells, strict=True)]
            x1 = max(x1, *(w["x1"] for w in beside))
            columns = [*columns, x1]
    return grid, columns, (x0, bbox[1], x1, bbox[3])


def _holds(box: Box, word: dict[str, Any]) -> bool:
    """Whether a word is printed inside a box."""
    return (
        box[0] - 1 <= word["x0"]
        and word["x1"] <= box[2] + 1
        and box[1] - 1 <= word["top"]
        and word["bottom"] <= box[3] + 1
    )


def _find_tables(page: Any) -> list[PageTable]:
    tables: list[PageTable] = []
    found_tables = page.find_tables()
    words = page.extract_words(x_tolerance=1.5)  # once: ruled tables' margins, then aligned
    for found in found_tables:
        raw_rows = found.extract()
        spans = _column_spans(found, max((len(r) for r in raw_rows), default=0))
        kept: list[tuple[Any, list[str | None]]] = []
        for row, raw in zip(found.rows, raw_rows, strict=False):
            if not any(_clean_cell(c) for c in raw):
                continue
            if kept and _same_line_twice(kept[-1], (row, raw)):
                if _under(raw, raw_rows[0]) <= _under(kept[-1][1], raw_rows[0]):
                    continue  # one printed line read twice: the one under the headings
                kept.pop()
            lines = any("\n" in (c or "") for c in raw)
            split = split_by_lines(page, row, spans) if lines else None
            if split is None:
                raw = split_merged(page, row, raw, spans)
                kept.append((row, list(raw)))
            else:
                kept.extend((_Row(bbox), cells) for bbox, cells in split)
        edges = _edges([c[0] for c in found.cells] + [c[2] for c in found.cells])
        grid, columns = collapse_columns([list(raw) for _, raw in kept], edges)  # type: ignore[arg-type]
        if len(grid) < 2 or max(len(r) for r in grid) < 2:
            continue  # a box around text, not a table
        row_boxes = [tuple(row.bbox) for row, _ in kept]
        others = [t.bbox for t in found_tables if t is not found]
        free = [w for w in words if not any(_holds(b, w) for b in others)]
        grid, columns, bbox = widen(free, tuple(found.bbox), row_boxes, grid, columns)  # type: ignore[arg-type]
        title, header_rows, header = identify_header(grid)
        _carry_row_labels(grid[header_rows:])
        rows = [[_clean_cell(c) for c in raw] for raw in grid]
        tables.append(
            PageTable(
                index=len(tables),
                bbox=bbox,
                rows=rows,
                row_bboxes=row_boxes,  # type: ignore[arg-type]
                header_rows=header_rows,
                header=header,
                title=title,
                columns=columns,
            )
        )
    rules = [
        (e["x0"], e["top"], e["x1"], e["bottom"]) for e in page.edges if e["orientation"] == "h"
    ]
    for found in aligned_tables(words, rules, [t.bbox for t in tables]):
        title, header_rows, header = identify_header(found.grid)
        if not header:
            continue  # a run of number lines without a header stays text
        _carry_row_labels(found.grid[header_rows:])
        tables.append(
            PageTable(
                index=len(tables),
                bbox=found.bbox,
                rows=[[_clean_cell(c) for c in raw] for raw in found.grid],
                row_bboxes=found.row_boxes,
                header_rows=header_rows,
                header=header,
                title=title,
                columns=found.columns,
            )
        )
    return tables


def side_by_side(raw_lines: list[dict[str, Any]], boxes: list[Box]) -> list[dict[str, Any]]:
    """Text lines read table by table where tables stand side by side.

    A printed line runs across every table beside it (`Spain 268 Spain 153 Germany 91`);
    cut at the gaps between the tables (and at their outer edges), its pieces are read
    down each table in turn, then what is printed beside them (a chart's labels), so that
    each table's rows are its own lines, one after the other.
    """
    for box in boxes:
        band = [
            b
            for b in boxes
            if min(b[3], box[3]) - max(b[1], box[1]) > 0.5 * min(b[3] - b[1], box[3] - box[1])
        ]
        band.sort(key=lambda b: b[0])
        if len(band) < 2 or box is not band[0]:
            continue
        if any(a[2] > b[0] for a, b in zip(band, band[1:], strict=False)):
            continue  # overlapping boxes: not side by side
        gutters = [band[0][0] - 0.5]
        gutters += [(a[2] + b[0]) / 2 for a, b in zip(band, band[1:], strict=False)]
        gutters.append(band[-1][2] + 0.5)
        top, bottom = min(b[1] for b in band), max(b[3] for b in band)
        inside = [
            i
            for i, raw in enumerate(raw_lines)
            if top - 1 <= (raw["top"] + raw["bottom"]) / 2 <= bottom + 1
        ]
        if not inside:
            continue
        pieces = [p for i in inside for p in _split_line(raw_lines[i], gutters)]
        pieces.sort(key=lambda p: (max(p[0], 0), p[1]["top"]))
        raw_lines = raw_lines[: inside[0]] + [p for _, p in pieces] + raw_lines[inside[-1] + 1 :]
    return raw_lines


def _across(raw: dict[str, Any], bbox: tuple[float, float, float, float]) -> bool:
    """Whether a text line sits at a table's height and reaches into it."""
    middle = (raw["top"] + raw["bottom"]) / 2
    inside = bbox[1] - 1 <= middle <= bbox[3] + 1
    return inside and raw["x1"] > bbox[0] + 1 and raw["x0"] < bbox[2] - 1


def _inside_raw(raw: dict[str, Any], bbox: tuple[float, float, float, float]) -> bool:
    middle = (raw["top"] + raw["bottom"]) / 2
    return bbox[1] - 1 <= middle <= bbox[3] + 1 and bbox[0] - 1 <= raw["x0"] <= bbox[2]


def _mark_continuations(pages: list[Page]) -> int:
    """Mark each page's first table that continues the previous page's last table."""

    def is_note(line: Line) -> bool:
        return len(line.text) <= NOTE_MAX_CHARS and bool(CONTINUED.search(line.text))

    def layout(page: Page, table: PageTable) -> TableLayout:
        body = [ln for ln in page.lines if ln.table < 0 and not is_note(ln)]
        return TableLayout(
            page=page.page,
            columns=table.columns,
            page_width=page.width,
            first_on_page=not any(ln.bottom <= table.bbox[1] + 1 for ln in body),
            last_on_page=not any(ln.top >= table.bbox[3] - 1 for ln in body),
        )

    def header_row(table: PageTable) -> list[str]:
        return table.rows[table.header_rows - 1] if table.header else []

    joined = 0
    previous: tuple[Page, PageTable] | None = None
    headers: dict[int, list[str]] = {}  # id(table) -> the header row of its logical table
    for page in pages:
        for table in page.tables:
            headers[id(table)] = header_row(table)
        if not page.tables:
            previous = None
            continue
        first = min(page.tables, key=lambda t: t.bbox[1])
        if previous is not None:
            prev_page, prev_table = previous
            header = headers[id(prev_table)]
            if continues(layout(prev_page, prev_table), layout(page, first), header, first.rows[0]):
                first.continues = True
                headers[id(first)] = header
                joined += 1
        previous = (page, max(page.tables, key=lambda t: t.bbox[3]))
    return joined
