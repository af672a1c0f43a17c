"""The headings a header line prints: its segments cut at the body's column edges, each
heading's words, ink and the columns under its ink, and headings placed into grid cells.
What columns a heading spans is decided in `heading_tree` from these."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.tables.cells import without_leader
from rag_assets.core.tables.model import Word
from rag_assets.core.tables.settings import TableSettings
from rag_assets.core.tables.words import segments, split_tight, text


@dataclass
class Heading:
    """One heading of a header line: its words, its ink and the columns under its ink."""

    words: list[Word]
    x0: float
    x1: float
    over: list[int]

    @property
    def middle(self) -> float:
        """The middle of its ink, what centring is judged by."""
        return (self.x0 + self.x1) / 2


def column_of(x: float, edges: list[float]) -> int:
    """The column a position falls in, between the table's column `edges`."""
    return max(0, min(len(edges) - 2, sum(1 for e in edges[1:-1] if x >= e)))


def line_cells(line: list[Word], edges: list[float]) -> list[str]:
    """A data line's text by column: each word goes where its middle is."""
    cells: list[list[str]] = [[] for _ in range(len(edges) - 1)]
    for word in line:
        cells[column_of((word["x0"] + word["x1"]) / 2, edges)].append(word["text"])
    return [without_leader(" ".join(c)) for c in cells]


def header_segments(
    line: list[Word],
    edges: list[float],
    lowest: bool,
    settings: TableSettings,
    ink: Sequence[tuple[float, float]] = (),
) -> list[list[Word]]:
    """A header line's segments, cut also where two words closer than a column gap sit
    on either side of a column edge of the body (headings of tightly set columns): on
    the lowest line, whatever the space between them (there each heading is one
    column's), and where the space between them holds the end of a column's `ink` (the
    body's figures) and the words after it stand over the next column (`% | $ thousands`,
    a heading wider than its figures starting left of the edge); above it wherever they
    are wider apart than a space."""

    def apart(left: Word, right: Word, rest: list[Word]) -> bool:
        if any(left["x1"] <= e <= right["x0"] for e in edges[1:-1]):
            return True
        return len(ink) == len(edges) - 1 and _past_ink(left, right, rest, edges, ink, settings)

    if not lowest:  # headings set apart wider than a space are two, edge or none
        return split_tight(segments(line, settings), lambda a, b: True, settings)
    out: list[list[Word]] = []
    for part in segments(line, settings):
        pieces: list[list[Word]] = [[part[0]]]
        for k, (left, right) in enumerate(zip(part, part[1:], strict=False)):
            if apart(left, right, part[k + 1 :]):
                pieces.append([])
            pieces[-1].append(right)
        out += _over_own_columns(pieces, edges, settings)
    return out


def _past_ink(
    left: Word,
    right: Word,
    rest: list[Word],
    edges: list[float],
    ink: Sequence[tuple[float, float]],
    settings: TableSettings,
) -> bool:
    """Whether `right` starts a heading of the next column: a column's ink ends between
    `left` and `right`, and the words from `right` on over the next column (`rest`)
    have their middle in it."""
    for k in range(len(ink) - 1):
        end = ink[k][1] + settings.slack
        if left["x1"] <= end < right["x0"]:
            over = [w for w in rest if w["x1"] <= ink[k + 1][1] + settings.slack] or [right]
            return column_of((over[0]["x0"] + over[-1]["x1"]) / 2, edges) == k + 1
    return False


def _over_own_columns(
    pieces: list[list[Word]], edges: list[float], settings: TableSettings
) -> list[list[Word]]:
    """A lowest header segment's pieces cut further where its words stand centred over
    columns of their own, one heading a column (`Full-time Part-time Full-time`, set
    tighter than a column gap over narrow columns); a heading of several words over
    one column, or wider than it, stays whole."""
    out: list[list[Word]] = []
    for piece in pieces:
        groups: list[list[Word]] = []
        columns: list[int] = []
        for word in piece:
            j = column_of((word["x0"] + word["x1"]) / 2, edges)
            if columns and columns[-1] == j:
                groups[-1].append(word)
            else:
                groups.append([word])
                columns.append(j)
        centred = all(
            abs((g[0]["x0"] + g[-1]["x1"]) / 2 - (edges[j] + edges[j + 1]) / 2)
            <= settings.centred * (edges[j + 1] - edges[j])
            for g, j in zip(groups, columns, strict=True)
        )
        out += (
            groups if len(groups) > 1 and len(set(columns)) == len(columns) and centred else [piece]
        )
    return out


def _starts_heading(before: str, char: str, digits: bool) -> bool:
    """Whether a heading may start at `char` after `before` inside one run of touching
    characters: a capital or a figure after a small letter (`CasesRate`, `Total2019`), a
    capital after a figure, or any figure in a run of figures alone (`20192020`)."""
    if digits:
        return before.isdigit() and char.isdigit()
    return (before.islower() and (char.isupper() or char.isdigit())) or (
        before.isdigit() and char.isupper()
    )


def split_at_edges(line: list[Word], edges: list[float]) -> list[Word]:
    """A header line's words cut where a word runs across an inner column edge of the
    body: headings crowded so that neighbouring headings touch print as one word
    (`InpatientOutpatientEmergency`); each edge inside such a word cuts it at the nearest
    place a heading may start (`_starts_heading`), within half a column of the edge.
    Words without their characters (`return_chars`) stay whole."""
    out: list[Word] = []
    for word in line:
        chars = word.get("chars") or []
        inner = [e for e in edges[1:-1] if word["x0"] < e < word["x1"]]
        if len(chars) < 2 or not inner:
            out.append(word)
            continue
        digits = all(c["text"].isdigit() for c in chars) and len(chars) >= 8
        cuts: set[int] = set()
        for e in inner:
            k = edges.index(e)
            reach = min(e - edges[k - 1], edges[k + 1] - e) / 2
            starts = [
                i
                for i in range(1, len(chars))
                if _starts_heading(chars[i - 1]["text"], chars[i]["text"], digits)
                and abs(chars[i]["x0"] - e) <= reach
            ]
            if starts:
                cuts.add(min(starts, key=lambda i: abs(chars[i]["x0"] - e)))
        bounds = [0, *sorted(cuts), len(chars)]
        for a, b in zip(bounds, bounds[1:], strict=False):
            part = chars[a:b]
            out.append(
                {
                    **word,
                    "text": "".join(c["text"] for c in part),
                    "x0": part[0]["x0"],
                    "x1": part[-1]["x1"],
                    "chars": part,
                    "cut": a > 0,  # a heading of its own, touching the one before
                }
            )
    return out


def line_headings(
    line: list[Word], extents: list[list[float]], edges: list[float], settings: TableSettings
) -> list[Heading]:
    """An upper header line's headings, each with the columns its ink is over (`extents`:
    each column's ink; the column its middle is in where it is over none)."""
    out = []
    for seg in header_segments(line, edges, lowest=False, settings=settings):
        x0, x1 = seg[0]["x0"], seg[-1]["x1"]
        over = [j for j, (lo, hi) in enumerate(extents) if x0 < hi and x1 > lo]
        out.append(Heading(seg, x0, x1, over or [column_of((x0 + x1) / 2, edges)]))
    return out


def placed_cells(placed: list[tuple[list[Word], list[int]]], width: int) -> list[str | None]:
    """Headings placed at their columns: text at the first, `None` on the others."""
    out: list[str | None] = [""] * width
    taken: set[int] = set()
    for words, cols in sorted(placed, key=lambda p: min(p[1])):
        first, last = min(cols), max(cols)
        if first in taken:
            out[first] = f"{out[first] or ''} {text(words)}".strip()
            continue
        out[first] = text(words)
        for j in range(first + 1, last + 1):
            if j not in taken:
                out[j] = None
        taken.update(range(first, last + 1))
    return out


def text_under(heading: Heading, line: list[Word]) -> str:
    """The text printed just under a heading on the next line."""
    under = [w for w in line if w["x0"] < heading.x1 and w["x1"] > heading.x0]
    return text(under)
