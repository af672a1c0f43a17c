"""One measurement of `bench/scale.py`, in its own process: run with the source tree
under test first on PYTHONPATH (this tree's or `--tree`'s), it imports what the commands
import (`imports`: seconds), then runs one operation on a lake `--times` times and prints
one JSON line: `first` and `again` (seconds of the first and of the last call: the first
also loads what the operation loads lazily, a model, and finds the lake's memo as the
last command left it), `rss_kb` (the process's peak resident memory) and what the
operation returned.

    python bench/_scale_probe.py status|plan|sensor|materialize|upkeep|tables LAKE [TIMES [LABEL]]

Uses only what the product exposes to its commands (`rag_assets.cli.main`, the
definitions, `plan_lake`, the sensor), so an older tree runs it unchanged.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any


def _pipeline(root: Path) -> tuple[Any, Any]:
    """The definitions of the lake and its Dagster instance, as `trecho` opens them."""
    from rag_assets.definitions import build_definitions
    from rag_assets.orchestration.materialize import open_instance

    return build_definitions(str(root)), open_instance(root / ".dagster")


def _cli(args: list[str]) -> dict[str, Any]:
    """`trecho <args>` in this process, its output kept (lines counted)."""
    from rag_assets.cli import main

    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(args)
    inner = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"trecho {' '.join(args)}: exit {code}\n{out.getvalue()[-2000:]}")
    text = out.getvalue()
    return {"inner": inner, "lines": text.count("\n"), "tail": text.splitlines()[-6:]}


def status(root: Path) -> dict[str, Any]:
    """`trecho status`."""
    return _cli(["status", "--lake", str(root)])


def materialize(root: Path) -> dict[str, Any]:
    """`trecho materialize --skip-eval`."""
    return _cli(["materialize", "--skip-eval", "--lake", str(root)])


def plan(root: Path) -> dict[str, Any]:
    """The reconcile plan `trecho materialize` starts with (`plan_lake`), alone."""
    from rag_assets.orchestration.plans import plan_lake

    defs, instance = _pipeline(root)
    resources = defs.resources
    embedder = resources["embedder"].embedder()
    start = time.perf_counter()
    planned = plan_lake(instance, resources["lake"], resources["lancedb"], embedder)
    inner = time.perf_counter() - start
    return {
        "inner": inner,
        "live": len(planned.scan.live),
        "run": len(planned.run),
        "remove": len(planned.remove),
    }


def sensor(root: Path) -> dict[str, Any]:
    """One tick of `raw_folder_sensor`, its cursor kept next to the lake between calls
    (the daemon keeps it in the instance): the first call ticks with none."""
    from dagster import SkipReason, build_sensor_context

    defs, instance = _pipeline(root)
    label = sys.argv[4] if len(sys.argv) > 4 else "now"  # each source tree its own cursor
    saved = root.parent / f"{root.name}.{label}.sensor-cursor.json"
    cursor = saved.read_text(encoding="utf-8") if saved.exists() else None
    tick = defs.resolve_sensor_def("raw_folder_sensor")
    context = build_sensor_context(
        instance=instance, definitions=defs, resources=defs.resources, cursor=cursor
    )
    start = time.perf_counter()
    result = tick(context)
    inner = time.perf_counter() - start
    if isinstance(result, SkipReason):
        requests, cursor = 0, context.cursor
    else:
        requests, cursor = len(result.run_requests or []), result.cursor
    if cursor:
        saved.write_text(cursor, encoding="utf-8")
    return {"inner": inner, "requests": requests, "had_cursor": saved.exists()}


def tables(root: Path) -> dict[str, Any]:
    """Fragments, versions and bytes of every LanceDB table of the lake."""
    import lancedb

    db = lancedb.connect(str(root / "lancedb"))
    out: dict[str, Any] = {"inner": 0.0}
    for name in db.list_tables().tables:
        tbl = db.open_table(name)
        stats = tbl.stats()
        out[name] = {
            "rows": stats["num_rows"],
            "fragments": stats["fragment_stats"]["num_fragments"],
            "versions": len(tbl.list_versions()),
        }
    return out


def upkeep(root: Path) -> dict[str, Any]:
    """The table upkeep the product runs on its schedule (`trecho upkeep`); nothing in a
    tree that has none."""
    try:
        from rag_assets.core.index.upkeep import upkeep_tables
    except ImportError:
        return {"inner": 0.0, "done": "no upkeep in this tree"}
    start = time.perf_counter()
    done = upkeep_tables(str(root / "lancedb"))
    return {"inner": time.perf_counter() - start, "done": [str(d) for d in done]}


PROBES = {f.__name__: f for f in (status, materialize, plan, sensor, tables, upkeep)}


def warm_imports() -> float:
    """Import what every command imports (LanceDB alone takes seconds here), so that
    `inner` is the operation's own time; returns the seconds that took."""
    start = time.perf_counter()
    import lancedb  # noqa: F401

    import rag_assets.cli  # noqa: F401
    import rag_assets.cli.status  # noqa: F401
    import rag_assets.definitions  # noqa: F401
    import rag_assets.orchestration.materialize  # noqa: F401

    return time.perf_counter() - start


def main() -> None:
    """Run one probe and print its JSON line."""
    name, root = sys.argv[1], Path(sys.argv[2]).resolve()
    times = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    os.environ.pop("DAGSTER_HOME", None)
    imports = warm_imports()
    calls = [PROBES[name](root) for _ in range(times)]
    out = calls[-1]
    out["first"], out["again"] = calls[0]["inner"], calls[-1]["inner"]
    out["imports"] = imports
    out["rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("PROBE " + json.dumps(out, default=str), flush=True)


if __name__ == "__main__":
    main()
