"""Stage metrics for bench/tables.py: region recall and precision, heading-path and
row-label-path accuracy, cells held; pure functions over a reader's output and the truth.

A reader's output for one PDF is a `Reading`: the searchable texts it would index (chunks;
None for a region proposer, which reads no cells) and the table regions it found. Texts
are compared without case and whitespace (`table_truth.norm`), as in every earlier version
of the bench.

- **Region recall / precision**: truth tables matched by a found region on the same page,
  over truth tables; found regions matching a truth table, over found regions. Where the
  truth has boxes (eu, synth) a match is intersection over union ≥ 0.5; elsewhere a region
  that holds at least half of the table's distinct data cells (every word of a cell among
  the region's words: its cells' words for a reader, the page's words inside the box for a
  proposer). One truth table takes one region (best first, greedy).
  Where a source's truth holds only some tables of its PDFs (Camelot's and tabula's tests),
  precision counts the regions on the pages of a truth table only, and only inside the
  area a test reads where it reads one (Camelot's `table_region`: `TruthTable.area`).
- **Cells held**: truth data cells with their column header and row label in one chunk.
- **Heading path**: truth data cells that have headings, held in one chunk with their row
  label and EVERY heading of their path (the group heading spanning their column from
  above as well as the lowest one).
- **Row-label path**: truth data cells that have stub labels, held in one chunk with their
  column header and EVERY stub label of their path (the group row's label as well as the
  indented one).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from rag_assets.core.layout import box_iou as iou
from synth.table_truth import Box, Target, TruthTable, norm

IOU_MATCH = 0.5  # a found box matches a truth box at this intersection over union
CONTENT_MATCH = 0.5  # a region matches a box-less truth table holding this share of its cells
CLASSES = (
    "value not found",
    "header missing from chunk",
    "row label missing from chunk",
    "header and row label missing",
    "document refused/failed",
)


@dataclass
class Found:
    """One table region a reader found: page, box (PDF points, origin bottom left of the
    page as displayed), row and column counts (None: a proposer reads no grid), words."""

    page: int
    box: Box
    rows: int | None = None
    cols: int | None = None
    words: set[str] = field(default_factory=set)


@dataclass
class Reading:
    """What one reader made of one PDF: searchable texts (None: regions only) and regions."""

    texts: list[str] | None = field(default_factory=list)
    regions: list[Found] = field(default_factory=list)
    refused: str = ""
    unstructured: int = 0  # regions indexed as text lines (trecho)
    unnamed: int = 0  # tables read without named columns, rows under header lines (trecho)
    seconds: float = 0.0


RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")  # Hebrew, Arabic


def words(text: str) -> set[str]:
    """The words of a text, without case (how a region's content is compared); a word of
    a right-to-left script in either order, since a truth may store it as displayed
    (Camelot's `arabic`) and trecho stores it as read."""
    out = {w.casefold() for w in text.split()}
    return out | {w[::-1] for w in out if RTL.search(w)}


def region(page: int, box: Box, rows: list[list[str]]) -> Found:
    """A found region from its rows of cell texts."""
    width = max((len(r) for r in rows), default=0)
    return Found(page, box, len(rows), width, {w for r in rows for c in r for w in words(c)})


def overlap(table: TruthTable, found: Found, cells: set[str] | None = None) -> float:
    """How well a found region covers a truth table: IoU of the boxes where the truth has
    a box, else the share of its distinct data cells (`cells`, computed here when not
    given) whose words all lie in the region."""
    if found.page != table.page:
        return 0.0
    if table.box is not None:
        return iou(found.box, table.box)
    if cells is None:
        cells = data_cells(table)
    if not cells:
        return 0.0
    return sum(1 for c in cells if words(c) <= found.words) / len(cells)


def data_cells(table: TruthTable) -> set[str]:
    """The distinct texts of a truth table's data cells."""
    return {t.cell for t in table.targets() if t.cell.strip()}


def match_regions(tables: Sequence[TruthTable], regions: Sequence[Found]) -> dict[int, int]:
    """Truth table index -> found region index, one region per table, the best pairs first
    (a pair counts from IoU ≥ 0.5, or half the cells held, as `overlap` measures)."""
    pairs = []
    for i, table in enumerate(tables):
        bar = IOU_MATCH if table.box is not None else CONTENT_MATCH
        cells = data_cells(table) if table.box is None else set()
        for j, found in enumerate(regions):
            score = overlap(table, found, cells)
            if score >= bar:
                pairs.append((score, i, j))
    out: dict[int, int] = {}
    taken: set[int] = set()
    for _, i, j in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        if i not in out and j not in taken:
            out[i] = j
            taken.add(j)
    return out


def judged(
    tables: Sequence[TruthTable],
    regions: Sequence[Found],
    every_table: bool,
    matched: Collection[int] = (),
) -> list[int]:
    """The regions region precision counts: every one where the truth lists every table of
    its PDF (`every_table`), else those on a page of a truth table, and inside the truth's
    area where its test reads only one (`TruthTable.area`); a region `matched` to a truth
    table always counts (a box wider than the area, matched by its cells)."""
    areas: dict[int, list[Box | None]] = {}
    for table in tables:
        areas.setdefault(table.page, []).append(table.area)
    out = []
    for j, found in enumerate(regions):
        if every_table or j in matched:
            out.append(j)
            continue
        x = (found.box[0] + found.box[2]) / 2
        y = (found.box[1] + found.box[3]) / 2
        on_page = areas.get(found.page, [])
        if any(a is None or (a[0] <= x <= a[2] and a[1] <= y <= a[3]) for a in on_page):
            out.append(j)
    return out


def holds(texts: Sequence[str], needed: Sequence[str]) -> bool:
    """Whether one normalized text holds every needed (normalized) string."""
    return any(all(n in t for n in needed) for t in texts)


def heading_path_held(target: Target, texts: Sequence[str]) -> bool:
    """The cell with its row label and every heading of its path in one chunk."""
    return holds(texts, [norm(target.cell), norm(target.label), *map(norm, target.heads)])


def row_label_path_held(target: Target, texts: Sequence[str]) -> bool:
    """The cell with its column header and every stub label of its path in one chunk."""
    return holds(texts, [norm(target.cell), norm(target.head), *map(norm, target.stubs)])


def classify(target: Target, texts: Sequence[str]) -> str:
    """Why a target was missed, from the chunks holding its value."""
    cell, head, label = norm(target.cell), norm(target.head), norm(target.label)
    holding = [t for t in texts if cell in t]
    if not holding:
        return CLASSES[0]
    if any(label in t for t in holding):
        return CLASSES[1]
    if any(head in t for t in holding):
        return CLASSES[2]
    return CLASSES[3]


def share(part: int, whole: int) -> float | None:
    """part / whole, None where there is nothing to count."""
    return part / whole if whole else None


@dataclass
class Score:
    """One reader's figures over a source's files."""

    files: int = 0
    cells: int = 0
    held: int = 0
    heads: int = 0
    heads_held: int = 0
    stubs: int = 0
    stubs_held: int = 0
    tables: int = 0
    found: int = 0
    regions: int = 0
    regions_matched: int = 0
    rows_ok: int = 0
    cols_ok: int = 0
    grids: int = 0  # matched regions with a grid (rows and columns) to compare
    refused: list[str] = field(default_factory=list)
    unstructured: int = 0
    unnamed: int = 0
    seconds: float = 0.0
    reads_cells: bool = True
    missed: dict[str, list[tuple[str, Target]]] = field(default_factory=dict)

    def add(
        self,
        name: str,
        tables: Sequence[TruthTable],
        reading: Reading,
        every_table: bool = True,
    ) -> tuple[int, int]:
        """Score one file; returns (cells held, cells) of it. `every_table` False: the truth
        holds only some of the file's tables, so precision counts the regions found on the
        pages (or areas) of a truth table only (`judged`)."""
        targets = [t for table in tables for t in table.targets()]
        self.files += 1
        self.tables += len(tables)
        self.seconds += reading.seconds
        self.unstructured += reading.unstructured
        self.unnamed += reading.unnamed
        pairs = match_regions(tables, reading.regions)
        self.found += len(pairs)
        self.regions += len(judged(tables, reading.regions, every_table, pairs.values()))
        self.regions_matched += len(pairs)
        for i, j in pairs.items():
            found = reading.regions[j]
            if found.rows is not None:
                self.grids += 1
                self.rows_ok += found.rows == tables[i].n_rows
                self.cols_ok += found.cols == tables[i].n_cols
        if reading.texts is None:
            self.reads_cells = False
            return 0, len(targets)
        self.cells += len(targets)
        with_heads = [t for t in targets if t.heads]
        with_stubs = [t for t in targets if t.stubs]
        self.heads += len(with_heads)
        self.stubs += len(with_stubs)
        if reading.refused:
            self.refused.append(f"{name}: {reading.refused}")
            self.missed.setdefault(CLASSES[4], []).extend((name, t) for t in targets)
            return 0, len(targets)
        texts = [norm(t) for t in reading.texts]
        held = 0
        for target in targets:
            if holds(texts, [norm(target.cell), norm(target.head), norm(target.label)]):
                held += 1
            else:
                self.missed.setdefault(classify(target, texts), []).append((name, target))
        self.heads_held += sum(heading_path_held(t, texts) for t in with_heads)
        self.stubs_held += sum(row_label_path_held(t, texts) for t in with_stubs)
        self.held += held
        return held, len(targets)

    def figures(self) -> dict[str, float | int | None]:
        """The figures as saved by `--save` and compared by `--compare`."""
        return {
            "cells_held": share(self.held, self.cells) if self.reads_cells else None,
            "heading_path": share(self.heads_held, self.heads) if self.reads_cells else None,
            "row_label_path": share(self.stubs_held, self.stubs) if self.reads_cells else None,
            "region_recall": share(self.found, self.tables),
            "region_precision": share(self.regions_matched, self.regions),
            "cells": self.cells,
            "tables": self.tables,
            "regions": self.regions,
            "refused": len(self.refused),
            "unnamed_tables": self.unnamed,
            "tables_as_text": self.unstructured,
            "seconds": round(self.seconds, 1),
        }
