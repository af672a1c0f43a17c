"""What leaving out the rectangles that draw nothing costs the ruled pass: pdfplumber's
table finder on the page as it is (before) against `regions.ruled_regions` of the
`regions.drawn` page (the white rectangles behind cells' text left out, then the
finder), side by side on the same pages, and how many pages had any and found other
regions.

Pages: the first five of each synthetic report seed 5000-5059 (`bench/synth_tables.py
generate --seeds report` writes them), of every real-world PDF of the shared corpora,
and of Camelot's test PDFs when `--camelot-tests` is given. Per page, in alternating
order, both (CPU seconds; the figure is the median of the per-page ratios new / old),
and this tree's whole `find_tables` for scale (the sums).

    python bench/unseen_cost.py [--camelot-tests /tmp/camelot/tests]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import REPO, SHARED_PDFS, first_pages, header, rotated


def _before(page: Any) -> list[tuple[float, ...]]:
    """The ruled regions as found before: pdfplumber's finder on the page as it is."""
    return [tuple(t.bbox) for t in page.find_tables() if len(t.rows) > 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth-dir", default="/tmp/trecho-synth/v4")
    parser.add_argument("--camelot-tests", type=Path, help="Camelot's tests/ folder")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from rag_assets.core.tables import find_tables
    from rag_assets.core.tables.regions import _unseen, drawn, ruled_regions

    def after(page: Any) -> list[tuple[float, ...]]:
        return [r.bbox for r in ruled_regions(drawn(page))]

    header("ruled regions: pdfplumber's finder alone vs with unseen rectangles left out", args)
    files = [Path(args.synth_dir) / f"{seed}.pdf" for seed in range(5000, 5060)]
    files = [f for f in files if f.exists()] + sorted(SHARED_PDFS.glob("*.pdf"))
    if args.camelot_tests:
        files += sorted((args.camelot_tests / "files").rglob("*.pdf"))
    spent = {"before": 0.0, "after": 0.0, "find_tables": 0.0}
    pages = with_unseen = differ = 0
    ratios: list[float] = []
    for page in first_pages(files):
        rects = page.rects
        found, took = {}, {}
        for name, read in rotated([("before", _before), ("after", after)], pages):
            start = time.process_time()
            found[name] = read(page)
            took[name] = time.process_time() - start
            spent[name] += took[name]
        if took["before"] > 0:
            ratios.append(took["after"] / took["before"])
        start = time.process_time()
        find_tables(page)
        spent["find_tables"] += time.process_time() - start
        pages += 1
        with_unseen += bool(_unseen(rects, float(page.width * page.height)))
        differ += found["before"] != found["after"]
    print(f"pages: {pages} ({len(files)} files); with unseen rectangles: {with_unseen}")
    print(f"pages whose ruled regions changed: {differ}")
    for name in ("before", "after"):
        share = spent[name] / spent["find_tables"]
        print(f"{name}: {spent[name]:.3f} CPU s, {share:.3f} of this tree's find_tables")
    print(f"after / before, median per page: {statistics.median(ratios):.2f}")
    print(f"after / before, sums: {spent['after'] / spent['before']:.2f}")


if __name__ == "__main__":
    main()
