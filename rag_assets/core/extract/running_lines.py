"""Running headers, footers and page numbers dropped."""

from __future__ import annotations

import re
from collections import Counter

from rag_assets.core.extract.model import Line, Page

PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:p[áa]gina|page|p[áa]g\.?|p\.)?\s*\d{1,5}(?:\s*(?:de|of|/)\s*\d{1,5})?[-–—\s]*$",
    re.IGNORECASE,
)
MARGIN_LINES = 2  # lines at the top and at the bottom of a page checked for repetition


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
