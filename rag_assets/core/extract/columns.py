"""Reading order on pages set in two or three columns."""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from typing import Any

from pdfplumber.utils import extract_text

from rag_assets.core.page import Box
from rag_assets.core.tables import TableSettings, open_runs


def _gaps(chars: list[dict[str, Any]], min_gap: float) -> list[tuple[float, float]]:
    """Horizontal gaps of at least `min_gap` between consecutive characters of a line."""
    ink = sorted((c for c in chars if c["text"].strip()), key=lambda c: c["x0"])
    pairs = zip(ink, ink[1:], strict=False)
    return [(a["x1"], b["x0"]) for a, b in pairs if b["x0"] - a["x1"] >= min_gap]


def _gutters(lines: list[dict[str, Any]], width: float, settings: TableSettings) -> list[float]:
    """x of the gutters between text columns: where many lines have a wide gap and few
    lines have ink (a full-width title may cross a gutter, a body line does not); the
    `reading_*` settings."""
    gaps: list[tuple[int, int]] = []
    inks: list[tuple[int, int]] = []
    for line in lines:
        size = statistics.median([c["size"] for c in line["chars"]] or [10.0])
        wide = max(settings.reading_gap, size * settings.reading_gap_em)
        gaps += [(math.ceil(g0), math.floor(g1) + 1) for g0, g1 in _gaps(line["chars"], wide)]
        inks += [(int(c["x0"]), math.ceil(c["x1"])) for c in line["chars"] if c["text"].strip()]
    lines_open, crossing = settings.reading_column_lines, settings.reading_column_crossing
    runs: list[tuple[int, int]] = []
    for a, b in open_runs(gaps, inks, int(width) + 2, lines_open, crossing):
        if runs and a - runs[-1][1] <= settings.reading_gutter_join:
            runs[-1] = (runs[-1][0], b)  # slivers of one gutter
        else:
            runs.append((a, b))
    return [(a + b) / 2 for a, b in runs]


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


def split_line(
    line: dict[str, Any], gutters: list[float], settings: TableSettings
) -> list[tuple[int, dict[str, Any]]]:
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
        text = texts[column] if texts else extract_text(part, x_tolerance=settings.word_x_tolerance)
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
    lines: list[dict[str, Any]], tables: list[Box | None], width: float, settings: TableSettings
) -> tuple[list[dict[str, Any]], bool]:
    """Text lines in reading order on a page set in columns: down each column, then the
    next, within each band between full-width lines (titles, headers) and the lines of a
    table across the columns (`tables`: the box of the table each line is in, or None).
    A table inside one column is read in its column, its rows cut from the other
    column's lines printed beside them. Returns the lines unchanged on a single-column
    page, or when the "columns" hold only short pieces (an unruled table or a column of
    line numbers is read row by row, as printed)."""
    free = [ln for ln, t in zip(lines, tables, strict=True) if t is None]
    gutters = _gutters(free, width, settings)
    if not gutters:
        return lines, False

    def one_column(box: Box) -> bool:
        return all(box[2] <= g or box[0] >= g for g in gutters)

    split = [
        split_line(line, gutters, settings) if box is None or one_column(box) else [(-1, line)]
        for line, box in zip(lines, tables, strict=True)
    ]
    pieces = [p for parts in split for p in parts if p[0] >= 0]
    by_column: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for column, piece in pieces:
        by_column[column].append(piece)
    if len(by_column) != len(gutters) + 1:
        return lines, False
    lengths = [statistics.mean(len(p["text"]) for p in ps) for ps in by_column.values()]
    spans = [max(p["x1"] for p in ps) - min(p["x0"] for p in ps) for ps in by_column.values()]
    if min(lengths) < settings.reading_column_chars or max(
        spans
    ) > settings.reading_column_ratio * min(spans):
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
