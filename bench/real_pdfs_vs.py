"""Every real-world PDF of `../shared/corpora/real-pdfs`, read by two source trees: the
outcome per file (indexed, or failed with its error) side by side.

Each tree, in its own process with its own code first on `PYTHONPATH` (this virtualenv),
runs what `tests/test_real_pdfs.py` runs: the folder as a raw lake, one `index_documents`
run per version on one ephemeral Dagster instance, the reading stages up to `chunks`
(embedding is the same for both and left out). Printed per file: indexed or the failed
run's error (its first line, and how many lines it has), or the pages, tables, table rows,
chunks and a digest of the chunks' text. The outcomes must match; the counts and the
text may move with the reader, and are flagged when they do.

    python bench/real_pdfs_vs.py                  # b809837 vs this tree
    python bench/real_pdfs_vs.py --old /path/to/tree
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO, SHARED_PDFS, header
from speed_vs import OLD, clean_env, describe, source_tree

Outcome = dict[str, object]
"""`error` (None when indexed), `lines` of the error, and the counts of an indexed file."""


def probe(out: Path) -> None:
    """Index every real PDF with the code on the path; write the outcomes to `out`."""
    import polars as pl
    from dagster import AssetKey, DagsterInstance

    import rag_assets
    from rag_assets.core.lake.layout import Lake, make_key
    from rag_assets.core.stages import CHUNKS, EXTRACTION
    from rag_assets.definitions import build_definitions
    from rag_assets.orchestration.partitions import DOC_VERSIONS

    print(f"rag_assets from {Path(rag_assets.__file__).parent}", flush=True)
    lake = Lake(Path(tempfile.mkdtemp(prefix="real-pdfs-vs-")) / "lake")
    names: dict[str, str] = {}
    for pdf in sorted(SHARED_PDFS.glob("*.pdf")):
        key = make_key(pdf.stem.lower(), "v1")
        names[key] = pdf.name
        (lake.raw_dir / pdf.stem.lower()).mkdir(parents=True)
        shutil.copy(pdf, lake.raw_dir / pdf.stem.lower() / "v1.pdf")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, list(names))
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    selection = [AssetKey(stage) for stage in [*EXTRACTION, CHUNKS]]
    outcomes: dict[str, Outcome] = {}
    for key, name in names.items():
        run = job.execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False, asset_selection=selection
        )
        if not run.success:
            errors = [
                e.step_failure_data.error.message.strip()
                for e in run.all_events
                if e.event_type_value == "STEP_FAILURE"
            ]
            first = errors[0] if errors else "no step failure recorded"
            first = first.replace(str(lake.root), "<lake>")  # each tree has its own lake
            outcomes[name] = {"error": first.splitlines()[0], "lines": len(first.splitlines())}
            continue
        nodes = pl.read_parquet(lake.stage_path("nodes", key))
        chunks = pl.read_parquet(lake.stage_path("chunks", key))
        outcomes[name] = {
            "error": None,
            "pages": pl.read_parquet(lake.stage_path("pages", key)).height,
            "tables": nodes.filter(pl.col("kind") == "table").height,
            "table rows": pl.read_parquet(lake.stage_path("tables", key)).height,
            "chunks": chunks.height,
            "chunk text": hashlib.sha1("\x00".join(chunks["text"]).encode()).hexdigest()[:10],
        }
        print(f"  {name}: {outcomes[name]}", flush=True)
    out.write_text(json.dumps(outcomes, indent=1))
    shutil.rmtree(lake.root.parent, ignore_errors=True)


def outcomes_of(tree: Path, out: Path) -> dict[str, Outcome]:
    """Run the probe from `tree` in a fresh process; its outcomes."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--probe", str(out)]
    done = subprocess.run(cmd, cwd=tree, env=clean_env(tree), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"probe from {tree} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    print(next(x for x in done.stdout.splitlines() if x.startswith("rag_assets from")))
    return json.loads(out.read_text())


def show(outcome: Outcome) -> str:
    """One cell: the error, or the counts."""
    if outcome["error"]:
        return f"FAILED ({outcome['lines']} line): {outcome['error']}"
    return "indexed: " + ", ".join(f"{k} {v}" for k, v in outcome.items() if k != "error")


def main() -> None:
    """Both trees' outcomes per file, and whether they match."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", default=OLD, help=f"folder or git revision (default {OLD})")
    parser.add_argument("--new", default=str(REPO), help="folder (default: this tree)")
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.probe)
        return
    header("real-world PDFs: outcome per file, old tree and new tree", args)
    work = Path(tempfile.mkdtemp(prefix="real-pdfs-vs-"))
    try:
        with source_tree(args.old) as old, source_tree(args.new) as new:
            print(f"old: {old} at {describe(old)}\nnew: {new} at {describe(new)}")
            before = outcomes_of(old, work / "old.json")
            after = outcomes_of(new, work / "new.json")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    changed = moved = 0
    for name in sorted(before.keys() | after.keys()):
        a, b = before.get(name), after.get(name)
        same = a is not None and b is not None and a["error"] == b["error"]
        changed += not same
        moved += same and a != b
        note = (
            ""
            if a == b
            else "   <- counts or chunk text differ"
            if same
            else "   <- OUTCOME CHANGED"
        )
        print(f"{name}{note}")
        print(f"  old: {show(a) if a else 'absent'}\n  new: {show(b) if b else 'absent'}")
    failed = sum(1 for o in after.values() if o["error"])
    print(
        f"\n{len(after)} files: {len(after) - failed} indexed, {failed} failed (new tree); "
        f"{changed} outcome(s) differ from the old tree's; {moved} indexed file(s) with other "
        "counts or chunk text"
    )


if __name__ == "__main__":
    main()
