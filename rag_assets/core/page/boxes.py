"""Boxes on a page, in PDF points with a top-left origin (as pdfplumber gives them), and
the one set of measures every box test uses: the table readers', the region joining's,
the layout model's and the benches'."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Box = tuple[float, float, float, float]  # x0, top, x1, bottom


def area(box: Box) -> float:
    """A box's area (0 for a box turned inside out)."""
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def intersection(a: Box, b: Box) -> float:
    """The area two boxes share."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def overlaps(a: Box, b: Box) -> bool:
    """Whether two boxes share any area at all."""
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def box_iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes: how a found region is matched to a truth one
    (IoU >= 0.5 is a match in the region figures)."""
    inter = intersection(a, b)
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def covered(box: Box, others: Iterable[Box], share: float) -> bool:
    """Whether another box holds `share` of this box's area, or this box that share of the
    other's: the same table, or a part of it, so a proposal there adds nothing."""
    for other in others:
        small = min(area(box), area(other))
        if small > 0 and intersection(box, other) >= share * small:
            return True
    return False


def centred_in(box: Box, thing: Mapping[str, Any]) -> bool:
    """Whether a word's (or rectangle's) middle lies in the box: what counts as printed
    inside a table or a proposal, so a word overhanging its edge goes where most of it is."""
    x = (thing["x0"] + thing["x1"]) / 2
    y = (thing["top"] + thing["bottom"]) / 2
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]
