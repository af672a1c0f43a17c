"""Pages whose text runs sideways turned upright, and sideways margin stamps dropped."""

from __future__ import annotations

import copy
import math
from collections import Counter
from typing import Any

from pdfplumber.page import Page as PlumberPage

from rag_assets.core.extract.model import PageTable
from rag_assets.core.page import is_upright, runs_upward


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


def _without_sideways(page: Any, tables: list[PageTable]) -> tuple[Any, int]:
    """The page without text running sideways outside its tables, and how many characters
    that dropped: once the page is turned to its main direction, what still runs sideways
    is a margin stamp or a watermark (`jbell on DSK...PROD with RULES`), not body text."""

    def in_table(c: dict[str, Any]) -> bool:
        return any(
            t.bbox[0] <= c["x0"] and c["x1"] <= t.bbox[2] + 1 and t.bbox[1] <= c["top"] <= t.bbox[3]
            for t in tables
        )

    sideways = [c for c in page.chars if not is_upright(c) and not in_table(c)]
    if not sideways:
        return page, 0
    drop = {(c["x0"], c["top"]) for c in sideways}
    kept = page.filter(lambda o: o.get("object_type") != "char" or (o["x0"], o["top"]) not in drop)
    return kept, sum(1 for c in sideways if c["text"].strip())


def sideways_in_place(raw_lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Lines of sideways text (a table's turned headings) put where they are printed,
    among the upright lines by height, and read bottom to top where they run upward:
    on a page with such lines pdfplumber lists lines out of order, the sideways ones with
    their text reversed (`sretov`)."""
    upright: list[dict[str, Any]] = []
    sideways: list[dict[str, Any]] = []
    for raw in raw_lines:
        chars = [c for c in raw.get("chars", []) if c.get("text", "").strip()]
        turned = sum(1 for c in chars if not c.get("upright", True) and not is_upright(c))
        (sideways if chars and 2 * turned > len(chars) else upright).append(raw)
    if not sideways:
        return raw_lines
    out = sorted(upright, key=lambda r: r["top"])
    kept = {id(u) for u in upright}
    for raw in sorted(sideways, key=lambda r: r["top"]):
        if runs_upward(raw.get("chars", [])):
            raw = {**raw, "text": raw["text"][::-1]}
        at = next(
            (i for i, u in enumerate(out) if id(u) in kept and u["top"] > raw["top"]), len(out)
        )
        out.insert(at, raw)
    return out
