"""Should the bundled layout model look at every page for headings? Its cost per page
beside reading the page, and what its `title` class would add to the heading rules.

The model (`core/layout/regions.py`, PicoDet on CDLA: text, title, figure, figure
caption, table, table caption, header, footer, reference, equation) runs today only on
pages that look tabular. This script runs it on every page of generated reports with a
known section tree (`synth/headings.py`) and prints, side by side in the same run:

- CPU seconds per page of the model (render + inference) and of reading the page
  (`extract` with the model off), and their ratio;
- of the true headings the rules miss, how many a `title` box would find (a box holding
  the heading's printed line); of the lines the rules wrongly take for headings, how many
  sit in no `title` box (what the model could veto); and the `title` boxes' precision
  against the true headings on those pages.

    python bench/layout_titles.py --seeds 0-39      # tune seeds; about 2 minutes
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: F401  (the repository's root on sys.path: synth)

from rag_assets.core.corpus import read_pdf  # noqa: E402
from rag_assets.core.extract import OcrSettings, extract  # noqa: E402
from rag_assets.core.layout.regions import (  # noqa: E402
    INPUT_HEIGHT,
    INPUT_WIDTH,
    LayoutSettings,
    _session,
    decode,
    model_input,
)
from rag_assets.core.layout.render import render_bgr  # noqa: E402
from rag_assets.core.structure.markers import squash  # noqa: E402
from synth import headings as synth  # noqa: E402


def title_boxes(pdf: Path, settings: LayoutSettings) -> tuple[dict[int, list[tuple]], float]:
    """Every page's `title` boxes (PDF points, top-left origin) and the CPU seconds spent."""
    import pypdfium2 as pdfium

    session, _ = _session(settings.threads)
    classes = session.get_modelmeta().custom_metadata_map["character"].splitlines()
    title = classes.index("title")
    document = pdfium.PdfDocument(str(pdf))
    out: dict[int, list[tuple]] = {}
    cpu = time.process_time()
    for number in range(1, len(document) + 1):
        page = document[number - 1]
        width, height = page.get_size()
        tensor = model_input(render_bgr(page, settings.dpi, settings.max_pixels))
        outputs = session.run(None, {session.get_inputs()[0].name: tensor})
        sx, sy = width / INPUT_WIDTH, height / INPUT_HEIGHT
        out[number] = [
            (x0 * sx, y0 * sy, x1 * sx, y1 * sy)
            for (x0, y0, x1, y1), _ in decode(outputs, title, settings.min_score)
        ]
        page.close()
    document.close()
    return out, time.process_time() - cpu


def inside(line: object, boxes: list[tuple], slack: float = 3.0) -> bool:
    """Whether a line's middle sits in one of the boxes."""
    x = (line.x0 + line.x1) / 2  # type: ignore[attr-defined]
    y = (line.top + line.bottom) / 2  # type: ignore[attr-defined]
    return any(
        b[0] - slack <= x <= b[2] + slack and b[1] - slack <= y <= b[3] + slack for b in boxes
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="0-39")
    parser.add_argument("--dir", type=Path, default=synth.DEFAULT_DIR)
    args = parser.parse_args()
    seeds = synth.parse_seeds(args.seeds)
    synth.generate(args.dir, seeds)
    settings = LayoutSettings()
    pages = read_cpu = model_cpu = 0.0
    missed = missed_boxed = false = false_unboxed = boxes_n = boxes_true = 0
    for seed in seeds:
        pdf, truth = synth.read(args.dir, seed)
        cpu = time.process_time()
        extraction = extract(
            pdf, ocr=OcrSettings(enabled=False), layout=LayoutSettings(enabled=False)
        )
        read_cpu += time.process_time() - cpu
        boxes, spent = title_boxes(pdf, settings)
        model_cpu += spent
        pages += len(extraction.pages)
        source, _ = read_pdf(pdf, "doc@v1")
        found = {
            squash(" ".join(p for p in (n.label, n.title) if p))
            for n in source.nodes
            if n.kind == "section"
        }
        true = {squash(h["text"]): h["page"] for h in truth["headings"]}
        for page in extraction.pages:
            own = boxes.get(page.page, [])
            boxes_n += len(own)
            for line in page.lines:
                text = squash(line.text)
                boxed = inside(line, own)
                if text in true and true[text] == page.page:
                    boxes_true += boxed
                    if text not in found:
                        missed += 1
                        missed_boxed += boxed
                elif text in found:
                    false += 1
                    false_unboxed += not boxed
    print(f"{len(seeds)} documents, {pages:.0f} pages")
    print(
        f"CPU per page: reading {read_cpu / pages:.3f} s, layout model {model_cpu / pages:.3f} s "
        f"({model_cpu / read_cpu:.2f}x the reading)"
    )
    print(f"true headings the rules miss: {missed}, of them in a title box: {missed_boxed}")
    print(
        f"lines the rules take for headings wrongly: {false}, "
        f"of them in no title box: {false_unboxed}"
    )
    print(f"title boxes: {boxes_n}, holding a true heading line: {boxes_true}")


if __name__ == "__main__":
    main()
