"""The heading tree: which columns each heading spans (its extent), and the path of
headings each column is read under. The one place a heading's extent is decided.

In a grid (ruled tables, and aligned ones once placed by `header_grid`) a heading spans
the positions merged after it (`None`): each column's path is read from them in
`grid_paths`.

In a table read by alignment, a heading on the lowest header line names the column(s)
it is printed over. A line of two or more headings above it, each starting where the
lowest heading of the column under its start starts (group headings set flush left),
heads the runs from each start to the next (`_flush_left_groups`). Otherwise a heading
on a line above (a *spanner*, `Grade` over `K 1 2 3`) heads a run of columns, found
by, in order (lines read upwards, so each knows the spans of the line below):

0. the spanner under it that it begins (`Private` over `transfer`): the same columns;
1. a rule printed just under it, shorter than the table (a spanner's underline): the
   columns under the rule (a rule under several headings is shared out by nearness);
2. its alignment: a spanner is centred over its columns. The runs of columns it is
   centred over, between the stub column and the columns under the other headings of
   its line, are its candidates: the largest whose sub-headings are printed again
   elsewhere on the lowest line (`Pistol Rifle Other` under each group), or that fills
   the whole stretch between its neighbours; else the smallest. A run of one column
   counts only for a heading set as that column's first line (centred on its heading,
   or flush left with it; a lower line going on in lower case always is):
   `Licence` / `Renewal`;
3. a heading centred over no run of columns but flush left with the heading of the
   column under its start (headings set flush left) heads the columns from there to the
   next heading of its line;
4. a heading centred over nothing (set to one side of its group) heads the columns
   nearer to it than to the other headings of its line.

Spans found sure (an underline, repeated sub-headings) bound the others of their line,
which are read again beside them; a column claimed by two headings goes to the nearer.
The stub column (row labels) is never under a spanner that is not printed over it.
`header_grid` returns the header as a grid: a heading at the first column it spans,
`None` on the others (as a ruled table's merged cell).
"""

from __future__ import annotations

import statistics

from rag_assets.core.tables.header_lines import (
    Heading,
    column_of,
    header_segments,
    line_headings,
    placed_cells,
    text_under,
)
from rag_assets.core.tables.model import Box, Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import bottom, text, top


def _lowest(
    line: list[Word],
    edges: list[float],
    settings: TableSettings,
    ink: list[tuple[float, float]],
) -> list[tuple[list[Word], list[int]]]:
    """The lowest header line's headings, each with the columns whose middle it is
    printed over (or the column its middle is in); `ink`: each column's figures."""
    middles = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    out = []
    for seg in header_segments(line, edges, lowest=True, settings=settings, ink=ink):
        x0, x1 = seg[0]["x0"], seg[-1]["x1"]
        inside = [j for j, m in enumerate(middles) if x0 <= m <= x1]
        out.append((seg, inside or [column_of((x0 + x1) / 2, edges)]))
    return out


class _Spans:
    """What the spans of one upper header line are judged by: the columns' extents, the
    lowest line's heading texts, the rules, the line below."""

    def __init__(
        self,
        extents: list[list[float]],
        below: list[str],
        rules: list[Box],
        gap: tuple[float, float],
        edges: list[float],
        settings: TableSettings,
    ) -> None:
        self.extents = extents
        self.below = below
        self.rules = rules
        self.gap = gap  # from the bottom of this line to the top of the line below
        self.edges = edges
        pitches = [b - a for a, b in zip(edges[1:-1], edges[2:-1], strict=False)] or [
            edges[-1] - edges[0]
        ]
        self.settings = settings
        self.tolerance = max(settings.min_centred, settings.centred * statistics.median(pitches))
        self.tight = max(settings.min_tight, settings.tight * statistics.median(pitches))
        self.heads: list[tuple[float, float] | None] = [None] * len(extents)

    def middle(self, a: int, b: int) -> float:
        run = self.extents[a : b + 1]
        return (min(e[0] for e in run) + max(e[1] for e in run)) / 2

    def underline(self, heading: Heading, others: list[Heading]) -> list[int] | None:
        """The columns under a short rule printed just under the heading, if any; a rule
        under several headings of the line is shared out: each of its columns goes to
        the heading nearest to it."""
        width = self.edges[-1] - self.edges[0]
        slack, reach = self.settings.slack, self.settings.underline_reach
        under = [
            r
            for r in self.rules
            if self.gap[0] - slack <= r[1] <= self.gap[1] + slack
            and r[2] - r[0] < self.settings.full_rule * width
            and r[0] - reach <= heading.middle <= r[2] + reach
        ]
        if not under:
            return None
        r = min(under, key=lambda r: r[1])
        cols = [
            j for j in range(len(self.extents)) if r[0] - reach <= self.middle(j, j) <= r[2] + reach
        ]
        sharing = [o for o in others if r[0] - reach <= o.middle <= r[2] + reach]
        if sharing:
            cols = [
                j
                for j in cols
                if _distance(self.middle(j, j), heading)
                < min(_distance(self.middle(j, j), o) for o in sharing)
            ]
        return sorted(set(cols) | set(heading.over)) or None

    def between_neighbours(self, heading: Heading, others: list[Heading]) -> tuple[int, int]:
        """The columns a heading may span by its neighbours on its line: those whose
        middle lies between the midpoints to the headings beside it (the stub's edge on
        the left when the one beside it heads the stub, the table's end on the right)."""
        left = [o for o in others if o.middle < heading.middle and 0 not in o.over]
        right = [o for o in others if o.middle > heading.middle]
        lo = (max(o.middle for o in left) + heading.middle) / 2 if left else self.edges[1]
        hi = (min(o.middle for o in right) + heading.middle) / 2 if right else self.edges[-1]
        cols = [j for j in range(1, len(self.extents)) if lo <= self.middle(j, j) <= hi]
        return (min(cols), max(cols)) if cols else (-1, -1)

    def wraps(self, heading: Heading, j: int) -> bool:
        """Whether a heading sits as the first line of column j's heading: centred on
        the heading below it, flush left with it, or flush right with it and no wider (a
        right-aligned heading wrapped: `$` over `millions`)."""
        below = self.heads[j]
        if below is None:
            return False
        centre = abs(heading.middle - (below[0] + below[1]) / 2) <= self.tight
        flush = self.settings.flush
        right = abs(heading.x1 - below[1]) <= flush and heading.x0 >= below[0] - flush
        return centre or right or abs(heading.x0 - below[0]) <= flush

    def flush_left(self, heading: Heading, j: int) -> bool:
        """Whether a heading starts where column j's heading on the lowest line starts
        (headings set flush left: a group heading over the columns from j on)."""
        below = self.heads[j]
        return below is not None and abs(heading.x0 - below[0]) <= self.settings.flush

    def repeated(self, a: int, b: int) -> bool:
        """Whether the sub-headings of columns a..b are printed again elsewhere on the
        lowest line (not over these columns), in the same order."""
        run = self.below[a : b + 1]
        if not all(run):
            return False
        n = b - a + 1
        return any(
            self.below[i : i + n] == run
            for i in range(len(self.below) - n + 1)
            if abs(i - a) >= n  # elsewhere: not overlapping these columns
        )


Span = tuple[list[int], bool]  # the columns a heading spans, and whether that is sure


def _span(
    heading: Heading, others: list[Heading], spans: _Spans, lower: str, taken: set[int]
) -> Span:
    """The columns one upper heading spans (see the module docstring), and whether they
    are sure (an underline, or sub-headings printed again elsewhere). `taken`: columns
    other headings of the line surely span."""
    ruled = spans.underline(heading, others)
    if ruled:
        return ruled, True
    blocked = taken | {j for o in others for j in o.over}
    if 0 not in heading.over:
        blocked.add(0)  # the stub column
    lo, hi = min(heading.over), max(heading.over)
    if 0 in heading.over or any(j in blocked for j in range(lo, hi + 1)):
        return heading.over, False
    first, last = lo, hi
    while first - 1 >= 0 and first - 1 not in blocked:
        first -= 1
    while last + 1 < len(spans.extents) and last + 1 not in blocked:
        last += 1
    runs = [
        (a, b)
        for a in range(first, lo + 1)
        for b in range(hi, last + 1)
        if abs(spans.middle(a, b) - heading.middle) <= spans.tolerance
    ]
    # over one column, only a heading set as that column's heading is (centred on it,
    # or flush left with it): one set off to a side leads its group, as below
    runs = [r for r in runs if r[0] < r[1] or spans.wraps(heading, r[0])]
    if not [r for r in runs if r[0] < r[1]] and last > lo and spans.flush_left(heading, lo):
        return list(range(lo, last + 1)), False  # set flush left over its group
    if not runs:
        return _nearest(heading, others, spans), False
    runs.sort(key=lambda r: r[1] - r[0])
    smallest = runs[0]
    if smallest[0] == smallest[1] and lower[:1].islower():
        return [smallest[0]], True  # one column's heading, its rest on the line below
    repeated = [r for r in runs if r[0] < r[1] and spans.repeated(*r)]
    window = spans.between_neighbours(heading, others)
    inside = [r for r in runs if r[0] < r[1] and window[0] <= r[0] and r[1] <= window[1]]
    if repeated:
        chosen = repeated[-1]
    elif runs[-1] == (first, last) and len(runs) > 1:
        chosen = runs[-1]  # fills the whole stretch between its neighbours
    elif inside:
        chosen = inside[-1]  # the widest it is centred over, up to its neighbours
    else:
        chosen = smallest
    return list(range(chosen[0], chosen[1] + 1)), bool(repeated)


def _distance(x: float, heading: Heading) -> float:
    """How far a position is from a heading's ink (0 inside it)."""
    return 0.0 if heading.x0 <= x <= heading.x1 else min(abs(x - heading.x0), abs(x - heading.x1))


def _nearest(heading: Heading, others: list[Heading], spans: _Spans) -> list[int]:
    """A heading centred over no run: the columns whose middle is nearer to it than to
    any other heading of its line (just those under it when it is alone on its line)."""
    if not others:
        return heading.over
    cols = []
    for j in range(len(spans.extents)):
        m = spans.middle(j, j)
        if _distance(m, heading) < min(_distance(m, o) for o in others):
            cols.append(j)
    if 0 not in heading.over and 0 in cols:
        cols.remove(0)
    return cols if heading.over[0] in cols else heading.over


def header_grid(
    header: list[list[Word]],
    edges: list[float],
    spans: list[tuple[float, float]],
    rules: list[Box],
    settings: TableSettings,
) -> list[list[str | None]]:
    """The header lines of an aligned table as grid rows: each heading at the first
    column it spans, `None` on the others. `edges` are the column edges, `spans` the ink
    of each column in the table's body, `rules` the page's horizontal rules."""
    width = len(edges) - 1
    extents = [[lo, hi] for lo, hi in spans]
    placed = _lowest(header[-1], edges, settings, spans)
    below = [""] * width
    for words, cols in placed:
        for j in cols:
            extents[j] = [min(extents[j][0], words[0]["x0"]), max(extents[j][1], words[-1]["x1"])]
            below[j] = f"{below[j]} {text(words)}".strip().casefold()
    rows: list[list[str | None]] = [placed_cells(placed, width)]
    spanned: list[tuple[Heading, list[int]]] = []  # the line below's spanners (none: lowest)
    for i in range(len(header) - 2, -1, -1):  # upwards: each line knows the one below
        line = header[i]
        gap = (bottom(line), top(header[i + 1]))
        judge = _Spans(extents, below, rules, gap, edges, settings)
        for words, cols in placed:
            if len(cols) == 1:
                judge.heads[cols[0]] = (words[0]["x0"], words[-1]["x1"])
        headings = line_headings(line, extents, edges, settings)
        lower = [text_under(h, header[i + 1]) for h in headings]
        spans = _flush_left_groups(headings, lower, judge, width) or _line_spans(
            headings, spanned, lower, judge, settings
        )
        rows.insert(
            0, placed_cells([(h.words, c) for h, c in zip(headings, spans, strict=True)], width)
        )
        spanned = [(h, c) for h, c in zip(headings, spans, strict=True) if len(c) > 1]
    return rows


def _line_spans(
    headings: list[Heading],
    spanned: list[tuple[Heading, list[int]]],
    lower: list[str],
    judge: _Spans,
    settings: TableSettings,
) -> list[list[int]]:
    """The columns each heading of one upper line spans, heading by heading (`_span`),
    then again beside the spans of its line that are sure."""
    others = [[o for o in headings if o is not h] for h in headings]
    found = [
        _continued(h, spanned, t, settings) or _span(h, o, judge, t, set())
        for h, o, t in zip(headings, others, lower, strict=True)
    ]
    for k, (h, o, t) in enumerate(zip(headings, others, lower, strict=True)):
        if not found[k][1]:  # again, beside the spans of its line that are sure
            sure = {j for n, (cols, ok) in enumerate(found) if ok and n != k for j in cols}
            found[k] = _span(h, o, judge, t, sure)
    return _shared_out(headings, [cols for cols, _ in found], judge)


def _flush_left_groups(
    headings: list[Heading], lower: list[str], judge: _Spans, width: int
) -> list[list[int]] | None:
    """The spans of a line of group headings all set flush left (each starts where the
    heading of the column under its start starts, the stub's excepted): each heads the
    columns from its start to the next one's, the last as many as the one before it
    (one set of sub-columns repeated). None when the line is not set so: a centred
    group heading can sit by chance over a run it does not head, and the first lines
    of headings wrapped flush left go on in lower case below (`Persons in` / `poverty`)
    or head a run of one column."""
    starts = [min(h.over) for h in headings]
    if len(headings) < 2 or 0 in starts or starts != sorted(set(starts)):
        return None
    steps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    if any(t[:1].islower() for t in lower) or min(steps) < 2:
        return None
    if not all(judge.flush_left(h, j) for h, j in zip(headings, starts, strict=True)):
        return None
    ends = [b - 1 for b in starts[1:]]
    ends.append(min(width - 1, starts[-1] + ends[-1] - starts[-2]))
    return [list(range(a, b + 1)) for a, b in zip(starts, ends, strict=True)]


def _continued(
    heading: Heading,
    spanned: list[tuple[Heading, list[int]]],
    lower: str,
    settings: TableSettings,
) -> Span | None:
    """The span of the spanner printed under a heading that it begins (`Private` over
    `transfer`, whose text goes on in lower case, or one centred on it): the same."""
    for below, cols in spanned:
        if below.x0 < heading.x1 and below.x1 > heading.x0:
            centred = abs(below.middle - heading.middle) <= settings.centred_on
            flush = abs(below.x0 - heading.x0) <= settings.flush
            if lower[:1].islower() or centred or flush:
                return cols, True
    return None


def _shared_out(headings: list[Heading], spans: list[list[int]], judge: _Spans) -> list[list[int]]:
    """The spans of one line's headings with each column claimed by several given to
    the heading nearest to it (its own columns kept by each)."""
    claims: dict[int, list[int]] = {}
    for k, cols in enumerate(spans):
        for j in cols:
            claims.setdefault(j, []).append(k)
    out = [list(cols) for cols in spans]
    for j, claimants in claims.items():
        if len(claimants) < 2:
            continue
        middle = judge.middle(j, j)
        keep = min(claimants, key=lambda k: _distance(middle, headings[k]))
        for k in claimants:
            if k != keep and j not in headings[k].over and len(out[k]) > 1:
                out[k].remove(j)
    return out
