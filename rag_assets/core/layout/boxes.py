"""Boxes on a page, in PDF points with a top-left origin (as pdfplumber gives them): how
much two boxes share, the one measure the finder's joining and the benches both use."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Box = tuple[float, float, float, float]  # x0, top, x1, bottom


def _intersection(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _area(box: Box) -> float:
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def box_iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes: how a found region is matched to a truth one
    (IoU >= 0.5 is a match in the region figures)."""
    inter = _intersection(a, b)
    union = _area(a) + _area(b) - inter
    return inter / union if union > 0 else 0.0


def covered(box: Box, others: Iterable[Box], share: float) -> bool:
    """Whether another box holds `share` of this box's area, or this box that share of the
    other's: the same table, or a part of it, so a proposal there adds nothing."""
    for other in others:
        small = min(_area(box), _area(other))
        if small > 0 and _intersection(box, other) >= share * small:
            return True
    return False


def centred_in(box: Box, thing: Mapping[str, Any]) -> bool:
    """Whether a word's (or rectangle's) middle lies in the box: what counts as printed
    inside a table or a proposal, so a word overhanging its edge goes where most of it is."""
    x = (thing["x0"] + thing["x1"]) / 2
    y = (thing["top"] + thing["bottom"]) / 2
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]
