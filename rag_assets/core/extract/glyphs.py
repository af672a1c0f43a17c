"""Glyphs drawn twice, phantom spaces, text drawn outside the page, and footnote marks
printed small and raised."""

from __future__ import annotations

import bisect
import statistics
from collections import defaultdict
from typing import Any

from rag_assets.core.extract.model import PdfError
from rag_assets.core.lake import LakePath
from rag_assets.core.page import SUPERSCRIPTS, is_upright

SUPERSCRIPT_DIGITS = str.maketrans("0123456789", SUPERSCRIPTS)


def _has_duplicate_chars(page: Any) -> bool:
    """Whether some glyph is drawn twice at the same place (a cheap test before deduping)."""
    seen = {(c["text"], round(c["x0"]), round(c["top"])) for c in page.chars}
    return len(seen) < len(page.chars)


def _phantom_spaces(chars: list[dict[str, Any]]) -> set[tuple[float, float]]:
    """Space characters drawn over visible glyphs (some generators interleave them), which
    would split `06/30/2015` into `0 6 / 3 0 / 2 0 15`; returned by (x0, top)."""
    rows: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for c in chars:
        if c["text"].strip() and is_upright(c):
            rows[round(c["top"])].append((c["x0"], c["x1"]))
    starts: dict[int, list[float]] = {}
    for key, spans in rows.items():
        spans.sort()
        starts[key] = [x0 for x0, _ in spans]
    phantom: set[tuple[float, float]] = set()
    for c in chars:
        if c["text"].strip() or c["x1"] <= c["x0"] or not is_upright(c):
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


def _mark_superscripts(page: Any) -> int:
    """Digits printed small and raised against the character before them (a footnote
    mark: `1,234` then a raised `1`) become superscript digits (`1,234¹`), so that a mark
    never reads as one more digit of a number. Returns how many were marked."""
    chars = [c for c in page.chars if c["text"].strip() and c.get("upright", True)]
    if not chars:
        return 0
    body = statistics.median(c["size"] for c in chars)
    ends: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in chars:
        ends[round(c["x1"])].append(c)
    marked = 0
    for c in sorted(chars, key=lambda c: c["x0"]):
        if not c["text"].isdigit() or c["size"] > 0.8 * body:
            continue
        x = round(c["x0"])
        before = [
            p
            for p in ends.get(x - 1, []) + ends.get(x, []) + ends.get(x + 1, [])
            if abs(p["x1"] - c["x0"]) <= 1.0 and p["top"] < c["bottom"] and c["top"] < p["bottom"]
        ]
        for p in before:
            raised = c["bottom"] < p["bottom"] - 0.15 * p["size"]
            mark = p["text"] in SUPERSCRIPTS and abs(p["size"] - c["size"]) < 0.1
            if mark or (p["size"] >= 1.25 * c["size"] and raised):
                c["text"] = c["text"].translate(SUPERSCRIPT_DIGITS)
                marked += 1
                break
    return marked
