"""A newcomer's `make demo`: a fresh clone of this repository, timed from `make demo` to its
last line, for this checkout's commit beside another (issue 44), on one machine with the
same package caches.

For each side, one after the other (`--order` picks which first): `git clone` of this
repository into a temporary folder, checked out at the side's commit, then `make demo`
in it (its own new `.venv`; Debian packages as the machine has them; uv's and pip's
caches as they are, warm after the first install). Each output line is stamped on
arrival, so the run splits into set-up (up to the line `==> ready`) and the rest (the
sample lake materialized, the eval report written). The clones are deleted afterwards
(`--keep` keeps them).

    python bench/demo_clone.py [--against 84aad86] [--ref HEAD] [--order new-first]
    python bench/demo_clone.py --against none        # this side alone (no ratio)

Uncommitted changes are not in a clone: commit before timing them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _common import REPO, machine


def rev(ref: str) -> str:
    """The short hash of `ref` in this repository."""
    out = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", ref],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def timed_demo(commit: str, into: Path, log: Path) -> tuple[float, float, int]:
    """(seconds of set-up, seconds in all, exit code) of `make demo` in a fresh clone of
    this repository at `commit`; its output goes to `log`, each line after its second."""
    subprocess.run(["git", "clone", "-q", str(REPO), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "-q", commit], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("DAGSTER_HOME", None)
    env.pop("TRECHO_LAKE", None)
    start = time.perf_counter()
    setup = None
    with log.open("w") as out:
        process = subprocess.Popen(
            ["make", "demo"],
            cwd=into,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            now = time.perf_counter() - start
            if setup is None and line.startswith("==> ready"):
                setup = now
            out.write(f"{now:7.1f} {line}")
        code = process.wait()
    total = time.perf_counter() - start
    return (setup if setup is not None else float("nan")), total, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--against", default="84aad86", help="the commit to compare with ('none': no other)"
    )
    parser.add_argument("--ref", default="HEAD", help="this side's commit (default HEAD)")
    parser.add_argument("--order", choices=("new-first", "old-first"), default="new-first")
    parser.add_argument("--keep", action="store_true", help="keep the clones")
    args = parser.parse_args()
    sides = {"this": rev(args.ref)}
    if args.against != "none":
        sides["against"] = rev(args.against)
    order = ["this", "against"] if args.order == "new-first" else ["against", "this"]
    order = [name for name in order if name in sides]
    print(machine())
    results: dict[str, tuple[float, float, int]] = {}
    base = Path(tempfile.mkdtemp(prefix="demo-clone-"))
    try:
        for name in order:
            commit = sides[name]
            log = base / f"{commit}.log"
            results[name] = timed_demo(commit, base / commit, log)
            setup, total, code = results[name]
            print(
                f"  {commit}: make demo {total:.1f} s (set-up {setup:.1f} s, then "
                f"{total - setup:.1f} s), exit {code}; log {log}"
            )
    finally:
        if not args.keep:
            for name in order:
                shutil.rmtree(base / sides[name], ignore_errors=True)
    if "against" not in results:
        return
    new, old = results["this"], results["against"]
    print()
    print(f"| fresh clone, `make demo` (s) | {sides['against']} | {sides['this']} | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for label, i in (("set-up", 0), ("in all", 1)):
        print(f"| {label} | {old[i]:.1f} | {new[i]:.1f} | {new[i] / old[i]:.2f} |")
    rest_old, rest_new = old[1] - old[0], new[1] - new[0]
    print(f"| the rest | {rest_old:.1f} | {rest_new:.1f} | {rest_new / rest_old:.2f} |")
    if new[2] or old[2]:
        raise SystemExit(f"make demo failed (exit {new[2]} / {old[2]}): see the logs in {base}")


if __name__ == "__main__":
    main()
