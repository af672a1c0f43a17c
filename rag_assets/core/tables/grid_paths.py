"""Each column's path of headings read from a grid's merged cells: the header rows of a
ruled table (or of an aligned one once `heading_tree.header_grid` placed its headings),
a lone first-row heading spread over its columns, and a ruled box of headings printed
over an aligned body. Where a heading's extent is found in the printed words is
`heading_tree`'s; here it is given by the merged positions (`None`)."""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.tables.cells import blank
from rag_assets.core.tables.header_lines import column_of

PATH_SEP = " > "  # between a group heading and the column names under it


def heading_paths(stacked: Sequence[Sequence[str | None]], width: int) -> list[str]:
    """Each column's path of headings down the header rows `stacked` (`None`: a position
    covered by the heading before it): a group heading (`International`) names the merged
    positions to its right that have a sub-heading below, so the columns read
    `International > Cargo Ton`; a heading over the same columns as the one above
    continues it (one heading printed on two lines)."""
    names = [""] * width
    group = [False] * width  # the name so far ends with a heading over several columns
    last: list[tuple[int, int]] = [(-1, -1)] * width  # the columns that heading spans
    for r, cells in enumerate(stacked):
        values, origins = [""] * width, [-1] * width
        spanning: set[int] = set()  # cells that head several columns
        carried, origin = "", -1
        for i, cell in enumerate(cells):
            if cell is None:
                below = any(not blank(s[i]) for s in stacked[r + 1 :])
                values[i] = carried if below else ""  # a group heading over sub-headings
                if values[i]:
                    spanning.add(origin)
            else:
                values[i] = carried = " ".join(cell.split())
                origin = i
            origins[i] = origin
        ends = {origins[i]: i for i, value in enumerate(values) if value}
        for i, value in enumerate(values):
            if value:
                extent = (origins[i], ends[origins[i]])
                # a heading over the same columns as the one above it continues it (one
                # heading printed on two lines); under a wider one, it is a level down
                sep = PATH_SEP if group[i] and extent != last[i] else " "
                names[i] = f"{names[i]}{sep}{value}" if names[i] else value
                group[i] = origins[i] in spanning
                last[i] = extent
    return names


def spread(row: Sequence[str | None], i: int, width: int) -> list[str | None]:
    """A lone heading over the columns after it: those it is printed over when known (its
    merged positions), else every column to the table's end."""
    out = list(row) + [None] * (width - len(row))
    if i + 1 < width and out[i + 1] is None:
        return out  # merged positions say how far it reaches
    return out[: i + 1] + [None] * (width - i - 1)


def boxed_paths(
    box_rows: Sequence[Sequence[str | None]], box_edges: Sequence[float], edges: Sequence[float]
) -> list[str] | None:
    """Each column's path of headings read from a ruled box of headings over a body set
    by alignment (its cells drawn as shaded rectangles): the box's merged cells give
    each heading's extent exactly, each body column (`edges`) takes the path of the
    box column its middle falls in. None when the box does not tell the body's columns
    apart (two of them, the stub included, under one box column) or holds no heading for
    one of them."""
    width = max((len(r) for r in box_rows), default=0)
    if width < 2 or len(box_edges) != width + 1:
        return None
    paths = heading_paths([list(r) + [""] * (width - len(r)) for r in box_rows], width)
    middles = [(a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)]
    under = [column_of(m, list(box_edges)) for m in middles]
    if len(set(under)) != len(under) or not all(paths[k] for k in under[1:]):
        return None  # two body columns (the stub's among them) under one box column
    return [paths[k] for k in under]
