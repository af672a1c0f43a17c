"""Table regions, source by source: the layout model alone, the rules alone, and the two
joined as the product reads (`extract()`), with why each table the model finds is lost by
the join.

Regions are counted as `bench/tables.py` counts them (`table_metrics.match_regions`: IoU
>= 0.5 where the truth has boxes, else a region holding half the table's data cells;
precision on the truth's pages where the truth holds only some of a file's tables), on
the same sources (`--source`, `--synth-seeds`, `--wide-seeds`, the test folders). Readers:

- `model`: the layout model's table boxes alone (`core.layout.table_regions`, at each
  `--scores` threshold; the product's is `LayoutSettings.min_score`), their words the
  page's words inside them.
- `rules`: `extract()` with the model off (rules and alignment).
- `joined`: `extract()` as the product reads (rules, then the model's proposals).

Each truth table the model matches and the join does not is put down to one cause:
`turned` (a page trecho turned upright: the model is not asked), `covered` (a table the
rules found holds the model's box, so it is not proposed, and that table does not
match), `gate` (the page shows nothing tabular outside the tables found, so the model is
not asked), `unread` (the proposed box was read into no table), `misread` (a table read
in the box does not match: cut short, split, or grown), `other`. Then, where the truth has
boxes, how often the join's box is nearer the truth's than the model's (IoU by more than
`EXTENT_NOTE`) and how often further; and the model's boxes a joined region overlaps but
does not agree with (IoU under `IOU_AGREE`), by which of the two the truth takes. `--why`
lists each case, and the join's regions that match nothing.

    python bench/table_join.py [--source eu,camelot,tabula,generated,synth,wide]
        [--synth-seeds tune] [--wide-seeds wide-tune] [--camelot-tests DIR]
        [--tabula-tests DIR] [--files a,b] [--scores 0.3,0.4,0.5] [--why]
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import machine
from tables import SOURCES, load, source_arguments

from rag_assets.core.extract import OcrSettings, PdfError, extract
from rag_assets.core.layout import LayoutSettings, box_iou, covered, table_regions
from rag_assets.core.layout.proposals import worth_a_look
from rag_assets.core.tables import TableSettings
from rag_assets.core.tables.words import page_words
from synth.table_metrics import Found, judged, match_regions, region
from synth.table_readers import displayed, words_inside
from synth.table_truth import Case, Source

Box = tuple[float, float, float, float]
IOU_AGREE = 0.5  # a model box and a joined region this alike are one table
EXTENT_NOTE = 0.1  # IoU: a join's box this much further from the truth than the model's is noted


@dataclass
class Count:
    """Truth tables, those matched, regions counted, those matching."""

    tables: int = 0
    found: int = 0
    regions: int = 0
    matched: int = 0

    def add(self, case: Case, regions: list[Found], every_table: bool) -> dict[int, int]:
        """Score one file; returns truth index -> region index."""
        pairs = match_regions(case.tables, regions)
        self.tables += len(case.tables)
        self.found += len(pairs)
        self.regions += len(judged(case.tables, regions, every_table, pairs.values()))
        self.matched += len(pairs)
        return pairs

    def cell(self) -> str:
        """Recall and precision with their counts."""
        recall = self.found / self.tables if self.tables else 0.0
        precision = self.matched / self.regions if self.regions else 0.0
        found, matched = f"{self.found}/{self.tables}", f"{self.matched}/{self.regions}"
        return f"{recall:.3f} ({found}) / {precision:.3f} ({matched})"


@dataclass
class Extracted:
    """One `extract()` reading: per page its tables' boxes (top-left, as read), rows and
    turn, and the regions as scored (displayed frame)."""

    boxes: dict[int, list[Box]] = field(default_factory=dict)
    turned: set[int] = field(default_factory=set)
    regions: list[Found] = field(default_factory=list)
    refused: str = ""


def read(pdf: Path, model: bool, layout: LayoutSettings | None = None) -> Extracted:
    """`extract()` with the layout model on (`model`, with `layout` when given) or off."""
    out = Extracted()
    try:
        extraction = extract(
            pdf, ocr=OcrSettings(enabled=False), layout=layout or LayoutSettings(enabled=model)
        )
    except PdfError as exc:
        out.refused = str(exc)
        return out
    except Exception as exc:  # noqa: BLE001 - a crash on a public PDF is a result
        out.refused = f"failed: {type(exc).__name__}: {exc}"
        return out
    for page in extraction.pages:
        if page.rotation:
            out.turned.add(page.page)
        out.boxes[page.page] = [tuple(t.bbox) for t in page.tables]  # type: ignore[misc]
        for table in page.tables:
            box = displayed(table.bbox, page.rotation, page.width, page.height)
            out.regions.append(region(page.page, box, table.rows))
    return out


def model_boxes(pdf: Path, low: float) -> tuple[dict[int, list[tuple[Box, float]]], list[float]]:
    """The model's boxes per page (top-left, as `extract()` reads) with their scores, down
    to `low`, and the pages' heights."""
    import pdfplumber

    found = table_regions(pdf, settings=LayoutSettings(min_score=low))
    with pdfplumber.open(str(pdf)) as doc:
        heights = [float(p.height) for p in doc.pages]
    return {page: [(r.bbox, r.score) for r in regions] for page, regions in found.items()}, heights


def as_found(pdf: Path, page: int, box: Box, height: float) -> Found:
    """A model box as a scored region (displayed frame, the page's words inside)."""
    shown = (box[0], height - box[3], box[2], height - box[1])
    return Found(page, shown, words=words_inside(pdf, page, shown))


def gate_open(pdf: Path, page: int, tables: list[Box]) -> bool:
    """Whether the page shows the model something tabular outside the rules' tables."""
    import pdfplumber

    with pdfplumber.open(str(pdf)) as doc:
        raw = doc.pages[page - 1]
        words = page_words(raw, TableSettings())
        return worth_a_look(words, raw.rects, tables)


def cause(pdf: Path, page: int, box: Box, rules: Extracted, joined: Extracted) -> str:
    """Why the join lost the table the model's `box` matches on `page`."""
    if page in joined.turned:
        return "turned"
    found = rules.boxes.get(page, [])
    if covered(box, found, LayoutSettings().found_covered):
        return "covered"
    new = [b for b in joined.boxes.get(page, []) if b not in found]
    if not new:
        return "gate" if not gate_open(pdf, page, found) else "unread"
    best = max((box_iou(box, b) for b in new), default=0.0)
    return f"misread (IoU {best:.2f} with the model's box)" if best > 0 else "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="eu,camelot,tabula,generated,synth,wide")
    source_arguments(parser, "tune", "wide-tune", "last-tune")
    parser.add_argument("--scores", default=str(LayoutSettings.min_score), help="model thresholds")
    parser.add_argument("--why", action="store_true", help="list each table the join loses")
    parser.add_argument(
        "--before", action="store_true", help="also the join before item 4's rules (found_part 0)"
    )
    args = parser.parse_args()
    for noisy in ("pdfminer", "playa"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    scores = sorted(float(s) for s in args.scores.split(","))
    print(machine())
    print("| source | " + " | ".join(f"model >= {s:g}" for s in scores), end="")
    before = " | joined before (`found_part` 0)" if args.before else ""
    print(f" | rules{before} | joined | lost by the join |")
    print("|---" * (len(scores) + 4 + args.before) + "|")
    for key in [k for k in args.source.split(",") if k]:
        if key not in SOURCES:
            sys.exit(f"unknown source {key!r}")
        source = load(key, args)
        if isinstance(source, str):
            print(f"| {key} | not scored: {source} |")
            continue
        row(source, args, scores)


@dataclass
class Tally:
    """One source's figures: each reader's counts, why the join lost what the model found,
    how the join's boxes compare with the model's where both match, and notes."""

    model: dict[float, Count]
    rules: Count = field(default_factory=Count)
    joined: Count = field(default_factory=Count)
    before: Count = field(default_factory=Count)
    changed: list[str] = field(default_factory=list)  # files the join reads otherwise than before
    lost: Counter[str] = field(default_factory=Counter)
    disagree: Counter[str] = field(default_factory=Counter)  # which side the truth takes
    extent: list[float] = field(default_factory=list)  # joined IoU - model IoU, both matching
    notes: list[str] = field(default_factory=list)


def row(source: Source, args: argparse.Namespace, scores: list[float]) -> None:
    """Score one source and print its line (and, with `--why`, what the join lost)."""
    cases = [c for c in source.cases if not args.files or c.name in args.files.split(",")]
    tally = Tally({s: Count() for s in scores})
    for case in cases:
        score_case(case, source.every_table, scores, tally, args.before)
        sys.stdout.flush()
    causes = ", ".join(f"{k} {v}" for k, v in tally.lost.most_common()) or "none"
    cells = " | ".join(tally.model[s].cell() for s in scores)
    name = f"{source.key} ({len(cases)} PDFs)"
    before = f" | {tally.before.cell()}" if args.before else ""
    print(f"| {name} | {cells} | {tally.rules.cell()}{before} | {tally.joined.cell()} | {causes} |")
    if args.before:
        print(f"  {source.key}: read otherwise than before: {','.join(tally.changed) or 'none'}")
    if tally.extent:
        worse = sum(1 for d in tally.extent if d < -EXTENT_NOTE)
        better = sum(1 for d in tally.extent if d > EXTENT_NOTE)
        print(
            f"  {source.key}: {len(tally.extent)} tables both match by IoU; the join's box "
            f"nearer the truth's by > {EXTENT_NOTE} on {better}, further on {worse}"
        )
    if tally.disagree:
        sides = ", ".join(f"{k} {v}" for k, v in tally.disagree.most_common())
        print(f"  {source.key}: model boxes a joined region overlaps at IoU < {IOU_AGREE}: {sides}")
    if args.why and tally.notes:
        print("\n".join(tally.notes))


def score_case(
    case: Case, every_table: bool, scores: list[float], tally: Tally, before: bool
) -> None:
    """Read one PDF every way (`before`: also joined as before the join rules of issue 41
    item 4, `found_part` 0, in the same run) and add it to the tally."""
    boxes, heights = model_boxes(case.pdf, scores[0])
    per_score: dict[float, list[Found]] = {}
    for s in scores:
        per_score[s] = [
            as_found(case.pdf, page, box, heights[page - 1])
            for page, found in boxes.items()
            for box, score in found
            if score >= s
        ]
        tally.model[s].add(case, per_score[s], every_table)
    rules = read(case.pdf, model=False)
    joined = read(case.pdf, model=True)
    if before:
        old = read(case.pdf, model=True, layout=LayoutSettings(found_part=0.0))
        tally.before.add(case, old.regions, every_table)
        if [(r.page, r.box, r.words) for r in old.regions] != [
            (r.page, r.box, r.words) for r in joined.regions
        ]:
            tally.changed.append(case.name)
    tally.rules.add(case, rules.regions, every_table)
    pairs = tally.joined.add(case, joined.regions, every_table)
    mine = max((s for s in scores if s <= LayoutSettings().min_score), default=scores[0])
    model = per_score[mine]
    by_model = match_regions(case.tables, model)
    top_left = [b for page in sorted(boxes) for b, score in boxes[page] if score >= mine]
    for i, j in by_model.items():
        page = case.tables[i].page
        if i not in pairs:
            why = cause(case.pdf, page, top_left[j], rules, joined)
            tally.lost[why.split(" (")[0]] += 1
            tally.notes.append(f"  {case.name} p{page} table {i}: {why}")
            continue
        truth = case.tables[i].box
        if truth is None:
            continue
        ours = box_iou(joined.regions[pairs[i]].box, truth)
        theirs = box_iou(model[j].box, truth)
        tally.extent.append(ours - theirs)
        if ours < theirs - EXTENT_NOTE:
            tally.notes.append(
                f"  {case.name} p{page} table {i}: IoU {ours:.2f} joined, {theirs:.2f} model: "
                + _sides(joined.regions[pairs[i]].box, truth)
            )
    right = set(pairs.values())
    for k, found in enumerate(model):  # model boxes the join read otherwise
        near = [r for r in range(len(joined.regions)) if joined.regions[r].page == found.page]
        best = max(near, key=lambda r: box_iou(joined.regions[r].box, found.box), default=None)
        if best is None or not 0 < box_iou(joined.regions[best].box, found.box) < IOU_AGREE:
            continue
        sides = [n for n, ok in (("model", k in by_model.values()), ("join", best in right)) if ok]
        verdict = " and ".join(sides) or "neither"
        tally.disagree[verdict] += 1
        tally.notes.append(
            f"  {case.name} p{found.page}: the join's box {_box(joined.regions[best].box)}, "
            f"the model's {_box(found.box)}: the truth matches {verdict}"
        )
    for j in judged(case.tables, joined.regions, every_table):
        found = joined.regions[j]
        if j not in right:
            tally.notes.append(f"  {case.name} p{found.page}: matches nothing {_box(found.box)}")
    if joined.refused:
        tally.notes.append(f"  {case.name}: refused: {joined.refused}")


def _sides(box: Box, truth: Box) -> str:
    """Where a found box (displayed frame) departs from the truth's, in points."""
    names = ("left", "bottom", "right", "top")
    moved = [b - t if k < 2 else t - b for k, (b, t) in enumerate(zip(box, truth, strict=True))]
    return (
        ", ".join(
            f"{n} {'in' if m > 0 else 'out'} {abs(m):.0f}"
            for n, m in zip(names, moved, strict=True)
            if abs(m) > 3
        )
        or "same"
    )


def _box(box: Any) -> str:
    """A box in whole points."""
    return "(" + ", ".join(f"{v:.0f}" for v in box) + ")"


if __name__ == "__main__":
    main()
