"""Peak memory and time of reading hostile PDFs: each written by `tests/hostile_pdfs.py`
into a temp folder, then read by `extract` in a fresh process under GNU time
(`/usr/bin/time -v`, from the Debian package `time`). The figures of docs/lifecycle.md
("Bounded memory for any PDF").

    python bench/hostile_pdfs.py            # the inflating stream at 1024 MB
    python bench/hostile_pdfs.py --mb 256
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synth.hostile import giant_image, huge_page, inflating_stream  # noqa: E402

READ = """
import sys
from pathlib import Path
from rag_assets.core.extract import PdfError, extract
try:
    extract(Path(sys.argv[1]))
    print("read")
except PdfError as exc:
    print(str(exc).split(": ", 1)[1])
"""


def main() -> None:
    """Print one line per hostile PDF: peak resident memory, wall time, the outcome."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=1024, help="MB the stream inflates to")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pdfs = {
            "200-inch page": huge_page(folder / "huge.pdf"),
            "200-inch page, /UserUnit 75000": huge_page(folder / "uu.pdf", user_unit=75000),
            f"stream inflating to {args.mb} MB": inflating_stream(folder / "in.pdf", args.mb),
            "image of 200,000 x 200,000 pixels": giant_image(folder / "image.pdf"),
        }
        for name, pdf in pdfs.items():
            done = subprocess.run(
                ["/usr/bin/time", "-v", sys.executable, "-c", READ, str(pdf)],
                capture_output=True,
                text=True,
                cwd=REPO,
                check=False,
            )
            peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
            wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
            mb = int(peak.group(1)) / 1024 if peak else float("nan")
            print(
                f"{name:36} {pdf.stat().st_size:>9,} bytes  peak {mb:7.0f} MB  "
                f"wall {wall.group(1) if wall else '?':>8}  {done.stdout.strip()}"
            )


if __name__ == "__main__":
    main()
