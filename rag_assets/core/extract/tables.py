"""Tables on a page: ruled ones (their grid repaired to match the printing, see
`ruled_grid`), then those set by alignment alone (`aligned`); text lines across tables
side by side; pieces continued across pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_assets.core.extract.aligned import aligned_tables
from rag_assets.core.extract.columns import _split_line
from rag_assets.core.extract.hyphenation import _dehyphenate_cell
from rag_assets.core.extract.model import Line, Page, PageTable
from rag_assets.core.extract.rotation import _is_upright, runs_upward
from rag_assets.core.extract.ruled_grid import (
    Box,
    blank_cell,
    carry_row_labels,
    collapse_columns,
    column_edges,
    column_spans,
    join_label_rests,
    split_by_lines,
    split_merged,
    widen,
)
from rag_assets.core.extract.stub import indent_paths, outer_labels
from rag_assets.core.structure.headers import NUMERIC, YEAR, identify_header
from rag_assets.core.structure.tables import CONTINUED, TableLayout, continues, separate_mark

NOTE_MAX_CHARS = 60  # a "continued" note between table pieces is short


def _clean_cell(cell: str | None) -> str:
    return separate_mark(_dehyphenate_cell(cell or ""))


@dataclass
class _Row:
    """A row cut from a ruled row: only its box is needed."""

    bbox: tuple[float, ...]


def _same_line_twice(
    previous: tuple[Any, list[str | None]], row: tuple[Any, list[str | None]]
) -> bool:
    """Whether two ruled rows hold the same printed line (a shading grid drawn over the
    rule grid repeats every value)."""
    (a, cells_a), (b, cells_b) = previous, row
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    if overlap < 0.5 * (b.bbox[3] - b.bbox[1]):
        return False
    texts_a = sorted(_clean_cell(c) for c in cells_a if not blank_cell(c))
    return bool(texts_a) and texts_a == sorted(_clean_cell(c) for c in cells_b if not blank_cell(c))


def _under(cells: list[str | None], head: list[str | None]) -> int:
    """How many of a row's values sit under a heading of the first row."""
    return sum(1 for c, h in zip(cells, head, strict=False) if not blank_cell(c) and h)


def _holds(box: Box, word: dict[str, Any]) -> bool:
    """Whether a word is printed inside a box."""
    return (
        box[0] - 1 <= word["x0"]
        and word["x1"] <= box[2] + 1
        and box[1] - 1 <= word["top"]
        and word["bottom"] <= box[3] + 1
    )


def _labels_only(rows: list[list[str]]) -> bool:
    """Whether a ruled table holds no value, only a few rows of labels: a header ruled as
    a box over a body set by alignment below it."""
    cells = [c.strip() for row in rows for c in row if c.strip()]
    return len(rows) <= 4 and all(not NUMERIC.match(c) or YEAR.match(c) for c in cells)


def _find_tables(page: Any) -> list[PageTable]:
    """The page's tables: ruled ones, then those set by alignment (see the module
    docstring); a ruled box of labels only that heads an aligned body is that body's
    header, not a table of its own."""
    found_tables = page.find_tables()
    words = page.extract_words(x_tolerance=1.5)  # once: ruled tables' margins, then aligned
    turned = [c for c in page.chars if not c.get("upright", True) and c["text"].strip()]
    ruled = [
        t for found in found_tables if (t := _ruled_table(page, found, found_tables, words, turned))
    ]
    heads = {id(t) for t in ruled if _labels_only(t.rows)}
    tables = [t for t in ruled if id(t) not in heads]
    rules = [
        (e["x0"], e["top"], e["x1"], e["bottom"]) for e in page.edges if e["orientation"] == "h"
    ]
    for found in aligned_tables(words, rules, [t.bbox for t in tables]):
        title, header_rows, header = identify_header(found.grid)
        if not header:
            continue  # a run of number lines without a header stays text
        boxes = [t for t in ruled if id(t) in heads and _overlap(t.bbox, found.bbox)]
        if any(not _heads(t.bbox, found.bbox) for t in boxes):
            continue  # labels in a box beside or inside it (a chart's legend): no header
        indent_paths(found.grid, header_rows, found.row_boxes, found.columns, words)
        carry_row_labels(found.grid[header_rows:])
        tables.append(
            PageTable(
                index=0,
                bbox=found.bbox,
                rows=[[_clean_cell(c) for c in raw] for raw in found.grid],
                row_bboxes=found.row_boxes,
                header_rows=header_rows,
                header=header,
                title=title,
                columns=found.columns,
            )
        )
        heads -= {id(t) for t in boxes}
    kept = {id(t) for t in tables} | heads  # the header boxes no aligned body took
    tables = [t for t in ruled if id(t) in kept] + [t for t in tables if t not in ruled]
    for i, table in enumerate(tables):
        table.index = i
    return tables


def _overlap(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _heads(box: Box, table: Box) -> bool:
    """Whether a ruled box of labels sits as the header of a table: at its top, across
    (nearly) the same width."""
    across = min(box[2], table[2]) - max(box[0], table[0])
    width = max(box[2] - box[0], table[2] - table[0])
    return across >= 0.8 * width and box[1] <= table[1] + 2 and box[3] < table[3]


def _read_upward(
    page: Any, found: Any, raw_rows: list[list[str | None]], turned: list[dict[str, Any]]
) -> None:
    """Cells whose text runs upward read bottom to top, column by column (pdfplumber
    strings their characters top to bottom: `sretov` for `voters`); `turned` are the
    page's characters not upright, read once per page."""
    turned = [c for c in turned if _holds(found.bbox, c) and not _is_upright(c)]
    if not runs_upward(turned):
        return
    chars = [c for c in page.chars if _holds(found.bbox, c)]
    for row, raw in zip(found.rows, raw_rows, strict=False):
        for j, box in enumerate(row.cells):
            if (
                box is None
                or j >= len(raw)
                or not runs_upward([c for c in turned if _holds(box, c)])
            ):
                continue
            inside = [c for c in chars if _holds(box, c)]
            columns: list[list[dict[str, Any]]] = []
            for c in sorted(inside, key=lambda c: c["x0"]):
                if columns and c["x0"] - columns[-1][-1]["x0"] <= 0.5 * (c["x1"] - c["x0"]):
                    columns[-1].append(c)
                else:
                    columns.append([c])
            lines = [_upward_text(sorted(col, key=lambda c: -c["top"])) for col in columns]
            raw[j] = "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _upward_text(chars: list[dict[str, Any]]) -> str:
    """One column of upward characters, bottom first, as text: a gap between two glyphs
    wider than a quarter of their size is a space (a PDF need not draw spaces)."""
    out: list[str] = []
    for before, char in zip([None, *chars], chars, strict=False):
        gap = before["top"] - char["bottom"] if before is not None else 0.0
        if gap > 0.25 * float(char.get("size") or 10) and out and out[-1] != " ":
            out.append(" ")
        out.append(char["text"])
    return "".join(out)


def _ruled_table(
    page: Any, found: Any, found_tables: list[Any], words: list[Any], turned: list[Any]
) -> PageTable | None:
    """One table of pdfplumber's finder with its grid repaired (None: a box around text)."""
    raw_rows = found.extract()
    _read_upward(page, found, raw_rows, turned)
    spans = column_spans(found, max((len(r) for r in raw_rows), default=0))
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
    edges = column_edges([c[0] for c in found.cells] + [c[2] for c in found.cells])
    grid, columns = collapse_columns([list(raw) for _, raw in kept], edges)  # type: ignore[arg-type]
    if len(grid) < 2 or max(len(r) for r in grid) < 2:
        return None  # a box around text, not a table
    row_boxes = [tuple(row.bbox) for row, _ in kept]
    others = [t.bbox for t in found_tables if t is not found]
    free = [w for w in words if not any(_holds(b, w) for b in others)]
    grid, columns, bbox = widen(free, tuple(found.bbox), row_boxes, grid, columns)  # type: ignore[arg-type]
    title, header_rows, header = identify_header(grid)
    join_label_rests(grid, row_boxes, header_rows)  # type: ignore[arg-type]
    indent_paths(grid, header_rows, row_boxes, columns, words)  # type: ignore[arg-type]
    bbox = outer_labels(free, bbox, grid, header_rows, row_boxes)  # type: ignore[arg-type]
    carry_row_labels(grid[header_rows:])
    return PageTable(
        index=0,
        bbox=bbox,
        rows=[[_clean_cell(c) for c in raw] for raw in grid],
        row_bboxes=row_boxes,  # type: ignore[arg-type]
        header_rows=header_rows,
        header=header,
        title=title,
        columns=columns,
    )


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
