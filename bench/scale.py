"""trecho at scale: what grows with the lake, per lake size (issue 26).

Two kinds of lake, same shape (`_scale_lake.layout`: documents of one to three versions,
some revoked, the older ones superseded):

1. synthesized (`--synth 20,200,2000,10000`): the state `trecho materialize` leaves,
   written at the Parquet, LanceDB and Dagster level (no PDF, nothing embedded), for the
   planning paths: `trecho status` on the raw lake before anything is indexed (first
   call, then again), then on the indexed lake `trecho status`, the reconcile plan of
   `trecho materialize`, a sensor tick (without a cursor, then with the one it left), a
   no-change `trecho materialize`; then one changed version (a real PDF in place of one
   version's file: the real pipeline runs it), the tables' fragments and versions before
   and after the product's upkeep, and disk per chunk;
2. real (`--real 20,200`): small real PDFs by the sample-corpus generator, indexed cold
   with the real CLI (`trecho materialize --skip-eval`, MiniLM), then the same figures.

Every figure is one process (`_scale_probe.py`), which imports what a command imports
first and then calls its operation twice: the figure is the second call (the first
also loads the model, finds the memo as the last command left it, or ticks without a
cursor); `wall` is the whole process (imports and model load included: what a user
waits for). The sizes are measured round by round, each round in a rotated order, and
each figure's median compared with the smallest size's (`1.23x`), so a burst of load on
this shared machine hits every size alike. `--before DIR` runs every probe also from
another source tree (e.g. `git archive <commit> | tar -x -C DIR`), alternating with
this one on the same lakes: the code before, side by side (`now ÷ before`).

    python bench/scale.py                                        # synth 20..10000, real 20,200
    python bench/scale.py --synth 20,200 --real 20 --rounds 1    # quick
    python bench/scale.py --synth "" --real 20,2000              # the cold-index criterion
    python bench/scale.py --before /tmp/before --real ""         # before/now, planning paths
    python bench/scale.py --synth 20,2000,10000 --add 20         # indexing as the lake grows
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
from dataclasses import replace
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
TREES: dict[str, Path] = {"now": REPO}
"""The source trees the probes run from, by label (`--before` adds `before`)."""
Found = dict[str, dict[int, dict[str, list[float]]]]
"""tree label -> size -> figure -> values over rounds."""


def say(line: str) -> None:
    """A progress line (on stderr: stdout holds the tables)."""
    print(f"  [{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def probe(name: str, lake: Path, times: int = 1, tree: str = "now") -> dict[str, Any]:
    """One probe in a fresh process, from a source tree: its JSON plus `wall`."""
    source = TREES[tree]
    env = {**os.environ, "PYTHONPATH": str(source), "TRECHO_MODEL": MINILM, "HF_HUB_OFFLINE": "1"}
    env.pop("DAGSTER_HOME", None)
    env.pop("TRECHO_LAKE", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(PROBE), name, str(lake), str(times), tree],
        env=env,
        cwd=source,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    wall = time.perf_counter() - start
    lines = [x for x in done.stdout.splitlines() if x.startswith("PROBE ")]
    if done.returncode != 0 or not lines:
        tail = done.stdout[-3000:] + done.stderr[-3000:]
        raise SystemExit(f"probe {name} on {lake} ({tree}) failed:\n{tail}")
    out = json.loads(lines[-1].removeprefix("PROBE "))
    out["wall"] = wall
    return out


def forget_memo(lake: Path) -> None:
    """Delete the lake's memo (`core.lake.listing`): the next command reads every file."""
    (lake / "cache" / "lake-state.json").unlink(missing_ok=True)


def disk_bytes(root: Path, skip: Sequence[str] = ("raw", "eval", ".dagster")) -> int:
    """Bytes under a folder, its top-level folders `skip` left out (default: a lake's
    inputs and its Dagster instance)."""
    total = 0
    for path in root.rglob("*"):
        if path.is_file() and path.relative_to(root).parts[0] not in skip:
            total += path.stat().st_size
    return total


def lance_counts(lake: Path) -> str:
    """`fragments/versions` of the model table and of the cache."""
    found = probe("tables", lake)
    parts = []
    for name, stats in sorted(found.items()):
        if isinstance(stats, dict) and not name.startswith("trecho_"):
            short = "table" if name.startswith("chunks__") else "cache"
            parts.append(f"{short} {stats['fragments']}/{stats['versions']}")
    return ", ".join(parts)


def change_one(lake: Path, spec: VersionSpec) -> None:
    """Put a real PDF, one sentence new, in place of one live version's file (new on
    every call: a kept lake changed by an earlier run is changed again)."""
    pdf = lake / "raw" / spec.doc_id / f"{spec.version}.pdf"
    pdf.write_bytes(render_pdf(spec, changed=str(time.time_ns())))


def rounds_of(
    sizes: Sequence[int], rounds: int, measure: Callable[[int, str], dict[str, float]]
) -> Found:
    """`measure(size, tree)` for every size and tree, `rounds` times, each round in a
    rotated order of sizes and of trees."""
    out: Found = {tree: {n: {} for n in sizes} for tree in TREES}
    for r in range(rounds):
        for n in rotated(list(sizes), r):
            for tree in rotated(list(TREES), r):
                say(f"round {r + 1}: {n:,} versions, {tree}")
                for name, value in measure(n, tree).items():
                    out[tree][n].setdefault(name, []).append(value)
    return out


def cells(values: dict[int, list[float]], sizes: Sequence[int], unit: str = "s") -> dict:
    """Medians per size, each with its ratio to the smallest size's median."""
    base = median(values[sizes[0]])
    out = {}
    for n in sizes:
        m = median(values[n])
        ratio = f" ({m / base:.2f}x)" if base > 0 and n != sizes[0] else ""
        out[n] = f"{m:.2f} {unit}{ratio}"
    return out


def rows_of(found: Found, labels: dict[str, str], sizes: Sequence[int]) -> dict[str, dict]:
    """Table rows: each figure of `labels` (key -> row name) per tree, and with two trees
    the ratio now ÷ before per size."""
    rows: dict[str, dict] = {}
    for key, name in labels.items():
        unit = "MiB" if key == "rss" else "s"
        for tree in TREES:
            values = {n: found[tree][n][key] for n in sizes}
            rows[name if len(TREES) == 1 else f"{name} ({tree})"] = cells(values, sizes, unit)
        if "before" in TREES:
            rows[f"{name}: now ÷ before"] = {
                n: f"{median(found['now'][n][key]) / median(found['before'][n][key]):.2f}"
                for n in sizes
            }
    return rows


def table(title: str, rows: dict[str, dict[int, str]], sizes: Sequence[int]) -> None:
    """Print one markdown table: a row per figure, a column per size."""
    print(f"\n### {title}\n")
    print("| figure | " + " | ".join(f"{n:,} versions" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(row.get(n, "") for n in sizes) + " |")
    sys.stdout.flush()


STEADY = {
    "status": "`trecho status`",
    "plan": "reconcile plan of `trecho materialize`",
    "tick first": "sensor tick without a cursor",
    "tick": "sensor tick with the cursor it left",
    "rerun": "no-change `trecho materialize`",
    "status wall": "`trecho status`, process wall (imports, model load)",
    "rerun wall": "no-change `trecho materialize`, process wall",
    "imports": "imports of a command (a constant)",
    "rss": "peak RSS of those processes",
}


def steady_figures(lakes: dict[int, Path], rounds: int) -> dict[str, dict]:
    """status, the plan, the sensor tick and a no-change rerun on indexed lakes."""
    sizes = sorted(lakes)

    def measure(n: int, tree: str) -> dict[str, float]:
        status, plan, tick, rerun = (
            probe(p, lakes[n], 2, tree) for p in ("status", "plan", "sensor", "materialize")
        )
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

    return rows_of(rounds_of(sizes, rounds, measure), STEADY, sizes)


def raw_status(sizes: Sequence[int], rounds: int, work: Path) -> dict[str, dict]:
    """`trecho status` on a raw lake not indexed yet (placeholder PDFs and sidecars):
    the first call of each round with no memo (every file hashed, every sidecar parsed;
    the model loaded too), then again."""
    lakes = {}
    for n in sizes:
        lakes[n] = work / f"raw-{n}"
        if not (lakes[n] / "raw").is_dir():
            write_raw(lakes[n], layout(n))

    def measure(n: int, tree: str) -> dict[str, float]:
        forget_memo(lakes[n])
        status = probe("status", lakes[n], 2, tree)
        second = probe("status", lakes[n], 1, tree)  # a new process, the memo as left
        return {
            "first": status["first"],
            "again": status["again"],
            "wall": status["wall"],
            "second": second["wall"],
        }

    labels = {
        "first": "`trecho status`, first call (no memo; the model loaded too)",
        "again": "`trecho status` again",
        "wall": "`trecho status`, process wall of both calls",
        "second": "`trecho status` in a new process after that one (the memo it left)",
    }
    return rows_of(rounds_of(sizes, rounds, measure), labels, sizes)


def change_and_upkeep(lakes: dict[int, Path], chunks: dict[int, int]) -> dict[str, dict]:
    """One changed version through the real pipeline (per tree, a different version),
    then the tables before and after this tree's upkeep, and disk per chunk."""
    sizes = sorted(lakes)
    rows: dict[str, dict] = {}
    for n in sizes:
        live = [s for s in layout(n) if s.live]
        for i, tree in enumerate(TREES):
            change_one(lakes[n], live[i])
            changed = probe("materialize", lakes[n], 1, tree)
            name = "one changed version: `trecho materialize`"
            name = name if len(TREES) == 1 else f"{name} ({tree})"
            rows.setdefault(name, {})[n] = f"{changed['first']:.2f} s"
        rows.setdefault("fragments/versions before upkeep", {})[n] = lance_counts(lakes[n])
        kept = probe("upkeep", lakes[n])
        rows.setdefault("upkeep (its work)", {})[n] = f"{kept['first']:.2f} s"
        rows.setdefault("fragments/versions after upkeep", {})[n] = lance_counts(lakes[n])
        per_chunk = disk_bytes(lakes[n]) / max(1, chunks[n]) / 1024
        rows.setdefault("disk per chunk (derived + LanceDB)", {})[n] = f"{per_chunk:.1f} kB"
    return rows


def renamed(specs: Sequence[VersionSpec], offset: int) -> list[VersionSpec]:
    """`specs` moved to other documents (`doc-00003` -> `doc-<offset + 3>`): versions no
    synthesized lake of up to `offset` documents has."""
    out = []
    for spec in specs:
        doc = f"doc-{offset + int(spec.doc_id[4:]):05d}"
        reason = spec.reason.replace(spec.doc_id, doc)
        out.append(replace(spec, doc_id=doc, reason=reason))
    return out


def added_cold(lakes: dict[int, Path], add: int, work: Path) -> dict[str, dict]:
    """`add` new real versions indexed cold by `trecho materialize` into a copy of each
    synthesized lake: what indexing costs per chunk once a lake holds that many versions
    (a cold index of 2,000 real versions takes hours here; this is its last stretch)."""
    sizes = sorted(lakes)
    specs = renamed(layout(add), 90_000)
    cost, wall, chunks, rss = {}, {}, {}, {}
    runs: dict[int, str] = {}
    for n in sizes:
        lake = work / f"added-{n}"
        shutil.rmtree(lake, ignore_errors=True)
        shutil.copytree(lakes[n], lake, symlinks=True)
        before = probe("tables", lake)
        probe("plan", lake)  # the copy's memo (kept per lake root), as the lake's own was
        instance = disk_bytes(lake / ".dagster", skip=("logs",))
        write_real_corpus(lake, specs)
        say(f"{add} new real versions into the {n:,}-version lake")
        done = probe("materialize", lake)
        after = probe("tables", lake)
        rows = sum(
            after[k]["rows"] - before.get(k, {}).get("rows", 0)
            for k in after
            if k.startswith("chunks__")
        )
        cost[n], wall[n], chunks[n] = [done["first"] / max(1, rows) * 1000], [done["first"]], rows
        rss[n] = [done["rss_kb"] / 1024]
        grown = disk_bytes(lake / ".dagster", skip=("logs",)) - instance
        runs[n] = f"{grown / add / 1024:.0f} kB"
        shutil.rmtree(lake, ignore_errors=True)
    live = sum(1 for s in specs if s.live)
    return {
        f"{add} new versions ({live} live): chunks indexed": {n: f"{chunks[n]:,}" for n in sizes},
        "their `trecho materialize` (its work)": cells(wall, sizes),
        "cost per chunk indexed": cells(cost, sizes, "ms"),
        "peak RSS": cells(rss, sizes, "MiB"),
        "Dagster instance growth per version run (its runs' events)": runs,
    }


def synth_part(sizes: Sequence[int], rounds: int, work: Path, add: int = 0) -> None:
    """Part 1: the synthesized lakes (a lake already built under `work` is reused)."""
    from rag_assets.settings import Settings

    os.environ["TRECHO_MODEL"] = MINILM
    embedder = Settings.from_env().embedder()
    lakes, chunks = {}, {}
    for n in sizes:
        lakes[n] = work / f"synth-{n}"
        marker = lakes[n] / "bench-counts.json"
        if not marker.exists():
            start = time.perf_counter()
            counts = synthesize(lakes[n], layout(n), embedder)
            marker.write_text(json.dumps(counts), encoding="utf-8")
            print(f"synthesized {n:,} versions: {counts} in {time.perf_counter() - start:.0f} s")
        chunks[n] = json.loads(marker.read_text(encoding="utf-8"))["chunks"]
    if add:
        table(
            "New real versions indexed into a lake of each size",
            added_cold(lakes, add, work),
            sizes,
        )
        return
    table("Raw lakes, not indexed: `trecho status`", raw_status(sizes, rounds, work), sizes)
    table("Synthesized indexed lakes: the planning paths", steady_figures(lakes, rounds), sizes)
    table("Synthesized lakes: one change, upkeep, disk", change_and_upkeep(lakes, chunks), sizes)


def cold_index(
    lakes: dict[int, Path], work: Path, sizes: Sequence[int]
) -> tuple[dict[str, dict], dict[int, int]]:
    """Each size indexed cold by `trecho materialize` (this tree), the smallest again at
    the end on a fresh copy of its raw folder (a second reading against drift); the
    rows, and the chunks indexed per size."""
    rows: dict[str, dict] = {"versions (live after the cold index)": {}}
    cold, per_chunk, rss = {}, {}, {}
    chunks: dict[int, int] = {}
    order = list(sizes) + ([sizes[0]] if len(sizes) > 1 else [])
    for i, n in enumerate(order):
        lake = lakes[n]
        if i == len(sizes):
            lake = work / f"real-{n}-again"
            shutil.copytree(lakes[n] / "raw", lake / "raw")
            (lake / "eval").mkdir()
        say(f"cold index of {n:,} real versions")
        done = probe("materialize", lake)
        found = probe("tables", lake)
        indexed = sum(s["rows"] for k, s in found.items() if k.startswith("chunks__"))
        chunks.setdefault(n, indexed)
        cold.setdefault(n, []).append(done["first"])
        per_chunk.setdefault(n, []).append(done["first"] / max(1, indexed) * 1000)
        rss.setdefault(n, []).append(done["rss_kb"] / 1024)
        live = sum(1 for s in layout(n) if s.live)
        rows["versions (live after the cold index)"][n] = f"{live:,} live, {indexed:,} chunks"
        print(f"cold index of {n:,} versions: {done['first']:.0f} s, {indexed} chunks")
    rows["cold index (its work)"] = cells(cold, sizes)
    rows["cold index per chunk"] = cells(per_chunk, sizes, "ms")
    rows["peak RSS of the cold index"] = cells(rss, sizes, "MiB")
    rows["fragments/versions after the cold index"] = {n: lance_counts(lakes[n]) for n in sizes}
    rows["Dagster instance on disk per version"] = {
        n: f"{disk_bytes(lakes[n] / '.dagster', skip=('logs',)) / n / 1024:.1f} kB" for n in sizes
    }
    rows["derived + LanceDB per chunk"] = {
        n: f"{disk_bytes(lakes[n]) / max(1, chunks[n]) / 1024:.1f} kB" for n in sizes
    }
    return rows, chunks


def real_part(sizes: Sequence[int], rounds: int, work: Path) -> None:
    """Part 2: real PDFs indexed cold with the CLI, then the same figures."""
    lakes: dict[int, Path] = {}
    for n in sizes:
        lakes[n] = work / f"real-{n}"
        written = write_real_corpus(lakes[n], layout(n))
        print(f"wrote {n:,} real PDFs ({written / n / 1024:.1f} kB each)")
    cold, chunks = cold_index(lakes, work, sizes)
    table("Real PDFs indexed cold with `trecho materialize`", cold, sizes)
    table("Real PDFs: the planning paths", steady_figures(lakes, rounds), sizes)
    table("Real PDFs: one change, upkeep, disk", change_and_upkeep(lakes, chunks), sizes)


def sizes_of(text: str) -> list[int]:
    """`20,200` as [20, 200] (empty: none)."""
    return sorted(int(x) for x in text.split(",") if x.strip())


def main() -> None:
    """Build the lakes, measure, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--synth", default="20,200,2000,10000", help="synthesized lake sizes")
    parser.add_argument("--real", default="20,200", help="real-PDF corpus sizes")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the repeated figures")
    parser.add_argument("--before", type=Path, help="also run every probe from this tree")
    parser.add_argument(
        "--now", type=Path, help="run the probes from this tree, not this checkout (a snapshot)"
    )
    parser.add_argument("--keep", type=Path, help="build the lakes here, keep and reuse them")
    parser.add_argument(
        "--add",
        type=int,
        default=0,
        help="only index this many new real versions into a copy of each synthesized lake",
    )
    args = parser.parse_args()
    now = args.now.resolve() if args.now else REPO
    TREES.clear()
    TREES.update({"before": args.before.resolve(), "now": now} if args.before else {"now": now})
    header("trecho at scale (bench/scale.py)", args)
    print("probes run from: " + ", ".join(f"{k} {v}" for k, v in TREES.items()))
    with tempfile.TemporaryDirectory(prefix="trecho-scale-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if sizes_of(args.synth):
            synth_part(sizes_of(args.synth), args.rounds, work, args.add)
        if sizes_of(args.real) and not args.add:
            real_part(sizes_of(args.real), args.rounds, work / "real")


if __name__ == "__main__":
    main()
