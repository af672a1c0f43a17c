"""trecho at scale: what grows with the lake, per lake size (issue 26).

Two kinds of lake, same shape (`_scale_lake.layout`: documents of one to three versions,
some revoked, the older ones superseded):

1. synthesized (`--synth 20,200,2000,10000`): the state `trecho materialize` leaves,
   written at the Parquet, LanceDB and Dagster level (no PDF, nothing embedded), for the
   planning paths: `trecho status` (first call, then again), the reconcile plan of
   `trecho materialize`, a sensor tick (without a cursor, then with the one it left), a
   no-change `trecho materialize`, one changed version (a real PDF in place of one
   version's file: the real pipeline runs it), the tables' fragments and versions
   before and after the product's upkeep, and disk per chunk;
2. real (`--real 20,200`): small real PDFs by the sample-corpus generator, indexed cold
   with the real CLI (`trecho materialize --skip-eval`, MiniLM), then the same figures.

Every figure is one process (`_scale_probe.py`): `wall` from its start to its end
(imports included: what a user waits for), `inner` the operation alone, `rss` its peak
memory. The sizes are measured round by round, each round in a rotated order, and the
medians compared with the smallest size's (`x smallest`), so a burst of load on this
shared machine hits every size alike. `--tree DIR` runs the probes from another source
tree (e.g. `git worktree add /tmp/before <commit>`): the same lakes, the code before.

    python bench/scale.py                                   # synth 20..10000, real 20,200
    python bench/scale.py --synth 20,200 --real 20 --rounds 2   # quick
    python bench/scale.py --synth "" --real 20,2000         # the cold-index criterion
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import header, median, rotated
from _scale_lake import (
    VersionSpec,
    layout,
    render_pdf,
    synthesize,
    write_raw,
    write_real_corpus,
)

REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).resolve().with_name("_scale_probe.py")
MINILM = "all-MiniLM-L6-v2"
TREE = REPO


def probe(name: str, lake: Path, times: int = 1) -> dict[str, Any]:
    """One probe in a fresh process, from the tree under test: its JSON plus `wall`."""
    env = {**os.environ, "PYTHONPATH": str(TREE), "TRECHO_MODEL": MINILM, "HF_HUB_OFFLINE": "1"}
    env.pop("DAGSTER_HOME", None)
    env.pop("TRECHO_LAKE", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(PROBE), name, str(lake), str(times)],
        env=env,
        cwd=TREE,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    wall = time.perf_counter() - start
    lines = [x for x in done.stdout.splitlines() if x.startswith("PROBE ")]
    if done.returncode != 0 or not lines:
        tail = done.stdout[-3000:] + done.stderr[-3000:]
        raise SystemExit(f"probe {name} on {lake} failed:\n{tail}")
    out = json.loads(lines[-1].removeprefix("PROBE "))
    out["wall"] = wall
    return out


def forget_memo(lake: Path) -> None:
    """Delete the lake's memo (`core.lake.listing`): the next command reads every file."""
    (lake / "cache" / "lake-state.json").unlink(missing_ok=True)


def disk_bytes(root: Path, skip: Sequence[str] = ("raw", "eval")) -> int:
    """Bytes under the lake, the input folders left out."""
    total = 0
    for path in root.rglob("*"):
        if path.is_file() and path.relative_to(root).parts[0] not in skip:
            total += path.stat().st_size
    return total


def lance_counts(lake: Path) -> str:
    """`fragments/versions` of the model table and of the cache, from the probe."""
    found = probe("tables", lake)
    parts = []
    for name, stats in sorted(found.items()):
        if isinstance(stats, dict) and not name.startswith("trecho_"):
            short = "table" if name.startswith("chunks__") else "cache"
            parts.append(f"{short} {stats['fragments']}/{stats['versions']}")
    return ", ".join(parts)


def change_one(lake: Path, spec: VersionSpec) -> None:
    """Put a real PDF, one sentence new, in place of one live version's file."""
    pdf = lake / "raw" / spec.doc_id / f"{spec.version}.pdf"
    pdf.write_bytes(render_pdf(spec, changed=True))


def rounds_of(
    sizes: Sequence[int], rounds: int, measure: Callable[[int], dict[str, float]]
) -> dict[int, dict[str, list[float]]]:
    """`measure(size)` for every size, `rounds` times, each round in a rotated order."""
    out: dict[int, dict[str, list[float]]] = {n: {} for n in sizes}
    for r in range(rounds):
        for n in rotated(list(sizes), r):
            for name, value in measure(n).items():
                out[n].setdefault(name, []).append(value)
    return out


def table(title: str, rows: dict[str, dict[int, str]], sizes: Sequence[int]) -> None:
    """Print one markdown table: a row per figure, a column per size."""
    print(f"\n### {title}\n")
    print("| figure | " + " | ".join(f"{n:,} versions" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells.get(n, "") for n in sizes) + " |")
    sys.stdout.flush()


def with_ratio(values: dict[int, list[float]], sizes: Sequence[int], unit: str = "s") -> dict:
    """Medians per size, each with its ratio to the smallest size's median."""
    base = median(values[sizes[0]])
    cells = {}
    for n in sizes:
        m = median(values[n])
        ratio = f" ({m / base:.2f}x)" if base > 0 and n != sizes[0] else ""
        cells[n] = f"{m:.2f} {unit}{ratio}"
    return cells


def steady_figures(lakes: dict[int, Path], rounds: int) -> dict[str, dict[int, str]]:
    """status, the plan, the sensor tick and a no-change rerun on indexed lakes: each
    probe calls its operation twice, the figure is the second call (the first also loads
    the model, or ticks without a cursor)."""
    sizes = sorted(lakes)

    def measure(n: int) -> dict[str, float]:
        status, plan, tick = (probe(p, lakes[n], 2) for p in ("status", "plan", "sensor"))
        rerun = probe("materialize", lakes[n], 2)
        return {
            "status": status["again"],
            "status wall": status["wall"],
            "plan": plan["again"],
            "tick first": tick["first"],
            "tick": tick["again"],
            "rerun": rerun["again"],
            "rerun wall": rerun["wall"],
            "imports": median([status["imports"], plan["imports"], rerun["imports"]]),
            "rss": max(status["rss_kb"], rerun["rss_kb"], tick["rss_kb"]) / 1024,
        }

    found = rounds_of(sizes, rounds, measure)
    pick = {name: {n: found[n][name] for n in sizes} for name in found[sizes[0]]}
    return {
        "`trecho status`": with_ratio(pick["status"], sizes),
        "reconcile plan of `trecho materialize`": with_ratio(pick["plan"], sizes),
        "sensor tick (no cursor: a daemon's first)": with_ratio(pick["tick first"], sizes),
        "sensor tick (with the cursor it left)": with_ratio(pick["tick"], sizes),
        "no-change `trecho materialize`": with_ratio(pick["rerun"], sizes),
        "imports of a command (constant)": with_ratio(pick["imports"], sizes),
        "`trecho status`, process wall (imports, model load)": with_ratio(
            pick["status wall"], sizes
        ),
        "no-change `trecho materialize`, process wall": with_ratio(pick["rerun wall"], sizes),
        "peak RSS of those processes": with_ratio(pick["rss"], sizes, "MiB"),
    }


def raw_status(sizes: Sequence[int], rounds: int, work: Path) -> dict[str, dict[int, str]]:
    """`trecho status` on a raw lake not indexed yet (placeholder PDFs and sidecars):
    the first call of each round with no memo (every file hashed, every sidecar
    parsed), then again."""
    lakes = {}
    for n in sizes:
        lakes[n] = work / f"raw-{n}"
        write_raw(lakes[n], layout(n))

    def measure(n: int) -> dict[str, float]:
        forget_memo(lakes[n])
        status = probe("status", lakes[n], 2)
        return {"first": status["first"], "again": status["again"], "wall": status["wall"]}

    found = rounds_of(sizes, rounds, measure)
    pick = {name: {n: found[n][name] for n in sizes} for name in found[sizes[0]]}
    return {
        "`trecho status`, first call (no memo; model load included)": with_ratio(
            pick["first"], sizes
        ),
        "`trecho status` again": with_ratio(pick["again"], sizes),
        "`trecho status`, process wall of both calls": with_ratio(pick["wall"], sizes),
    }


def change_and_upkeep(lakes: dict[int, Path], chunks: dict[int, int]) -> dict[str, dict]:
    """One changed version through the real pipeline, then the tables before and after
    upkeep, and disk per chunk."""
    sizes = sorted(lakes)
    rows: dict[str, dict[int, str]] = {"one changed version: `trecho materialize`": {}}
    rows["fragments/versions before upkeep"] = {}
    rows["upkeep (its work)"] = {}
    rows["fragments/versions after upkeep"] = {}
    rows["disk per chunk (derived + LanceDB)"] = {}
    for n in sizes:
        change_one(lakes[n], next(s for s in layout(n) if s.live))
        changed = probe("materialize", lakes[n])
        rows["one changed version: `trecho materialize`"][n] = f"{changed['first']:.2f} s"
        rows["fragments/versions before upkeep"][n] = lance_counts(lakes[n])
        kept = probe("upkeep", lakes[n])
        rows["upkeep (its work)"][n] = f"{kept['inner']:.2f} s"
        rows["fragments/versions after upkeep"][n] = lance_counts(lakes[n])
        rows["disk per chunk (derived + LanceDB)"][n] = (
            f"{disk_bytes(lakes[n]) / max(1, chunks[n]) / 1024:.1f} kB"
        )
    return rows


def synth_part(sizes: Sequence[int], rounds: int, work: Path) -> None:
    """Part 1: the synthesized lakes."""
    from rag_assets.settings import Settings

    os.environ["TRECHO_MODEL"] = MINILM
    embedder = Settings.from_env().embedder()
    lakes, chunks = {}, {}
    for n in sizes:
        start = time.perf_counter()
        counts = synthesize(work / f"synth-{n}", layout(n), embedder)
        lakes[n], chunks[n] = work / f"synth-{n}", counts["chunks"]
        print(f"synthesized {n:,} versions: {counts} in {time.perf_counter() - start:.0f} s")
    table("Raw lakes, not indexed: `trecho status`", raw_status(sizes, rounds, work), sizes)
    rows = steady_figures(lakes, rounds)
    table("Synthesized indexed lakes: the planning paths", rows, sizes)
    table("Synthesized lakes: one change, upkeep, disk", change_and_upkeep(lakes, chunks), sizes)


def real_part(sizes: Sequence[int], rounds: int, work: Path) -> None:
    """Part 2: real PDFs indexed cold with the CLI, then the same figures."""
    lakes, rows = {}, {"versions (live after the cold index)": {}}
    cold: dict[int, list[float]] = {}
    per_chunk: dict[int, list[float]] = {}
    chunks: dict[int, int] = {}
    rss: dict[int, list[float]] = {}
    for n in sizes:
        lakes[n] = work / f"real-{n}"
        written = write_real_corpus(lakes[n], layout(n))
        print(f"wrote {n:,} real PDFs ({written / n / 1024:.1f} kB each)")
    order = list(sizes) + ([sizes[0]] if len(sizes) > 1 else [])  # small, ..., small again
    for i, n in enumerate(order):
        lake = lakes[n]
        if i == len(sizes):  # the smallest again, on a fresh copy of its raw folder
            lake = work / f"real-{n}-again"
            shutil.copytree(lakes[n] / "raw", lake / "raw")
            (lake / "eval").mkdir()
        done = probe("materialize", lake)
        done["wall"] = done["first"]
        found = probe("tables", lake)
        rows_now = sum(s["rows"] for k, s in found.items() if k.startswith("chunks__"))
        chunks.setdefault(n, rows_now)
        cold.setdefault(n, []).append(done["wall"])
        per_chunk.setdefault(n, []).append(done["wall"] / max(1, rows_now) * 1000)
        rss.setdefault(n, []).append(done["rss_kb"] / 1024)
        live = sum(1 for s in layout(n) if s.live)
        rows["versions (live after the cold index)"][n] = f"{live:,} live, {rows_now:,} chunks"
        print(f"cold index of {n:,} versions: {done['wall']:.0f} s, {rows_now} chunks")
    rows["cold index (wall)"] = with_ratio(cold, sizes)
    rows["cold index per chunk"] = with_ratio(per_chunk, sizes, "ms")
    rows["peak RSS of the cold index"] = with_ratio(rss, sizes, "MiB")
    rows["fragments/versions after the cold index"] = {n: lance_counts(lakes[n]) for n in sizes}
    rows.update(steady_figures(lakes, rounds))
    table("Real PDFs indexed with `trecho materialize`", rows, sizes)
    table("Real PDFs: one change, upkeep, disk", change_and_upkeep(lakes, chunks), sizes)


def sizes_of(text: str) -> list[int]:
    """`20,200` as [20, 200] (empty: none)."""
    return sorted(int(x) for x in text.split(",") if x.strip())


def main() -> None:
    """Build the lakes, measure, print the tables."""
    global TREE
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--synth", default="20,200,2000,10000", help="synthesized lake sizes")
    parser.add_argument("--real", default="20,200", help="real-PDF corpus sizes")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the repeated figures")
    parser.add_argument("--tree", type=Path, help="run the probes from this source tree")
    parser.add_argument("--keep", type=Path, help="build the lakes here and keep them")
    args = parser.parse_args()
    TREE = args.tree.resolve() if args.tree else REPO
    header("trecho at scale (bench/scale.py)", args)
    print(f"probes run from: {TREE}")
    with tempfile.TemporaryDirectory(prefix="trecho-scale-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if sizes_of(args.synth):
            synth_part(sizes_of(args.synth), args.rounds, work)
        if sizes_of(args.real):
            real_part(sizes_of(args.real), args.rounds, work)


if __name__ == "__main__":
    main()
