"""An eval that reuses its work (issue 42): seconds of `trecho eval` run twice with
nothing changed, and of the eval after a one-version change with the eval's caches
(baseline chunk vectors under `<lake>/cache/eval-vectors`) against without them (what
every eval did before: each baseline text embedded again). One run, both sides measured
in it, each a whole `trecho eval` process as a user runs it.

The lake: the two sample manuals and their question file, indexed first (not timed).
The one-version change: a new two-page version of a new document (`aviso@v1`, fresh
numbers: none of its text in any cache) indexed by `trecho materialize --skip-eval`
(not timed); then the eval with the caches warm, then the same eval with the eval's
caches deleted. Usage::

    python bench/eval_reuse.py                       # the product's model (e5)
    python bench/eval_reuse.py --model all-MiniLM-L6-v2 --offsets 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _common import machine  # noqa: E402
from ui_latency import write_pdf  # noqa: E402

DOCS = ("manual-operacao", "manual-beneficiario")
QUESTIONS = "manuais.jsonl"


def trecho(lake: Path, *args: str, model: str | None) -> tuple[float, str]:
    """Seconds one `trecho` command took, and what it said on stderr."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "DAGSTER_HOME": str(lake / ".dagster"),
    }
    if model:
        env["TRECHO_MODEL"] = model
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args, "--lake", str(lake)],
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"trecho {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return took, done.stderr


def main() -> None:
    """Print the four timings and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="TRECHO_MODEL (default: the configured one)")
    parser.add_argument("--offsets", default="4", help="trecho eval --offsets (default 4)")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(prefix="eval-reuse-") as tmp:
        lake = Path(tmp) / "lake"
        for doc in DOCS:
            shutil.copytree(REPO / "data_lake" / "raw" / doc, lake / "raw" / doc)
        (lake / "eval").mkdir(parents=True)
        shutil.copy(REPO / "data_lake" / "eval" / QUESTIONS, lake / "eval" / QUESTIONS)
        trecho(lake, "materialize", "--skip-eval", model=args.model)
        ev = ("eval", "--offsets", args.offsets)

        first, _ = trecho(lake, *ev, model=args.model)
        again, said = trecho(lake, *ev, model=args.model)
        assert "reused the result of" in said, said
        print(
            f"trecho eval, nothing changed: {first:.1f} s, then {again:.1f} s "
            f"= {again / first:.2f}x"
        )

        write_pdf(lake / "raw" / "aviso" / "v1.pdf", seed=42)
        trecho(lake, "materialize", "--skip-eval", model=args.model)
        after, said = trecho(lake, *ev, model=args.model)
        assert "reused" not in said, said  # the index changed: evaluated
        shutil.rmtree(lake / "cache" / "eval-vectors")
        shutil.rmtree(lake / "cache" / "eval-results")
        before, _ = trecho(lake, *ev, model=args.model)
        print(
            f"trecho eval after a one-version change: {before:.1f} s without the eval's "
            f"caches (before), {after:.1f} s with them (after) = {after / before:.2f}x"
        )


if __name__ == "__main__":
    main()
