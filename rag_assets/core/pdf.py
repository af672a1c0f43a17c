"""Page text from PDFs: lines in reading order with their typography, tables, char offsets.

What comes out of here is all later stages ever see, so this module refuses bad input
loudly (naming the file and the reason) rather than returning an empty document, and
repairs what would poison every chunk: running headers, footers and page numbers are
dropped, glyphs drawn twice and phantom spaces removed, pages whose text runs sideways
turned upright, words hyphenated across lines joined, and pages without a text layer
read by OCR (Tesseract).
"""

from __future__ import annotations

import bisect
import copy
import io
import math
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pdfplumber
from pdfplumber.page import Page as PlumberPage
from pdfplumber.utils import extract_text

from rag_assets.core.lake import LakePath
from rag_assets.core.schemas import DocText
from rag_assets.core.tables import (
    CONTINUED,
    LogicalTable,
    TableLayout,
    TablePart,
    continues,
    identify_header,
    join_tables,
)

PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:p[áa]gina|page|p[áa]g\.?|p\.)?\s*\d{1,5}(?:\s*(?:de|of|/)\s*\d{1,5})?[-–—\s]*$",
    re.IGNORECASE,
)
MARGIN_LINES = 2  # lines at the top and at the bottom of a page checked for repetition
HYPHENS = "-\u2010\u00ad"  # hyphen-minus, hyphen, soft hyphen
# a word's second half that is a pronoun joined by a real hyphen: dar-lhe, fazê-lo, trata-se
CLITICS = {"lhe", "lhes"}
ACCENTED_CLITICS = {"lo", "la", "los", "las"}  # after an accented verb ending: fazê-lo
# first halves that always keep their hyphen (pós-graduação, auxílio-doença, vale-transporte)
HYPHEN_PREFIXES = {
    "vice", "pós", "pré", "pró", "recém", "além", "aquém", "grã", "grão",
    "auxílio", "salário", "vale", "seguro", "decreto",
}  # fmt: skip
HYPHEN_SUFFIXES = {"feira"}  # segunda-feira
VOWEL_PREFIXES = {"bem"}  # bem-estar, bem-humorado: before a vowel or h it is a compound
# a page that is mostly one image with under this many characters of text is a scan
# (a signature stamp or a page number printed on it): it is read by OCR too
THIN_TEXT_CHARS = 200
SCAN_COVER = 0.6
NOTE_MAX_CHARS = 60  # a "continued" note between table pieces is short
COLUMN_MIN_LINES = 3  # a gutter is open on at least this many lines
COLUMN_MAX_CROSSING = 0.25  # ... and crossed by ink on at most this share of them
COLUMN_MIN_CHARS = 15  # a text column's pieces average at least this many characters
COLUMN_MAX_RATIO = 1.6  # text columns are about as wide as each other


class PdfError(ValueError):
    """A PDF that cannot be read; the message names the file and the reason."""


@dataclass
class OcrSettings:
    """How pages without a text layer are read: Tesseract's command, languages and dpi.

    `languages` is Tesseract's `-l` value (`por+eng`: Portuguese and English); words
    Tesseract itself gives a confidence under `min_confidence` (0-100) are dropped, as
    they are almost always noise (specks, stamps, scripts it has no model for).
    """

    languages: str = "por+eng"
    dpi: int = 200
    command: str = "tesseract"
    min_confidence: int = 20
    enabled: bool = True
    workers: int = 0  # Tesseract processes at once; 0: one per CPU core, at most 4
    timeout_s: int = 600  # per page


@dataclass
class Line:
    """One text line of a page, with where it sits and how it is printed."""

    text: str
    x0: float
    top: float
    bottom: float
    size: float
    bold: bool
    table: int = -1
    char_start: int = 0
    char_end: int = 0

    def as_row(self) -> dict[str, Any]:
        """The line as a Parquet struct."""
        return {
            "text": self.text,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "x0": self.x0,
            "top": self.top,
            "bottom": self.bottom,
            "size": self.size,
            "bold": self.bold,
            "table": self.table,
        }


@dataclass
class PageTable:
    """A ruled table found on a page: its cells and the span of each row in the text."""

    index: int
    bbox: tuple[float, float, float, float]
    rows: list[list[str]]
    row_bboxes: list[tuple[float, float, float, float]]
    row_spans: list[tuple[int, int]] = field(default_factory=list)
    char_start: int = -1
    char_end: int = -1
    header_rows: int = 0
    header: list[str] = field(default_factory=list)
    title: str = ""
    continues: bool = False
    columns: list[float] = field(default_factory=list)  # column edges (not stored)

    def as_row(self) -> dict[str, Any]:
        """The table as a Parquet struct."""
        return {
            "index": self.index,
            "bbox": list(self.bbox),
            "rows": self.rows,
            "row_spans": [list(s) for s in self.row_spans],
            "char_start": self.char_start,
            "char_end": self.char_end,
            "header_rows": self.header_rows,
            "header": self.header,
            "title": self.title,
            "continues": self.continues,
        }

    def part(self, page: int) -> TablePart:
        """This piece as `core.tables` joins it."""
        return TablePart(
            page=page,
            index=self.index,
            rows=self.rows,
            row_spans=list(self.row_spans),
            char_start=self.char_start,
            char_end=self.char_end,
            header_rows=self.header_rows,
            header=list(self.header),
            title=self.title,
            continues=self.continues,
        )


@dataclass
class Page:
    """One extracted page. `rotation` is how far it was turned to read its text upright."""

    page: int
    lines: list[Line]
    tables: list[PageTable]
    has_text_layer: bool
    ocr: bool = False
    char_start: int = 0
    rotation: int = 0
    width: float = 0.0
    height: float = 0.0
    sideways_chars: int = 0  # characters of margin stamps running sideways, dropped
    columns: bool = False  # set in columns, read column by column

    @property
    def text(self) -> str:
        """The page's text, one line per line."""
        return "\n".join(line.text for line in self.lines)


@dataclass
class Extraction:
    """Every page of a document plus the joined document text and what was repaired."""

    pages: list[Page]
    doc: DocText
    stats: dict[str, int] = field(default_factory=dict)

    def table_parts(self) -> list[TablePart]:
        """Every page's table pieces, in reading order."""
        return [t.part(p.page) for p in self.pages for t in p.tables]

    def logical_tables(self) -> list[LogicalTable]:
        """The tables as a reader sees them, pieces continued across pages joined."""
        return join_tables(self.table_parts())


def check_pdf_file(path: LakePath, max_bytes: int) -> None:
    """Refuse files that are missing, empty, too large or not PDFs, before parsing."""
    if not path.is_file():
        raise PdfError(f"{path}: file not found")
    size = path.stat().st_size
    if size == 0:
        raise PdfError(f"{path}: file is empty (0 bytes), not a PDF")
    if size > max_bytes:
        raise PdfError(f"{path}: file is {size} bytes, over the limit of {max_bytes} bytes")
    with path.open("rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise PdfError(f"{path}: not a PDF (no %PDF- signature in its first bytes)")


def _line_from(raw: dict[str, Any]) -> Line | None:
    chars = [c for c in raw.get("chars", []) if c.get("text", "").strip()]
    text = re.sub(r"\s+", " ", raw["text"]).strip()
    if not text or not chars:
        return None
    sizes = [float(c.get("size", 0.0)) for c in chars]
    bold = all(re.search(r"bold|black|heavy", str(c.get("fontname", "")), re.I) for c in chars)
    return Line(
        text=text,
        x0=float(raw["x0"]),
        top=float(raw["top"]),
        bottom=float(raw["bottom"]),
        size=round(statistics.median(sizes), 1),
        bold=bold,
    )


# --- words hyphenated across lines -------------------------------------------------------


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", text.lower())


def keep_hyphen(first: str, second: str, vocabulary: set[str] | None = None) -> bool:
    """Whether `first-` at a line end and `second` on the next line form a hyphenated word
    (`dar-lhe`, `bem-estar`) rather than one word cut by the line break (`trata-mento`).

    The document itself decides first: a form it prints elsewhere on one line wins. Then
    Portuguese rules: `lhe(s)` after a hyphen is a pronoun; `lo/la/los/las` after an
    accented verb ending (`fazê-lo`); `se` after a verb (`trata-se`, `aplicar-se`); a
    first half that always takes a hyphen (`pós-`, `vice-`, `auxílio-`), `bem-` before a
    vowel or h (`bem-estar`), `-feira`; a word already hyphenated (`bem-te-`). Anything
    else is a word cut in two.
    """
    vocab = vocabulary or set()
    head, tail = first.lower(), second.lower()
    joined, hyphenated = head + tail, f"{head}-{tail}"
    if hyphenated in vocab and joined not in vocab:
        return True
    if joined in vocab and hyphenated not in vocab:
        return False
    if tail in CLITICS or "-" in head or head in HYPHEN_PREFIXES or tail in HYPHEN_SUFFIXES:
        return True
    if head in VOWEL_PREFIXES and tail[:1] in "aeiouáéíóúâêôãõh":
        return True
    if tail in ACCENTED_CLITICS and head[-1:] in "áéêíóôú":
        return True
    return tail == "se" and len(head) >= 4 and head[-1] in "aeiouáéêóôr"


TRAILING = re.compile(rf"(?:^|\s)(\S*[^\W\d_])([{HYPHENS}])$")
LEADING = re.compile(r"^([^\W\d_]+)")
ALINEA = re.compile(r"^[a-z]\)")


def _join_pair(prev: Line, nxt: Line, vocab: set[str]) -> bool:
    """Move the first word of `nxt` up to complete the hyphenated word ending `prev`."""
    end = TRAILING.search(prev.text)
    if end is None or not nxt.text:
        return False
    token, _, rest = nxt.text.partition(" ")
    lead = LEADING.match(token)
    soft = end.group(2) == "\u00ad"
    if lead is None or ALINEA.match(token) or (not soft and not token[0].islower()):
        return False
    first = end.group(1)
    head = re.search(r"[^\W\d_]+$", first)
    keep = not soft and (
        "-" in first or keep_hyphen(head.group(0) if head else first, lead.group(1), vocab)
    )
    prev.text = prev.text[:-1] + ("-" if keep else "") + token
    nxt.text = rest.strip()
    return True


def _join_hyphenated(pages: list[Page]) -> int:
    """Join words hyphenated across lines (and pages), outside tables; returns how many.

    The second half moves up to the first line, so every line (and every offset computed
    after) still holds whole words; a line left empty is dropped.
    """
    body = [line for page in pages for line in page.lines if line.table < 0]
    vocab = set(_words("\n".join(line.text for line in body)))
    joined = 0
    previous: Line | None = None
    for page in pages:
        for line in page.lines:
            if line.table >= 0:
                previous = None
                continue
            if previous is not None and _join_pair(previous, line, vocab):
                joined += 1
            if line.text:
                previous = line
    for page in pages:
        page.lines = [line for line in page.lines if line.text]
    return joined


def _dehyphenate_cell(text: str) -> str:
    """A table cell printed over several lines, as one line; hyphenated words joined."""

    def join(match: re.Match[str]) -> str:
        first, second = match.group(1), match.group(3)
        soft = match.group(2) == "\u00ad"
        keep = not soft and (not second[0].islower() or keep_hyphen(first, second))
        return f"{first}{'-' if keep else ''}{second}"

    text = re.sub(rf"([^\W\d_]+)([{HYPHENS}])\n([^\W\d_]+)", join, text)
    return re.sub(r"\s+", " ", text).strip()


# --- tables ----------------------------------------------------------------------------


def _clean_cell(cell: str | None) -> str:
    return _dehyphenate_cell(cell or "")


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


def _text_lines_of(chars: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Characters grouped into printed lines, top to bottom."""
    lines: list[list[dict[str, Any]]] = []
    for c in sorted(chars, key=lambda c: (c["top"], c["x0"])):
        if lines and c["top"] - lines[-1][0]["top"] <= c["size"] * 0.5:
            lines[-1].append(c)
        else:
            lines.append([c])
    return lines


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
    chars = [c for c in page.crop(row.bbox).chars if c["text"].strip()]
    lines = _text_lines_of(chars)
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
            for w in page.crop(box).extract_words(x_tolerance=1.5)
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
    words: list[dict[str, Any]] = []
    if found_tables:
        words = page.extract_words(x_tolerance=1.5)
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
    return tables


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


# --- pages: rotation, phantom spaces, text outside the page --------------------------------


def _text_angle(chars: list[dict[str, Any]]) -> int:
    """The direction most of a page's characters run in, in degrees (0, 90, 180, 270)."""
    angles: Counter[int] = Counter()
    for c in chars:
        if c["text"].strip() and c.get("matrix"):
            a, b = c["matrix"][0], c["matrix"][1]
            angles[round(math.degrees(math.atan2(b, a)) / 90) % 4 * 90] += 1
    return angles.most_common(1)[0][0] if angles else 0


def _upright(pdf: Any, page: PlumberPage) -> tuple[PlumberPage, int]:
    """The page turned so that most of its text reads left to right, and by how much.

    A page whose text runs sideways (a landscape table printed on a portrait page, or a
    `/Rotate` that leaves the text vertical) is reopened with the rotation that cancels
    the text's angle, so lines, tables and reading order come out as on a turned page.
    """
    angle = _text_angle(page.chars)
    if angle == 0:
        return page, 0
    obj = copy.copy(page.page_obj)
    obj.attrs = dict(obj.attrs)
    rotate = (page.rotation + angle) % 360
    obj.attrs["Rotate"] = rotate
    obj.rotate = rotate
    turned = PlumberPage(pdf, obj, page_number=page.page_number, initial_doctop=0)
    return turned, angle


def _has_duplicate_chars(page: Any) -> bool:
    """Whether some glyph is drawn twice at the same place (a cheap test before deduping)."""
    seen = {(c["text"], round(c["x0"]), round(c["top"])) for c in page.chars}
    return len(seen) < len(page.chars)


def _is_upright(char: dict[str, Any]) -> bool:
    """Whether a character runs left to right (a tilt under about 6 degrees allowed)."""
    matrix = char.get("matrix") or (1, 0, 0, 1)
    return matrix[0] > 0 and abs(matrix[1]) <= 0.1 * matrix[0]


def _phantom_spaces(chars: list[dict[str, Any]]) -> set[tuple[float, float]]:
    """Space characters drawn over visible glyphs (some generators interleave them), which
    would split `06/30/2015` into `0 6 / 3 0 / 2 0 15`; returned by (x0, top)."""
    rows: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for c in chars:
        if c["text"].strip() and _is_upright(c):
            rows[round(c["top"])].append((c["x0"], c["x1"]))
    starts: dict[int, list[float]] = {}
    for key, spans in rows.items():
        spans.sort()
        starts[key] = [x0 for x0, _ in spans]
    phantom: set[tuple[float, float]] = set()
    for c in chars:
        if c["text"].strip() or c["x1"] <= c["x0"] or not _is_upright(c):
            continue
        width = c["x1"] - c["x0"]
        key = round(c["top"])
        for k in (key - 1, key, key + 1):
            if k not in rows:
                continue
            i = bisect.bisect_left(starts[k], c["x1"])
            near = rows[k][max(0, i - 3) : i]
            if any(min(x1, c["x1"]) - max(x0, c["x0"]) > width * 0.5 for x0, x1 in near):
                phantom.add((c["x0"], c["top"]))
                break
    return phantom


def _readable(path: LakePath, number: int, page: Any) -> Any:
    """The page without phantom spaces and without text drawn outside the page."""
    width, height = page.width, page.height

    def off_page(c: dict[str, Any]) -> bool:
        x, y = (c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2
        return not (page.bbox[0] <= x <= page.bbox[2] and page.bbox[1] <= y <= page.bbox[3])

    visible = [c for c in page.chars if c["text"].strip()]
    outside = {(c["x0"], c["top"]) for c in page.chars if off_page(c)}
    if visible and all((c["x0"], c["top"]) in outside for c in visible):
        box = [round(float(v), 2) for v in page.page_obj.mediabox]
        raise PdfError(
            f"{path}: malformed PDF, page {number} draws all its text outside the page "
            f"(MediaBox {box}, page {width:.0f}x{height:.0f} pt): nothing on it can be read"
        )
    drop = outside | _phantom_spaces(page.chars)
    if not drop:
        return page
    return page.filter(lambda o: o.get("object_type") != "char" or (o["x0"], o["top"]) not in drop)


def _without_sideways(page: Any, tables: list[PageTable]) -> tuple[Any, int]:
    """The page without text running sideways outside its tables, and how many characters
    that dropped: once the page is turned to its main direction, what still runs sideways
    is a margin stamp or a watermark (`jbell on DSK...PROD with RULES`), not body text."""

    def in_table(c: dict[str, Any]) -> bool:
        return any(
            t.bbox[0] <= c["x0"] and c["x1"] <= t.bbox[2] + 1 and t.bbox[1] <= c["top"] <= t.bbox[3]
            for t in tables
        )

    sideways = [c for c in page.chars if not _is_upright(c) and not in_table(c)]
    if not sideways:
        return page, 0
    drop = {(c["x0"], c["top"]) for c in sideways}
    kept = page.filter(lambda o: o.get("object_type") != "char" or (o["x0"], o["top"]) not in drop)
    return kept, sum(1 for c in sideways if c["text"].strip())


# --- columns: reading order on pages set in two or three columns --------------------------


def _gaps(chars: list[dict[str, Any]], min_gap: float) -> list[tuple[float, float]]:
    """Horizontal gaps of at least `min_gap` between consecutive characters of a line."""
    ink = sorted((c for c in chars if c["text"].strip()), key=lambda c: c["x0"])
    pairs = zip(ink, ink[1:], strict=False)
    return [(a["x1"], b["x0"]) for a, b in pairs if b["x0"] - a["x1"] >= min_gap]


def _gutters(lines: list[dict[str, Any]], width: float) -> list[float]:
    """x of the gutters between text columns: where many lines have a wide gap and few
    lines have ink (a full-width title may cross a gutter, a body line does not)."""
    open_at = [0] * (int(width) + 2)
    ink_at = [0] * (int(width) + 2)
    for line in lines:
        size = statistics.median([c["size"] for c in line["chars"]] or [10.0])
        for g0, g1 in _gaps(line["chars"], max(6.0, size * 0.9)):
            for x in range(max(0, math.ceil(g0)), min(len(open_at), math.floor(g1) + 1)):
                open_at[x] += 1
        for c in line["chars"]:
            if c["text"].strip():
                for x in range(max(0, int(c["x0"])), min(len(ink_at), math.ceil(c["x1"]))):
                    ink_at[x] += 1
    gutters: list[float] = []
    run: list[int] = []
    for x in range(len(open_at) + 1):
        good = x < len(open_at) and open_at[x] >= COLUMN_MIN_LINES
        good = good and ink_at[x] <= COLUMN_MAX_CROSSING * (open_at[x] + ink_at[x])
        if good:
            run.append(x)
        elif run:
            gutters.append((run[0] + run[-1]) / 2)
            run = []
    return gutters


def _text_by_column(line: dict[str, Any], columns: list[int]) -> dict[int, str] | None:
    """Cut a line's text (with pdfplumber's spaces) by the column of each character."""
    chars = [c for c in line["chars"] if c["text"].strip()]
    text, pos = line["text"], 0
    out: dict[int, list[str]] = defaultdict(list)
    for char, column in zip(chars, columns, strict=True):
        glyph = re.sub(r"\s", "", char["text"])
        while pos < len(text) and text[pos].isspace():
            out[column].append(" ")
            pos += 1
        if text[pos : pos + len(glyph)] != glyph:
            return None
        out[column].append(glyph)
        pos += len(glyph)
    return {k: "".join(v).strip() for k, v in out.items()}


def _split_line(line: dict[str, Any], gutters: list[float]) -> list[tuple[int, dict[str, Any]]]:
    """A line cut at the gutters it has a gap over: (column, line) pieces; a line whose
    ink crosses a gutter stays whole, with column -1."""
    chars = [c for c in line["chars"] if c["text"].strip()]
    if any(c["x0"] < g < c["x1"] for g in gutters for c in chars):
        return [(-1, line)]
    columns = [sum(1 for g in gutters if (c["x0"] + c["x1"]) / 2 > g) for c in chars]
    texts = _text_by_column(line, columns)
    out = []
    for column in sorted(set(columns)):
        part = [c for c, k in zip(chars, columns, strict=True) if k == column]
        text = texts[column] if texts else extract_text(part, x_tolerance=1.5)
        out.append(
            (
                column,
                {
                    "text": text,
                    "x0": min(c["x0"] for c in part),
                    "x1": max(c["x1"] for c in part),
                    "top": min(c["top"] for c in part),
                    "bottom": max(c["bottom"] for c in part),
                    "chars": part,
                },
            )
        )
    return out


def _column_order(
    lines: list[dict[str, Any]], fixed: list[bool], width: float
) -> tuple[list[dict[str, Any]], bool]:
    """Text lines in reading order on a page set in columns: down each column, then the
    next, within each band between full-width lines (titles, headers) and `fixed` lines
    (a ruled table's). Returns the lines unchanged on a single-column page, or when the
    "columns" hold only short pieces (an unruled table or a column of line numbers is read
    row by row, as printed)."""
    gutters = _gutters([ln for ln, f in zip(lines, fixed, strict=True) if not f], width)
    if not gutters:
        return lines, False
    split = [
        [(-1, line)] if f else _split_line(line, gutters)
        for line, f in zip(lines, fixed, strict=True)
    ]
    pieces = [p for parts in split for p in parts if p[0] >= 0]
    by_column: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for column, piece in pieces:
        by_column[column].append(piece)
    if len(by_column) != len(gutters) + 1:
        return lines, False
    lengths = [statistics.mean(len(p["text"]) for p in ps) for ps in by_column.values()]
    spans = [max(p["x1"] for p in ps) - min(p["x0"] for p in ps) for ps in by_column.values()]
    if min(lengths) < COLUMN_MIN_CHARS or max(spans) > COLUMN_MAX_RATIO * min(spans):
        return lines, False
    ordered: list[dict[str, Any]] = []
    band: list[tuple[int, dict[str, Any]]] = []

    def flush() -> None:
        ordered.extend(p for _, p in sorted(band, key=lambda cp: (cp[0], cp[1]["top"])))
        band.clear()

    for parts in split:
        if parts[0][0] < 0:
            flush()
            ordered.append(parts[0][1])
        else:
            band.extend(parts)
    flush()
    return ordered, True


# --- OCR -------------------------------------------------------------------------------


def _tesseract_ready(path: LakePath, pages: list[int], settings: OcrSettings) -> str:
    """The Tesseract executable, after checking it and its language data are installed."""
    need = f"page(s) {', '.join(map(str, pages))} are scanned (no usable text layer) and need OCR"
    exe = shutil.which(settings.command)
    if exe is None:
        raise PdfError(
            f"{path}: {need}, but Tesseract is missing ('{settings.command}' is not on PATH); "
            "install tesseract-ocr with tesseract-ocr-por and tesseract-ocr-eng"
        )
    try:
        listed = subprocess.run(
            [exe, "--list-langs"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise PdfError(f"{path}: {need}, but Tesseract ({exe}) does not run: {exc}") from exc
    have = {
        ln.strip()
        for ln in (listed.stdout + "\n" + listed.stderr).splitlines()
        if ln.strip() and " " not in ln.strip()
    }
    missing = [lang for lang in settings.languages.split("+") if lang and lang not in have]
    if missing:
        raise PdfError(
            f"{path}: {need}, but Tesseract is missing the language data for "
            f"{'+'.join(missing)} (installed: {', '.join(sorted(have)) or 'none'}); install "
            + ", ".join(f"tesseract-ocr-{m}" for m in missing)
        )
    return exe


def _bbox(title: str) -> tuple[float, float, float, float] | None:
    match = re.search(r"bbox (\d+) (\d+) (\d+) (\d+)", title)
    if match is None:
        return None
    x0, top, x1, bottom = (float(v) for v in match.groups())
    return x0, top, x1, bottom


def _title_value(title: str, key: str) -> float | None:
    match = re.search(rf"{key} ([\d.]+)", title)
    return float(match.group(1)) if match else None


def ocr_lines(hocr: str, dpi: int, min_confidence: int = 20) -> list[Line]:
    """Text lines from Tesseract's hOCR, in its reading order, placed in PDF points.

    A line's size is Tesseract's estimate of its text height (`x_size`) in whole points, so
    headings set larger than the body still stand out; OCR knows no bold.
    """
    scale = 72.0 / dpi
    root = ET.fromstring(hocr)
    lines: list[Line] = []
    for element in root.iter():
        classes = (element.get("class") or "").split()
        if not {"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"} & set(classes):
            continue
        words = []
        for word in element.iter():
            if "ocrx_word" not in (word.get("class") or ""):
                continue
            text = "".join(word.itertext()).strip()
            confidence = _title_value(word.get("title") or "", "x_wconf")
            if text and (confidence is None or confidence >= min_confidence):
                words.append(text)
        box = _bbox(element.get("title") or "")
        if not words or box is None:
            continue
        height = _title_value(element.get("title") or "", "x_size") or (box[3] - box[1])
        lines.append(
            Line(
                text=" ".join(words),
                x0=box[0] * scale,
                top=box[1] * scale,
                bottom=box[3] * scale,
                size=float(round(height * scale)),
                bold=False,
            )
        )
    return lines


def _image_cover(page: Any) -> float:
    """Share of the page covered by images (overlaps counted twice, capped at 1)."""
    area = float(page.width * page.height) or 1.0
    covered = 0.0
    for image in page.images:
        width = min(image["x1"], page.width) - max(image["x0"], 0)
        height = min(image["bottom"], page.height) - max(image["top"], 0)
        covered += max(0.0, width) * max(0.0, height)
    return min(1.0, covered / area)


def _render(page: Any, dpi: int, folder: Path, number: int) -> Path:
    image = page.to_image(resolution=dpi).original.convert("L")
    target = folder / f"page-{number:05d}.png"
    image.save(target, dpi=(dpi, dpi))
    return target


def _tesseract(exe: str, image: Path, settings: OcrSettings, path: LakePath, number: int) -> str:
    env = dict(os.environ)
    env.setdefault("OMP_THREAD_LIMIT", "1")  # one thread a page: several pages at once
    command = [exe, str(image), "stdout", "-l", settings.languages, "--dpi", str(settings.dpi)]
    try:
        done = subprocess.run(
            [*command, "hocr"],
            capture_output=True,
            text=True,
            env=env,
            timeout=settings.timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise PdfError(f"{path}: OCR of page {number} failed ({exc})") from exc
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise PdfError(f"{path}: OCR of page {number} failed (Tesseract: {reason[0]})")
    return done.stdout


def _ocr(
    path: LakePath, exe: str, images: dict[int, Path], settings: OcrSettings
) -> dict[int, list[Line]]:
    """OCR rendered pages with Tesseract, a few at a time; lines per page number."""
    workers = settings.workers or min(4, os.cpu_count() or 1)

    def run(number: int) -> tuple[int, list[Line]]:
        hocr = _tesseract(exe, images[number], settings, path, number)
        try:
            return number, ocr_lines(hocr, settings.dpi, settings.min_confidence)
        except ET.ParseError as exc:
            raise PdfError(f"{path}: OCR of page {number} gave unreadable output ({exc})") from exc

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return dict(pool.map(run, sorted(images)))


# --- running lines and offsets -----------------------------------------------------------


def _margin_key(text: str) -> str:
    """A margin line with its numbers blanked and leading or trailing ones dropped, so
    `47700 Federal Register` (even pages) and `Federal Register 47701` (odd) are one."""
    return re.sub(r"\d+", "#", text.lower()).strip(" #")


def _drop_running_lines(pages: list[Page]) -> int:
    """Remove page numbers, and lines repeated in the margins of at least half the pages."""
    counts: Counter[str] = Counter()
    for page in pages:
        margin = page.lines[:MARGIN_LINES] + page.lines[-MARGIN_LINES:]
        counts.update({_margin_key(line.text) for line in margin})
    threshold = max(2, (len(pages) + 1) // 2)
    # a line of numbers alone (`2010 54,876 38,716`, a row of an unruled table) is data
    # that only looks alike on every page once its numbers are blanked: never running
    running = {k for k, n in counts.items() if n >= threshold and re.search(r"[^\W\d_]", k)}
    dropped = 0
    for page in pages:
        n = len(page.lines)
        keep: list[Line] = []
        for i, line in enumerate(page.lines):
            in_margin = i < MARGIN_LINES or i >= n - MARGIN_LINES
            if in_margin and line.table < 0:
                if PAGE_NUMBER.match(line.text) or _margin_key(line.text) in running:
                    dropped += 1
                    continue
            keep.append(line)
        page.lines = keep
    return dropped


def _assign_offsets(pages: list[Page]) -> DocText:
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for page in pages:
        page.char_start = offset
        starts.append(offset)
        for line in page.lines:
            line.char_start = offset
            line.char_end = offset + len(line.text)
            offset = line.char_end + 1
            parts.append(line.text)
        for table in page.tables:
            inside = [ln for ln in page.lines if ln.table == table.index]
            if inside:
                table.char_start = min(ln.char_start for ln in inside)
                table.char_end = max(ln.char_end for ln in inside)
            spans: list[tuple[int, int]] = []
            for bbox in table.row_bboxes:
                row_lines = [
                    ln for ln in inside if bbox[1] - 1 <= (ln.top + ln.bottom) / 2 <= bbox[3] + 1
                ]
                if row_lines:
                    spans.append(
                        (
                            min(ln.char_start for ln in row_lines),
                            max(ln.char_end for ln in row_lines),
                        )
                    )
                else:
                    spans.append((-1, -1))
            mixed = any(
                ln.table < 0 and table.char_start < ln.char_start < table.char_end
                for ln in page.lines
            )
            # text printed among its lines (a chart around a legend box): its rows cannot be
            # told from that text, so it is not read as rows (it is indexed as its lines)
            table.row_spans = [(-1, -1)] * len(spans) if mixed else spans
    text = "\n".join(parts)
    return DocText(text=text, page_starts=starts)


# --- opening and extracting --------------------------------------------------------------


def _open(path: LakePath) -> Any:
    """Open a PDF with pdfplumber (an object-store file is read into memory first),
    turning its many failure types into a PdfError."""
    try:
        return pdfplumber.open(path if isinstance(path, Path) else io.BytesIO(path.read_bytes()))
    except Exception as exc:  # pdfminer raises many unrelated types
        name = " ".join(type(e).__name__ for e in (exc, *exc.args) if isinstance(e, Exception))
        if "Password" in name or "Encrypt" in name:
            raise PdfError(f"{path}: the PDF is encrypted (password protected)") from exc
        raise PdfError(f"{path}: malformed PDF, it cannot be opened ({name}: {exc})") from exc


def _page_count(path: LakePath, pdf: Any, max_pages: int) -> int:
    try:
        n_pages = len(pdf.pages)
    except Exception as exc:
        raise PdfError(f"{path}: malformed PDF, its page tree cannot be read ({exc})") from exc
    if n_pages == 0:
        raise PdfError(f"{path}: the PDF has zero pages")
    if n_pages > max_pages:
        raise PdfError(f"{path}: {n_pages} pages, over the limit of {max_pages} pages")
    return n_pages


def count_pages(path: LakePath, max_pages: int = 2000, max_bytes: int = 200 * 1024 * 1024) -> int:
    """Check a PDF opens within the limits and return its page count (no text read)."""
    check_pdf_file(path, max_bytes)
    with _open(path) as pdf:
        return _page_count(path, pdf, max_pages)


def _read_page(path: LakePath, pdf: Any, raw_page: Any, number: int) -> Page:
    """One page with a text layer (or none): upright, deduplicated, lines and tables."""
    try:
        turned, angle = _upright(pdf, raw_page)
        page = turned.dedupe_chars() if _has_duplicate_chars(turned) else turned
        page = _readable(path, number, page)
        tables = _find_tables(page)
        page, sideways = _without_sideways(page, tables)
        raw_lines = page.extract_text_lines(return_chars=True)
        boxes = [t.bbox for t in tables]
        fixed = [any(_inside_raw(r, b) for b in boxes) for r in raw_lines]
        raw_lines, columns = _column_order(raw_lines, fixed, float(page.width))
    except PdfError:
        raise
    except Exception as exc:
        raise PdfError(f"{path}: page {number} cannot be read ({exc})") from exc
    lines: list[Line] = []
    for raw in raw_lines:
        line = _line_from(raw)
        if line is None:
            continue
        for table in tables:  # a line reaching into a table is its line (a stub outside)
            if line.table < 0 and _across(raw, table.bbox):
                line.table = table.index
        lines.append(line)
    has_text = any(c["text"].strip() for c in page.chars)
    return Page(
        number,
        lines,
        tables,
        columns=columns,
        has_text_layer=has_text or sideways > 0,
        rotation=angle,
        width=float(page.width),
        height=float(page.height),
        sideways_chars=sideways,
    )


def extract(
    path: LakePath,
    max_pages: int = 2000,
    max_bytes: int = 200 * 1024 * 1024,
    ocr: OcrSettings | None = None,
) -> Extraction:
    """Read every page of a PDF into lines and tables with offsets into the document text.

    Pages without a text layer that show something are read by OCR (`ocr`, Tesseract with
    Portuguese and English by default); a missing Tesseract or language fails the whole
    version with a message saying so, never an empty document.
    """
    settings = ocr or OcrSettings()
    check_pdf_file(path, max_bytes)
    stats: Counter[str] = Counter()
    with _open(path) as pdf, tempfile.TemporaryDirectory(prefix="trecho-ocr-") as tmp:
        _page_count(path, pdf, max_pages)
        pages: list[Page] = []
        scanned: list[int] = []  # pages without a text layer that show something
        thin: list[int] = []  # pages that are an image with a few characters of text on it
        for number, raw_page in enumerate(pdf.pages, start=1):
            page = _read_page(path, pdf, raw_page, number)
            pages.append(page)
            stats["rotated_pages"] += page.rotation != 0
            stats["sideways_chars_dropped"] += page.sideways_chars
            if not page.has_text_layer:
                if raw_page.images or raw_page.curves or raw_page.rects or raw_page.lines:
                    scanned.append(number)
            elif sum(len(ln.text) for ln in page.lines) < THIN_TEXT_CHARS:
                if _image_cover(raw_page) >= SCAN_COVER:
                    thin.append(number)  # a scan under a stamp or a page number
        if scanned and not settings.enabled:
            if not any(p.has_text_layer for p in pages):
                raise PdfError(
                    f"{path}: no page has a text layer (a scanned document?) and OCR is not enabled"
                )
            raise PdfError(
                f"{path}: page(s) {', '.join(map(str, scanned))} have no text layer and need "
                "OCR, and OCR is not enabled"
            )
        to_read = sorted(scanned + thin) if settings.enabled else []
        images: dict[int, Path] = {}
        if to_read:
            exe = _tesseract_ready(path, to_read, settings)
            for number in to_read:
                try:
                    images[number] = _render(pdf.pages[number - 1], settings.dpi, Path(tmp), number)
                except Exception as exc:
                    raise PdfError(f"{path}: page {number} cannot be rendered ({exc})") from exc
            for number, lines in _ocr(path, exe, images, settings).items():
                page = pages[number - 1]
                page.lines, page.tables, page.ocr = lines, [], True
    stats["ocr_pages"] = len(images)
    if not any(line.text.strip() for p in pages for line in p.lines):
        if any(p.has_text_layer for p in pages):
            raise PdfError(f"{path}: no text found: its text layer holds no readable line")
        how = "nor by OCR" if images else "and no page shows anything to OCR"
        raise PdfError(f"{path}: no text found: no page has a text layer, {how}")
    stats["running_lines_dropped"] = _drop_running_lines(pages)
    stats["hyphenations_joined"] = _join_hyphenated(pages)
    stats["tables_continued"] = _mark_continuations(pages)
    doc = _assign_offsets(pages)
    return Extraction(pages=pages, doc=doc, stats=dict(stats))
