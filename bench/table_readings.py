"""Whether a change to table reading leaves every reading as it was: each PDF of the
sources read by `extract` (layout model on, as the pipeline reads it), every page's
tables (cells, header, title, boxes, column edges) and lines (text, the table each is
in) saved as JSON; two saves compared file by file. For refactors that must not change
what is read: run it on the tree before and after, then `--compare`.

Sources (`--source`, default every one available): `eu` (ICDAR 2013 EU), `real`
(`../shared/corpora/real-pdfs`), `generated` (`table_corpus.py`, written into
`--generated-dir`), `synth` (the PDFs cached in `--synth-dir` by `tables.py --source
synth`), `camelot` / `tabula` (their test folders, as `tables.py` takes them). The ICDAR
2013 US files and the NICS background-check PDFs are never read.

    python bench/table_readings.py --save before.json [--source eu,real,...]
    python bench/table_readings.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from _common import REPO

from synth.table_truth import held_out

CORPORA = REPO.parent / "shared" / "corpora"
SOURCES = ("eu", "real", "generated", "synth", "camelot", "tabula")


def pdfs(key: str, args: argparse.Namespace) -> list[Path]:
    """The PDFs of one source (none where it is not available here)."""
    folders = {
        "eu": CORPORA / "tables-icdar2013-eu",
        "real": CORPORA / "real-pdfs",
        "synth": Path(args.synth_dir),
        "camelot": Path(args.camelot_tests) if args.camelot_tests else None,
        "tabula": Path(args.tabula_tests) if args.tabula_tests else None,
    }
    if key == "generated":
        from synth.table_corpus import generated_source

        folder = Path(args.generated_dir)
        folder.mkdir(parents=True, exist_ok=True)
        return [case.pdf for case in generated_source(folder).cases]
    folder = folders[key]
    if folder is None or not folder.is_dir():
        return []
    found = sorted(folder.rglob("*.pdf"))
    return [p for p in found if not held_out(p) and "nics" not in p.name.lower()]


def reading(pdf: Path) -> Any:
    """Every page's tables and lines as extract reads them, or its one-line error."""
    from rag_assets.core.extract import extract
    from rag_assets.core.extract.model import PdfError

    try:
        extraction = extract(pdf)
    except PdfError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # a crash is a reading too: it must not differ either
        return {"crash": f"{type(exc).__name__}: {exc}"}
    pages = [
        {
            "tables": [
                dict(t.as_row(), columns=t.columns, row_bboxes=t.row_bboxes) for t in p.tables
            ],
            "lines": [[line.text, line.table] for line in p.lines],
            "ocr": p.ocr,
        }
        for p in extraction.pages
    ]
    return [*pages, extraction.stats]


def compare(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Print how many files were read alike, by source; True when none differs."""
    common = sorted(set(before) & set(after))
    differ = [k for k in common if before[k] != after[k]]
    by_source: dict[str, int] = {}
    for key in common:
        by_source[key.split("/")[0]] = by_source.get(key.split("/")[0], 0) + 1
    print(f"compared {len(common)} PDFs {by_source}: {len(differ)} read differently")
    gone, new = len(set(before) - set(after)), len(set(after) - set(before))
    print(f"only before: {gone}, only after: {new}")
    for key in differ:
        print(f"  differs: {key}")
    return not differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="", help=f"comma-separated, of {','.join(SOURCES)}")
    parser.add_argument("--save", default="", help="write the readings as JSON")
    parser.add_argument("--compare", nargs=2, default=[], metavar="RUN")
    parser.add_argument("--generated-dir", default="/tmp/trecho-table-corpus")
    parser.add_argument("--synth-dir", default="/tmp/trecho-synth", help="cached synth PDFs")
    parser.add_argument("--camelot-tests", default=os.environ.get("TRECHO_CAMELOT_TESTS", ""))
    parser.add_argument("--tabula-tests", default=os.environ.get("TRECHO_TABULA_TESTS", ""))
    args = parser.parse_args()
    if args.compare:
        runs = [json.loads(Path(p).read_text()) for p in args.compare]
        sys.exit(0 if compare(*runs) else 1)
    if not args.save:
        parser.error("--save FILE or --compare BEFORE AFTER")
    for noisy in ("pdfminer", "playa", "rapid_layout"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    out: dict[str, Any] = {}
    for key in [k for k in args.source.split(",") if k] or list(SOURCES):
        start, found = time.perf_counter(), pdfs(key, args)
        for pdf in found:
            out[f"{key}/{pdf.relative_to(pdf.parents[1])}"] = reading(pdf)
        print(f"{key}: {len(found)} PDFs, {time.perf_counter() - start:.0f} s", flush=True)
    Path(args.save).write_text(json.dumps(out, sort_keys=True, default=list))


if __name__ == "__main__":
    main()
