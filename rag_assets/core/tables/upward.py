"""Cells whose text runs upward (a narrow column's heading turned a quarter), read bottom
to top: pdfplumber strings their characters top to bottom (`sretov` for `voters`)."""

from __future__ import annotations

from typing import Any

from rag_assets.core.page import Box, Word, is_upright, runs_upward
from rag_assets.core.tables.settings import TableSettings


def holds(box: Box, word: Word, settings: TableSettings) -> bool:
    """Whether a word is printed inside a box."""
    return (
        box[0] - settings.slack <= word["x0"]
        and word["x1"] <= box[2] + settings.slack
        and box[1] - settings.slack <= word["top"]
        and word["bottom"] <= box[3] + settings.slack
    )


def read_upward(
    page: Any,
    found: Any,
    raw_rows: list[list[str | None]],
    turned: list[Word],
    settings: TableSettings,
) -> None:
    """Cells of a ruled table whose text runs upward read bottom to top, column by
    column, in place; `turned` are the page's characters not upright, read once per
    page."""
    turned = [
        c
        for c in turned
        if holds(found.bbox, c, settings) and not is_upright(c, settings.upright_tilt)
    ]
    if not runs_upward(turned, settings.upright_tilt):
        return
    chars = [c for c in page.chars if holds(found.bbox, c, settings)]
    for row, raw in zip(found.rows, raw_rows, strict=False):
        for j, box in enumerate(row.cells):
            if (
                box is None
                or j >= len(raw)
                or not runs_upward(
                    [c for c in turned if holds(box, c, settings)], settings.upright_tilt
                )
            ):
                continue
            inside = [c for c in chars if holds(box, c, settings)]
            columns: list[list[Word]] = []
            for c in sorted(inside, key=lambda c: c["x0"]):
                across = c["x0"] - columns[-1][-1]["x0"] if columns else 0.0
                if columns and across <= settings.upward_column_share * (c["x1"] - c["x0"]):
                    columns[-1].append(c)
                else:
                    columns.append([c])
            lines = [
                _upward_text(sorted(col, key=lambda c: -c["top"]), settings) for col in columns
            ]
            raw[j] = "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _upward_text(chars: list[Word], settings: TableSettings) -> str:
    """One column of upward characters, bottom first, as text: a gap between two glyphs
    wider than a quarter of their size is a space (a PDF need not draw spaces)."""
    out: list[str] = []
    for before, char in zip([None, *chars], chars, strict=False):
        gap = before["top"] - char["bottom"] if before is not None else 0.0
        if (
            gap > settings.upward_space_share * float(char.get("size") or 10)
            and out
            and out[-1] != " "
        ):
            out.append(" ")
        out.append(char["text"])
    return "".join(out)
