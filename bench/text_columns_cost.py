"""What finding text columns costs a page, this tree against an older revision's
`core/tables/text_columns.py`, side by side on the same words (and whether both cut the
pages alike).

Pages: the first five of each synthetic report seed 5000-5059 (`bench/synth_tables.py
generate --seeds report` writes them) and of every real-world PDF of the shared corpora.
Per page, in alternating order, the old and the new `by_text_column` (CPU seconds; the
figure is the median of the per-page ratios new / old), and this tree's whole
`find_tables` for scale (the sums).

    python bench/text_columns_cost.py --old c7c9ca0
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, SHARED_PDFS, first_pages, header, rotated


def _old_module(rev: str) -> object:
    """The revision's text_columns module, loaded beside this tree's table package."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:rag_assets/core/tables/text_columns.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "text_columns_old.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("text_columns_old", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="c7c9ca0", help="the revision to compare with")
    parser.add_argument("--synth-dir", default="/tmp/trecho-synth/v4")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))

    from rag_assets.core.tables import DEFAULT_SETTINGS, find_tables
    from rag_assets.core.tables import text_columns as new

    old = _old_module(args.old)
    header("finding text columns: this tree vs " + args.old, args)
    files = [Path(args.synth_dir) / f"{seed}.pdf" for seed in range(5000, 5060)]
    files = [f for f in files if f.exists()] + sorted(SHARED_PDFS.glob("*.pdf"))
    spent = {"old": 0.0, "new": 0.0, "find_tables": 0.0}
    pages = differ = 0
    ratios: list[float] = []
    for page in first_pages(files):
        try:
            words = page.extract_words(x_tolerance=DEFAULT_SETTINGS.word_x_tolerance)
        except Exception:  # noqa: BLE001
            continue
        groups, took = {}, {}
        for name, module in rotated([("old", old), ("new", new)], pages):
            start = time.process_time()
            groups[name] = module.by_text_column(words, DEFAULT_SETTINGS)
            took[name] = time.process_time() - start
            spent[name] += took[name]
        if took["old"] > 0:
            ratios.append(took["new"] / took["old"])
        start = time.process_time()
        find_tables(page, words=words)
        spent["find_tables"] += time.process_time() - start
        pages += 1
        differ += groups["old"] != groups["new"]
    print(f"pages: {pages} ({len(files)} files); pages cut differently: {differ}")
    for name in ("old", "new"):
        share = spent[name] / spent["find_tables"]
        print(f"{name}: {spent[name]:.3f} CPU s, {share:.3f} of this tree's find_tables")
    print(f"new / old, median per page: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
