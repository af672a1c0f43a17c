"""A ruled table's grid as printed: pdfplumber's table finder cuts a ruled table by its
rules, and where the rules do not match the printing the grid is repaired here.

Grid columns that no row fills both of are one printed column (`collapse_columns`); a
ruled row holding several printed rows is cut at its lines (`split_by_lines`); a row
printed as one cell over several columns is cut into them (`split_merged`); columns
printed beside the ruled box are the table's (`widen`). `ruled` applies them to each
ruled region.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pdfplumber.utils import crop_to_bbox, extract_text, extract_words

from rag_assets.core.tables.cells import (
    blank,
    header_label,
    not_available,
    number,
    values_cell,
    without_leader,
)
from rag_assets.core.tables.model import Box
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import printed_lines


def column_edges(values: Iterable[float], settings: TableSettings) -> list[float]:
    """Distinct x positions, sorted: positions within `same_edge` of the last kept are one."""
    edges: list[float] = []
    for x in sorted(values):
        if not edges or x - edges[-1] > settings.same_edge:
            edges.append(x)
    return edges


def collapse_columns(
    rows: list[list[str | None]], edges: list[float], settings: TableSettings
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
        both = any(not blank(r[i]) and not blank(r[i + 1]) for r in rows)
        named = [any(header_label(r[j]) for r in rows[: settings.heading_rows]) for j in (i, i + 1)]
        if both or all(named):  # two headings of their own: two columns, however sparse
            i += 1
            continue
        for r in rows:
            left, right = r[i], r[i + 1]
            r[i] = right if blank(left) and not blank(right) else left
            if r[i] is None and left == "":
                r[i] = ""  # covered on its right half only: not part of a merged cell
            del r[i + 1]
        if len(edges) == width + 1:
            del edges[i + 1]
        width -= 1
    return rows, edges


def _cells_of(line: list[dict[str, Any]], boxes: list[Any], settings: TableSettings) -> list[str]:
    """A printed line's text by column: a word goes to the column it starts in (a long
    word running over into the next column stays in its own)."""
    parts: list[list[dict[str, Any]]] = [[] for _ in boxes]
    column, previous = -1, None
    for char in sorted(line, key=lambda c: c["x0"]):
        middle = (char["x0"] + char["x1"]) / 2
        gap = char["x0"] - previous["x1"] if previous is not None else 0.0
        if previous is None or gap > settings.word_x_tolerance or column < 0:
            column = next((j for j, b in enumerate(boxes) if b[0] <= middle < b[2]), -1)
        if column >= 0:
            parts[column].append(char)
        previous = char
    return [
        " ".join(extract_text(p, x_tolerance=settings.word_x_tolerance).split()) if p else ""
        for p in parts
    ]


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
    page: Any, row: Any, spans: list[tuple[float, float]] | None, settings: TableSettings
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
    lines = printed_lines(chars, settings)
    if len(lines) < 2:
        return None
    grid = [_cells_of(line, boxes, settings) for line in lines]
    for cells in grid:
        cells[0] = without_leader(cells[0])  # `Robbery . . . . .`: dots leading to the values
    numeric = [
        i
        for i in range(1, len(boxes))
        if sum(1 for r in grid if values_cell(r[i])) >= 2
        and all(not r[i] or values_cell(r[i]) or not_available(r[i]) for r in grid)
    ]
    if not numeric:
        return None
    out: list[tuple[tuple[float, ...], list[str | None]]] = []
    for line, cells in zip(lines, grid, strict=True):
        has_number = any(cells[i] for i in numeric)
        lower = cells[0][:1].islower()
        top = min(c["top"] for c in line)
        bottom = max(c["bottom"] for c in line)
        if out and not has_number and (not cells[0] or (lower and not any(cells[1:]))):
            previous = out[-1][1]
            out[-1] = (
                out[-1][0],
                [
                    " ".join(x for x in (a or "", b) if x)
                    for a, b in zip(previous, cells, strict=True)
                ],
            )
            continue
        if out and has_number and lower and not any(out[-1][1][1:]):
            # the label began on the line above, alone (`Murder and nonnegligent` over
            # `manslaughter ... 10.0 0.9 9.1`): one row
            (x0, upper, x1, _), previous = out[-1]
            out[-1] = ((x0, upper, x1, bottom), [f"{previous[0]} {cells[0]}", *cells[1:]])
            continue
        out.append(((row.bbox[0], top, row.bbox[2], bottom), list(cells)))
    return out if len(out) >= 2 else None


def column_spans(
    found: Any, width: int, settings: TableSettings
) -> list[tuple[float, float]] | None:
    """The x range of each grid column of a found table (None when the grid's starts do
    not give one per column)."""
    starts = column_edges((c[0] for c in found.cells), settings)
    if len(starts) != width:
        return None
    return list(zip(starts, [*starts[1:], found.bbox[2]], strict=True))


def _one_phrase(last: tuple[int, Any], column: int, word: Any, settings: TableSettings) -> bool:
    """Whether `word`, in `column`, runs on from the word read before it in another
    column with no more than a space between them: a heading centred over the columns
    whose words an edge falls between (`FY | 2005`, `June 30, | 2021`), not two cells."""
    before, left = last
    if before == column or abs(left["top"] - word["top"]) > settings.same_line_em * (
        word["bottom"] - word["top"]
    ):
        return False
    return word["x0"] - left["x1"] < settings.tight_gap_em * (word["bottom"] - word["top"])


def split_merged(
    page: Any,
    row: Any,
    raw: list[str | None],
    spans: list[tuple[float, float]] | None,
    settings: TableSettings,
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
            for w in extract_words(_chars_in(page, box), x_tolerance=settings.word_x_tolerance)
            if w["bottom"] - w["top"]
            > settings.min_word_height  # not a line above or below clipped to the edge
        ]
        cells: list[list[str]] = [[] for _ in range(j, end)]
        last: tuple[int, Any] | None = None  # the column and word read before
        for word in words:
            inside = [
                k
                for k in range(j, end)
                if spans[k][0] - settings.slack <= word["x0"]
                and word["x1"] <= spans[k][1] + settings.slack
            ]
            if not inside or (last is not None and _one_phrase(last, inside[0], word, settings)):
                break  # a word across a column edge, or a heading's words: one cell indeed
            cells[inside[0] - j].append(word["text"])
            last = (inside[0], word)
        else:
            texts = [" ".join(c) for c in cells]
            filled = [k for k, c in enumerate(texts) if c]
            if len(filled) >= 2 and any(number(c) for c in texts[1:]):
                out[j:end] = texts
            elif filled and filled[0] > 0 and any(number(c or "") for c in raw):
                out[j:end] = [c or None for c in texts]  # printed in a later column of it
    return out


def _side_columns(
    words: list[dict[str, Any]], row_boxes: list[Box], settings: TableSettings
) -> list[list[str]]:
    """Words printed beside a table's rows as columns: one list of cells per row.

    Word spans from every row that overlap or nearly touch (a space apart) are one
    column; a row gets each column's words that sit in its band.
    """
    spans: list[list[float]] = []
    for word in sorted(words, key=lambda w: w["x0"]):
        gap = (word["bottom"] - word["top"]) * settings.side_column_gap_em
        if spans and word["x0"] <= spans[-1][1] + gap:
            spans[-1][1] = max(spans[-1][1], word["x1"])
        else:
            spans.append([word["x0"], word["x1"]])
    cells: list[list[str]] = []
    for _, top, _, bottom in row_boxes:
        row = [""] * len(spans)
        for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
            middle = (word["top"] + word["bottom"]) / 2
            if top - settings.slack <= middle <= bottom + settings.slack:
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
    settings: TableSettings,
) -> tuple[list[list[str | None]], list[float], Box]:
    """A table whose ruled box leaves out columns printed beside it, with those columns.

    Stub columns (`1996`, `2000`) are often printed left of the ruled area, and a last
    column right of it; words at the height of the table's rows and outside its box, in
    at least half of its rows, are the table's columns there.
    """
    if not row_boxes:
        return grid, columns, bbox
    top, bottom = row_boxes[0][1], row_boxes[-1][3]
    slack = settings.slack
    within = [w for w in words if bbox[0] - slack <= w["x0"] and w["x1"] <= bbox[2] + slack]
    baselines = [
        w["bottom"] for w in within if top - slack <= w["top"] and w["bottom"] <= bottom + slack
    ]
    # beside a row, on the baseline of a word printed in the table (a chart's labels next
    # to a table are not)
    level = [
        w
        for w in words
        if top - slack <= (w["top"] + w["bottom"]) / 2 <= bottom + slack
        and any(abs(w["bottom"] - b) <= settings.same_edge for b in baselines)
    ]
    x0, x1 = bbox[0], bbox[2]
    for side in ("left", "right"):
        beside = [
            w
            for w in level
            if (w["x1"] <= bbox[0] + slack if side == "left" else w["x0"] >= bbox[2] - slack)
        ]
        if not beside:
            continue
        cells = _side_columns(beside, row_boxes, settings)
        enough = max(2, int(settings.beside_rows * len(row_boxes)))
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
