"""Whether a generated PDF holds what its truth says: each truth cell's text read by
pdfplumber inside the cell's box, each table box around its cells (the generator's own
test, and `synth_tables.py check`)."""

from __future__ import annotations

from pathlib import Path

from synth.table_truth import norm

from .truth import SynthTable

SLACK = 1.5  # points a glyph may stick out of its box (superscripts, rounding)


def problems(pdf: Path, tables: list[SynthTable]) -> list[str]:
    """What in the truth the PDF does not bear out (empty: all of it holds)."""
    import pdfplumber

    out: list[str] = []
    with pdfplumber.open(pdf) as doc:
        for table in tables:
            page = doc.pages[table.page - 1]
            height = float(page.height)
            chars = page.chars
            if table.box is None:
                out.append(f"{table.name}: no table box")
                continue
            for cell in table.cells:
                box = getattr(cell, "box", None)
                if not cell.text.strip():
                    continue
                if box is None:
                    out.append(f"{table.name}: {cell.text!r} has no box")
                    continue
                x0, y0, x1, y1 = box
                top, bottom = height - y1, height - y0
                inside = [
                    c
                    for c in chars
                    if c["x0"] >= x0 - SLACK
                    and c["x1"] <= x1 + SLACK
                    and c["top"] >= top - SLACK
                    and c["bottom"] <= bottom + SLACK
                ]
                # footnote marks (smaller, raised) are no part of the truth's text
                if all(c["upright"] for c in inside):  # (turned glyphs' sizes vary)
                    big = max((c["size"] for c in inside), default=0.0)
                    inside = [c for c in inside if c["size"] >= 0.8 * big]
                text = norm("".join(c["text"] for c in sorted(inside, key=_reading)))
                if norm(cell.text) not in text:
                    out.append(
                        f"{table.name} p{table.page}: {cell.text!r} not in its box ({text[:60]!r})"
                    )
                tx0, ty0, tx1, ty1 = table.box
                if not (
                    x0 >= tx0 - SLACK
                    and x1 <= tx1 + SLACK
                    and y0 >= ty0 - SLACK
                    and y1 <= ty1 + SLACK
                ):
                    out.append(f"{table.name}: {cell.text!r} outside the table box")
    return out


def _reading(c: dict) -> tuple[float, float]:
    """Characters in reading order: lines top down (upright), or bottom up (turned)."""
    if c.get("upright", True):
        return (round(c["top"] / 2), c["x0"])
    return (round(c["x0"] / 2), -c["top"])
