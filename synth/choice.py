"""A per-table choice between trecho's reading and SLANet-plus's, by evidence alone (no
truth): which reading keeps each value under a column heading and beside a row label,
and whether the model's grid lost or merged what trecho's holds (docs/tables.md, "The
benchmark"). bench/tables.py reports the choice beside both readers and beside the
oracle, the better reading of each table judged against the truth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.tables.cells import number, values_cell


@dataclass(frozen=True)
class View:
    """What one reading of one table says of itself: its body's values (filled cells past
    the stub column), those under no heading, those in rows without a label, cells
    holding several figures side by side (columns run together), its columns and rows,
    its words, and whether it named its columns at all."""

    values: int
    unheaded: int
    unlabelled: int
    crowded: int
    columns: int
    rows: int
    words: int
    named: bool

    @property
    def lost(self) -> int:
        """Values a chunk would hold without their heading or their row label."""
        return self.unheaded + self.unlabelled


def view(paths: Sequence[str], body: Sequence[Sequence[str | None]], head_words: int = 0) -> View:
    """A table's view from its columns' heading paths and its body rows (the first cell
    the row label); `head_words`: the words printed in its header rows."""
    values = unheaded = unlabelled = crowded = words = 0
    width = max((len(r) for r in body), default=0)
    for row in body:
        cells = [c or "" for c in row]
        words += sum(len(c.split()) for c in cells)
        filled = [j for j in range(1, len(cells)) if cells[j].strip()]
        values += len(filled)
        unheaded += sum(1 for j in filled if j >= len(paths) or not paths[j].strip())
        if filled and not cells[0].strip():
            unlabelled += len(filled)
        crowded += sum(1 for j in filled if several(cells[j]))
    named = any(p.strip() for p in paths[1:])
    return View(values, unheaded, unlabelled, crowded, width, len(body), words + head_words, named)


def several(cell: str) -> bool:
    """Whether a cell holds two figures or more side by side (`12.5 3.1`): two columns
    read as one."""
    tokens = cell.split()
    return len(tokens) > 1 and values_cell(cell) and sum(number(t) for t in tokens) > 1


def doubt(trecho: View) -> bool:
    """Whether trecho's reading of a table shows doubt: its columns unnamed, or values it
    leaves without a heading or a row label. Only such tables are read again."""
    return not trecho.named or trecho.lost > 0


def prefer_model(trecho: View, model: View) -> bool:
    """Whether the model's reading of a table is the better one: trecho in doubt; the
    model naming columns and holding values; its grid as many values as trecho's, less
    those trecho leaves without heading or label anyway, and as many words (no column or
    header line lost); no more cells of figures run together; and fewer values left
    without heading or label (none, where trecho named no column)."""
    if not doubt(trecho) or not model.named or not model.values:
        return False
    if model.values < trecho.values - trecho.lost or model.words < trecho.words:
        return False
    if model.crowded > trecho.crowded:
        return False
    return model.lost < trecho.lost or (not trecho.named and model.lost == 0)
