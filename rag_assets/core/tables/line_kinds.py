"""What a printed line is to the aligned reader: a line of a table body (`is_data`), a
row of a table the layout model proposed (`is_row`), a line that can head the columns
(`is_header`), the columns' numbers and the formulas citing them; and whether a run of
worded lines is prose set in columns (`filled`)."""

from __future__ import annotations

import re
import statistics

from rag_assets.core.tables.cells import CellKind, classify, header_label, is_period, is_value
from rag_assets.core.tables.header_block import column_numbers
from rag_assets.core.tables.model import Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import segments, split_tight
from rag_assets.core.tables.words import text as _text

REFERENCE = re.compile(r"^[\d\s()+=×/–-]*(?:to[\d\s()+=×/–-]*)*$")  # `(3 to 6)+14`
OPERATOR = re.compile(r"to|[+=×]")  # what makes a formula of column numbers
CAPTION = re.compile(r"(?i)^(?:table|tabela|tableau|figure|figura|chart|gr[aá]fico|quadro)\b")


def data_segments(line: list[Word], settings: TableSettings) -> list[list[Word]]:
    """A body line's segments, two numbers side by side always apart (tightly set
    columns: `14,111 16,635`; a space-grouped `1 234` is one number, a space apart)."""
    return split_tight(
        segments(line, settings), lambda a, b: is_value(a["text"]) and is_value(b["text"]), settings
    )


def numbering(line: list[Word], settings: TableSettings) -> bool:
    """A line that numbers the columns (`1 2= 3 4 ... 11`, statistical tables cite them
    in formulas): `min_numbered_columns` or more numbers counting up one by one, nothing
    else."""
    return column_numbers([w["text"] for w in line], settings)


def references(line: list[Word], settings: TableSettings) -> bool:
    """A line of formulas over some columns (`(3 to 6)+14`), printed under their numbers:
    each segment column numbers joined by `to`, `+`, `=` or `×` (a bare number, such as a
    page number, is no formula)."""
    texts = [_text(s) for s in segments(line, settings)]
    return all(
        any(c.isdigit() for c in t) and REFERENCE.match(t) and OPERATOR.search(t) for t in texts
    )


def is_data(line: list[Word], settings: TableSettings) -> bool:
    """A line of a table body: two or more segments, and a value after the first (a line
    numbering the columns is the header's)."""
    parts = data_segments(line, settings)
    if len(parts) < 2 or numbering(line, settings):
        return False
    values = [s for s in parts[1:] if all(is_value(w["text"]) for w in s)]
    if all(is_period(_text(s)) for s in values):
        return False  # years over columns: a header line
    if all(classify(_text(s)) is CellKind.UNIT for s in parts):
        return False  # a unit over each column (`$` of `$ / millions` wrapped): headings
    return len(values) >= max(1, int((len(parts) - 1) * settings.data_values))


def is_header(line: list[Word], edges: list[float], settings: TableSettings) -> bool:
    """A line that can head the columns: labels only, not a caption or a sentence; the
    columns' numbers and the formulas citing them; or dates each over a run of columns
    (`spanning_dates`)."""
    if (
        numbering(line, settings)
        or references(line, settings)
        or spanning_dates(line, edges, settings)
    ):
        return True
    text = _text(line)
    parts = split_tight(segments(line, settings), lambda a, b: True, settings)
    labels = sum(1 for p in parts if header_label(_text(p)))  # `1 to 4 employees` is one label
    if (
        CAPTION.match(text)
        or is_data(line, settings)
        or labels < settings.header_label_share * len(parts)
    ):
        return False
    widest = max(s[-1]["x1"] - s[0]["x0"] for s in parts)  # headings apart wider than a space
    return widest <= settings.header_line_width * (edges[-1] - edges[0])


def spanning_dates(line: list[Word], edges: list[float], settings: TableSettings) -> bool:
    """A line of dates each centred over a run of body columns (`12/31/2009` over its
    `$000's | %` pair): a heading level over the columns under it, not a line of values.
    Two or more dates, each centred (within `centred` of a column's width) over a run of
    two or more value columns starting under its left end, or on an inner column edge."""
    parts = segments(line, settings)
    if len(parts) < 2 or len(edges) < 4:
        return False
    pitch = (edges[-1] - edges[1]) / max(1, len(edges) - 2)
    for part in parts:
        if classify(_text(part)) is not CellKind.DATE:
            return False
        x0, x1 = part[0]["x0"], part[-1]["x1"]
        first = max(1, next((k for k in range(len(edges) - 1) if x0 < edges[k + 1]), 1))
        # centred over the run's edges, or on an inner edge of it (columns of figures set
        # flush right print their ink right of the middle of their cells)
        middles = [(edges[first] + edges[b]) / 2 for b in range(first + 2, len(edges))]
        middles += edges[first + 1 : -1]
        if not any(abs((x0 + x1) / 2 - m) <= settings.centred * pitch for m in middles):
            return False
    return True


def is_row(line: list[Word], settings: TableSettings) -> bool:
    """A line of a table the layout model proposed: a data line, or two or more segments
    of a few words each (a table of words: names, places, states). Columns of prose run
    longer; the model calls a page of prose in columns a table too."""
    if is_data(line, settings):
        return True
    parts = data_segments(line, settings)
    if len(parts) < 2 or numbering(line, settings):
        return False
    return statistics.median(len(part) for part in parts) <= settings.proposed_cell_words


def filled(
    lines: list[list[Word]], spans: list[tuple[float, float]], settings: TableSettings
) -> bool:
    """Whether a run of mostly worded lines (not values) fills its columns as prose
    does: its segments of several words are long (more than `proposed_cell_words`,
    median) and reach across nearly their whole column (`prose_fill`, median); a table's
    cells of words are short, or ragged."""
    values = sum(1 for line in lines if is_data(line, settings))
    if values >= settings.prose_data_lines * len(lines):
        return False
    several = [p for line in lines for p in data_segments(line, settings) if len(p) > 1]
    if not several or statistics.median(len(p) for p in several) <= settings.proposed_cell_words:
        return False
    fills = []
    for part in several:  # a one-word cell (a code, a date) may fill a narrow column
        middle = (part[0]["x0"] + part[-1]["x1"]) / 2
        span = next((s for s in spans if s[0] - 1 <= middle <= s[1] + 1), None)
        if span is not None and span[1] > span[0]:
            fills.append((part[-1]["x1"] - part[0]["x0"]) / (span[1] - span[0]))
    return bool(fills) and statistics.median(fills) >= settings.prose_fill
