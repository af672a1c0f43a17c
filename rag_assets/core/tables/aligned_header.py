"""The header of a table set by alignment (`aligned`): the first lines of a run that name
its columns (a header line of small numbers over values), the group rows just above the
run, the label lines above it up to the table's top rule, the columns' numbers under the
labels, and a heading wrapped over several lines read as one; then the header's grid
cells (`heading_tree.header_grid`)."""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.tables.header_block import label_over_values
from rag_assets.core.tables.header_lines import (
    column_of,
    header_segments,
    line_cells,
    split_at_edges,
)
from rag_assets.core.tables.heading_tree import header_grid
from rag_assets.core.tables.line_kinds import (
    is_data,
    is_header,
    numbering,
    references,
    spanning_dates,
)
from rag_assets.core.tables.model import Box, Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import bottom, height, line_gap, segments, top


def joined_rules(rules: list[Box], settings: TableSettings) -> list[Box]:
    """Horizontal rules with the pieces of one printed rule joined: segments at the same
    height that touch (a rule drawn as each cell's border) are one rule."""
    out: list[list[float]] = []
    for r in sorted(rules, key=lambda r: (round(r[1]), r[0])):
        last = out[-1] if out else None
        join = settings.rule_join
        if last is not None and abs(last[1] - r[1]) <= join and r[0] <= last[2] + join:
            last[2] = max(last[2], r[2])
        else:
            out.append(list(r))
    return [(r[0], r[1], r[2], r[3]) for r in out]


def rule_between(
    rules: list[Box], upper: float, lower: float, x0: float, x1: float, settings: TableSettings
) -> bool:
    """Whether a rule across the table (not a spanner's underline, shorter) lies between
    two heights (`rules` joined)."""
    slack = (1 - settings.full_rule) / 2 * (x1 - x0)
    return any(upper <= r[1] <= lower and r[0] <= x0 + slack and r[2] >= x1 - slack for r in rules)


def names_columns(
    line: list[Word], rest: list[list[Word]], edges: list[float], settings: TableSettings
) -> bool:
    """Whether a first line of a run names columns rather than holding values: a label
    (`K`, `grades`) in a column where the data lines below print values, as a header line
    of small numbers (`Year K 1 2 3`) has (`header_block.label_over_values`, asked of the
    line's cells); or a line of dates each centred over a run of columns
    (`line_kinds.spanning_dates`) over such a line (a period over each `$000's | %` pair,
    both lines read as values where no line of labels is printed above them)."""
    if spanning_dates(line, edges, settings):
        return bool(rest) and names_columns(rest[0], rest[1:], edges, settings)
    below = [line_cells(other, edges) for other in rest if is_data(other, settings)]
    return label_over_values(line_cells(line, edges), below, settings)


def group_rows(
    above: list[list[Word]],
    first: list[Word],
    edges: list[float],
    rules: list[Box],
    settings: TableSettings,
) -> int:
    """How many of the lines just above a body's first line are its group rows without
    values (`Durable goods` over the industries indented under it): each one segment
    whose middle is in the stub column, a line pitch apart, no rule across the table between them
    and the body (under a header, a rule sets the body off)."""
    count, lower = 0, top(first)
    for line in reversed(above):
        if len(segments(line, settings)) != 1 or (line[0]["x0"] + line[-1]["x1"]) / 2 > edges[1]:
            break
        space = settings.group_space if count else 1.0  # above a group row: more
        if lower - bottom(line) > space * line_gap(height(line), settings):
            break
        if rule_between(rules, bottom(line), lower, edges[0], edges[-1], settings):
            break
        count, lower = count + 1, top(line)
    return count


def numbered_below(header: list[list[Word]], settings: TableSettings) -> list[list[Word]]:
    """The last lines of a header from its line of column numbers down (the numbers and
    the formulas under them), when label lines stand above: read apart from the labels,
    each cell under its column."""
    for i, line in enumerate(header):
        if numbering(line, settings) and i > 0:
            return header[i:]
    return []


def _one_column_pieces(
    line: list[Word],
    edges: list[float],
    settings: TableSettings,
    ink: Sequence[tuple[float, float]] = (),
) -> dict[int, list[Word]] | None:
    """A header line's headings by the body column each sits over, or None when one sits
    over several columns (a spanner) or two over one column."""
    middles = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    out: dict[int, list[Word]] = {}
    for piece in header_segments(line, edges, lowest=True, settings=settings, ink=ink):
        x0, x1 = piece[0]["x0"], piece[-1]["x1"]
        over = [j for j, m in enumerate(middles) if x0 <= m <= x1]
        if len(over) > 1:
            return None
        j = over[0] if over else column_of((x0 + x1) / 2, edges)
        if j in out:
            return None
        out[j] = piece
    return out


def _group_line(
    line: list[Word],
    cells: dict[int, list[Word]],
    lowest: dict[int, list[Word]],
    edges: list[float],
    settings: TableSettings,
) -> bool:
    """Whether a header line above a lowest line that heads every column is a group
    heading's rather than wrapped headings' upper lines: a heading of its words set a
    space apart reaches over two body columns (`Housing units` centred over four
    sub-columns, each word by chance over one), or a piece reaches over the heading of a
    neighbouring column on the lowest line."""
    middles = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    for run in header_segments(line, edges, lowest=False, settings=settings):
        if sum(1 for m in middles if run[0]["x0"] <= m <= run[-1]["x1"]) > 1:
            return True
    for j, piece in cells.items():
        left, right = lowest.get(j - 1), lowest.get(j + 1)
        if left is not None and piece[0]["x0"] < left[-1]["x1"]:
            return True
        if right is not None and piece[-1]["x1"] > right[0]["x0"]:
            return True
    return False


def wrapped_headings(
    header: list[list[Word]],
    edges: list[float],
    settings: TableSettings,
    ink: Sequence[tuple[float, float]] = (),
) -> list[list[Word]]:
    """The header's lowest lines read by cells: where each heading of the lowest lines
    sits over one body column, the lines' words over one column are one heading (a
    heading wrapped onto several lines, centred vertically so that its lines fall
    between its neighbours'), merged into one line; lines above stay as they are. A line
    joins the lowest ones when each of its headings sits over one column and is centred
    on (or flush left with) the heading below it in that column, a line pitch above.
    A line above may be a group heading whose pieces by chance sit over one sub-column
    each (`_group_line`): where the lines do not interleave (no line above heads a
    column the lowest line has none for: headings set on the bottom line) the lines are
    then left as printed, for the heading tree to span; where they do (a stub heading
    centred vertically beside the sub-headings), the band stops below the group line."""
    if len(header) < 2 or len(edges) < 3:
        return header
    lowest = _one_column_pieces(header[-1], edges, settings, ink)
    if lowest is None:
        return header
    band = [lowest]
    pitches = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    upper = top(header[-1])
    start = len(header) - 1
    for i in range(len(header) - 2, -1, -1):
        cells = _one_column_pieces(header[i], edges, settings)
        if cells is None or upper - bottom(header[i]) > line_gap(height(header[i]), settings):
            break
        fits = True
        for j, piece in cells.items():
            below = next((b[j] for b in band if j in b), None)
            if below is None:
                continue
            mid, other = (
                (piece[0]["x0"] + piece[-1]["x1"]) / 2,
                (below[0]["x0"] + below[-1]["x1"]) / 2,
            )
            tight = max(settings.min_tight, settings.tight * pitches[j])
            if abs(mid - other) > tight and abs(piece[0]["x0"] - below[0]["x0"]) > settings.flush:
                fits = False
                break
        if not fits:
            break
        band.insert(0, cells)
        upper, start = top(header[i]), i
    if len(band) < 2:
        return header
    groups = [
        k
        for k, cells in enumerate(band[:-1])
        if _group_line(header[start + k], cells, lowest, edges, settings)
    ]
    if groups:
        if not {j for cells in band[:-1] for j in cells} - set(lowest):
            return header  # set on the bottom line under a group heading: read as printed
        band, start = band[groups[-1] + 1 :], start + groups[-1] + 1  # the group line stays
        if len(band) < 2:
            return header
    merged: list[Word] = []
    for j in sorted({j for cells in band for j in cells}):
        words = [w for cells in band if j in cells for w in cells[j]]
        merged.append(
            {
                **words[0],
                "text": " ".join(w["text"] for w in words),
                "x0": min(w["x0"] for w in words),
                "x1": max(w["x1"] for w in words),
                "top": min(w["top"] for w in words),
                "bottom": max(w["bottom"] for w in words),
                "cut": True,  # one column's heading: a run of its own (`words.segments`)
            }
        )
    return [*header[:start], merged]


def naming_lines(
    body: list[list[Word]], edges: list[float], settings: TableSettings
) -> tuple[list[list[Word]], list[list[Word]]]:
    """The first lines of a run that name its columns (`names_columns`, up to
    `max_header_lines`, leaving `min_data_lines` rows), and the rest of the run."""
    named: list[list[Word]] = []
    while len(named) < settings.max_header_lines and len(body) > settings.min_data_lines:
        if not names_columns(body[0], body[1:], edges, settings):
            break
        named.append(body[0])
        body = body[1:]
    return named, body


def header_above(
    above: list[list[Word]],
    named: list[list[Word]],
    first: list[Word],
    edges: list[float],
    across: list[Box],
    grouped: bool,
    settings: TableSettings,
) -> list[list[Word]]:
    """The header lines of a run whose first row is `first`: the `named` lines, under the
    label lines just above a line pitch apart (`is_header`, cut at the column `edges`),
    up to `max_header_lines` labels (lines of column numbers and formulas not counted).
    A rule across the table (`across`, joined) ends it unless the lines above it head the
    columns (a midrule inside the header); more space is allowed over a rule and over
    the first group row (`grouped`)."""
    x0, x1 = edges[0], edges[-1]
    window = above[-(settings.max_header_lines + 2) :]
    header: list[list[Word]] = list(named)
    rules_crossed = 0
    lower = top(header[0] if header else first)
    for line in reversed([split_at_edges(line, edges) for line in window]):
        labels = sum(
            1 for h in header if not numbering(h, settings) and not references(h, settings)
        )
        if labels >= settings.max_header_lines:
            break
        crossing = rule_between(across, bottom(line), lower, x0, x1, settings)
        above_group = grouped and not header  # space set above the first group row
        if lower - bottom(line) > line_gap(height(line), settings) * (
            settings.rule_crossed_space
            if rules_crossed or crossing
            else (settings.group_space if above_group else 1)
        ):
            break
        if crossing:
            rules_crossed += 1
            # the table's top rule, unless the header goes on above it: a line of
            # headings over the columns (two or more) above a rule inside the header (a
            # midrule over the units row or the columns' numbers); a caption is one
            inner = len(segments(line, settings)) >= 2
            if not inner and (rules_crossed > 1 or (header and rules_crossed)):
                break
        if line[-1]["x1"] < x0 or line[0]["x0"] > x1 or not is_header(line, edges, settings):
            break
        header.insert(0, line)
        lower = top(line)
    return header


def header_cells(
    header: list[list[Word]],
    notes: list[list[Word]],
    edges: list[float],
    spans: list[tuple[float, float]],
    across: list[Box],
    settings: TableSettings,
) -> tuple[list[list[Word]], list[list[str | None]]]:
    """The header's lines and grid rows: wrapped headings merged (`wrapped_headings`),
    the label lines' cells (`header_grid`), then the `notes` (the columns' numbers and
    formulas), each under its column."""
    header = wrapped_headings(header, edges, settings, spans)
    grid = header_grid(header, edges, spans, across, settings) if header else []
    for line in notes:
        grid.append(["", *line_cells(line, edges)[1:]])
    return header + notes, grid
