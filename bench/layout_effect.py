"""Which PDFs the layout model changes: each read by `extract()` with the model (as the
product reads) and, where it looked at a page, again without it; prints the files whose
text or tables differ, to score just those with `bench/tables.py --files`.

    python bench/layout_effect.py 'GLOB' [--every N]
    python bench/layout_effect.py '/tmp/trecho-synth/v3/5[0-4]*.pdf'   # synth report seeds
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

import _common  # noqa: F401  (the repository's root on sys.path: synth)

from rag_assets.core.extract import OcrSettings, PdfError, extract
from rag_assets.core.layout import LayoutSettings
from synth.table_truth import held_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", help="a glob of PDFs")
    parser.add_argument("--every", type=int, default=1, help="every Nth file only")
    args = parser.parse_args()
    pdfs = [Path(p) for p in sorted(glob.glob(args.pattern)) if not held_out(p)][:: args.every]
    off_settings = LayoutSettings(enabled=False)
    seen = looked = changed = pages = pages_looked = 0
    for pdf in pdfs:
        try:
            with_model = extract(pdf, ocr=OcrSettings(enabled=False))
        except PdfError:
            continue
        seen += 1
        pages += len(with_model.pages)
        k = with_model.stats["layout_model_pages"]
        pages_looked += k
        if not k:
            continue
        looked += 1
        without = extract(pdf, ocr=OcrSettings(enabled=False), layout=off_settings)
        same = with_model.doc.text == without.doc.text and [
            [t.rows for t in p.tables] for p in with_model.pages
        ] == [[t.rows for t in p.tables] for p in without.pages]
        if not same:
            changed += 1
            print(f"changed: {pdf.stem}", flush=True)
    print(
        f"{seen} PDFs, {pages} pages: the model looked at {pages_looked} pages of {looked} "
        f"PDFs and changed {changed} PDFs"
    )


if __name__ == "__main__":
    main()
