"""Pages rendered to pixels with a bounded cost: a resolution, scaled down for huge pages."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# The most pixels one rendered page may have: A2 at 144 dpi (about 16 million), so that a
# hostile page (a 14,400-point media box, a large /UserUnit) renders coarser instead of
# taking gigabytes. Any rendering of pages for reading (layout, OCR) is bounded by it.
MAX_RENDER_PIXELS = 16_000_000


def render_scale(
    width_pt: float, height_pt: float, dpi: float, max_pixels: int = MAX_RENDER_PIXELS
) -> float:
    """Pixels per PDF point for a page rendered at `dpi`, lowered so that the image holds
    at most `max_pixels` pixels."""
    scale = dpi / 72.0
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    if area * scale * scale > max_pixels:
        scale = math.sqrt(max_pixels / area)
    return scale


def render_bgr(page: Any, dpi: float, max_pixels: int = MAX_RENDER_PIXELS) -> np.ndarray:
    """A pypdfium2 page as an H x W x 3 uint8 array in blue-green-red order (pdfium's own
    byte order), on white, at `dpi` within `max_pixels`."""
    width, height = page.get_size()
    scale = render_scale(width, height, dpi, max_pixels)
    bitmap = page.render(scale=scale, fill_color=(255, 255, 255, 255), may_draw_forms=True)
    try:
        array = bitmap.to_numpy()
        if array.ndim == 2:  # a grey bitmap
            array = np.repeat(array[:, :, None], 3, axis=2)
        return np.ascontiguousarray(array[:, :, :3])
    finally:
        bitmap.close()
