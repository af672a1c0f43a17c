"""Words hyphenated across lines joined, and compounds that keep their hyphen told apart."""

from __future__ import annotations

import re

from rag_assets.core.extract.model import Line, Page
from rag_assets.core.hyphens import HYPHENS, keep_hyphen


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", text.lower())


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
    # every word the document prints, its tables' too (`1 work-hour` in a table says how
    # `work-` / `hour` is spelled in the prose)
    vocab = set(_words("\n".join(line.text for page in pages for line in page.lines)))
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
