"""What keeps a large lake cheap to plan, without changing what the plan decides: a
file read again only when it changed (even a same-size rewrite that kept its time), a
touched file not re-indexed, status right after edits, removals in one batch, each
document's newest version run first, the code versions read back only for new
materializations, and the tables' upkeep (its schedule included).

Real PDFs, real LanceDB tables in temp folders, real Dagster instances; no timing (the
speed is `bench/scale.py`'s).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import os
from pathlib import Path

import lancedb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from dagster import AssetMaterialization, DagsterInstance

from rag_assets.cli import main
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import Index
from rag_assets.core.index.upkeep import table_shape, upkeep_tables
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lifecycle.purge import purge_versions
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.plans import ran_with

from .conftest import copy_lake

OPS = "manual-operacao@v1"


def status_lines(lake: Lake) -> dict[str, str]:
    """`trecho status` on the lake: its version lines, by key."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["status", "--lake", str(lake.root)]) == 0
    lines = [x.split() for x in out.getvalue().splitlines() if x.startswith("  ")]
    return {
        parts[2 if parts[0] == "not" else 1]: " ".join(parts) for parts in lines if len(parts) > 2
    }


def same_size_rewrite(pdf: Path) -> bytes:
    """Rewrite a PDF with other bytes of the same size (one letter of its producer
    string), its modification time put back as it was; returns the new bytes."""
    before = pdf.stat()
    data = pdf.read_bytes()
    at = data.index(b"/Producer (") + len(b"/Producer (")
    changed = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
    pdf.write_bytes(changed)
    os.utime(pdf, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert pdf.stat().st_size == before.st_size and pdf.stat().st_mtime_ns == before.st_mtime_ns
    return changed


def test_status_reads_a_file_again_only_when_it_changed(tmp_path: Path) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    pdf, sidecar = lake.raw_paths(OPS)
    sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
    assert sha[:12] in status_lines(lake)[OPS]
    assert sha[:12] in status_lines(lake)[OPS]  # from what the first call kept
    os.utime(pdf)  # touched: new time, same bytes
    assert sha[:12] in status_lines(lake)[OPS]
    new = hashlib.sha256(same_size_rewrite(pdf)).hexdigest()
    assert new != sha and new[:12] in status_lines(lake)[OPS]
    text = sidecar.read_text(encoding="utf-8").replace("status: active", "status: revoked")
    sidecar.write_text(text, encoding="utf-8")
    assert "revoked" in status_lines(lake)[OPS]
    sidecar.write_text(text.replace("status: revoked", "status: retired"), encoding="utf-8")
    line = status_lines(lake)[OPS]  # a bad sidecar: live, its runs fail with the reason
    assert "live" in line and "status 'retired' must be one of" in line
    v2 = pdf.with_name("v2.pdf")  # a version added to a folder listed before
    v2.write_bytes(pdf.read_bytes())
    assert "manual-operacao@v2" in status_lines(lake)
    v2.unlink()
    assert "manual-operacao@v2" not in status_lines(lake)
    os.rename(lake.root, tmp_path / "moved")  # the files keep their state, not their path
    moved = Lake(tmp_path / "moved")
    assert f"{moved.raw_paths(OPS)[1]}: status 'retired'" in status_lines(moved)[OPS]


@pytest.mark.slow
def test_a_rewrite_of_the_same_size_and_time_reindexes_and_a_touch_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    args = ["materialize", "--skip-eval", "--lake", str(lake.root)]

    def materialize() -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(args) == 0
        return out.getvalue()

    assert f"[1/1] {OPS} ... ok" in materialize()
    pdf = lake.raw_paths(OPS)[0]
    os.utime(pdf)
    assert f"skipped  {OPS}: up to date" in materialize()
    new = hashlib.sha256(same_size_rewrite(pdf)).hexdigest()
    assert f"[1/1] {OPS} ... ok" in materialize()
    indexed = lake.root / "derived" / "documents" / f"{OPS}.parquet"
    assert pq.read_table(indexed).column("sha256").to_pylist() == [new]
    assert Index(lake.lancedb_dir, embedder).partition_counts()[OPS] > 0


def set_sidecar(lake: Lake, key: str, **fields: object) -> None:
    """Rewrite a version's sidecar with some fields changed."""
    _, path = lake.raw_paths(key)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.update(fields)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


@pytest.mark.slow
def test_a_cold_index_runs_the_newest_version_and_never_the_ones_it_supersedes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-beneficiario"], [])
    v6, v7 = "manual-beneficiario@v6", "manual-beneficiario@v7"
    set_sidecar(lake, v6, status="active", valid_to=None)  # both in force, v7 the newest
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    lines = out.getvalue().splitlines()
    assert any(x.startswith(f"[1/2] {v7} ... ok") for x in lines), lines
    assert f"[2/2] {v6} skipped: superseded by {v7}, indexed just before" in lines
    removed = next(x for x in lines if x.startswith(f"removed  {v6}"))
    assert f"superseded by {v7}; 0 index rows, 0 files" in removed
    assert set(Index(lake.lancedb_dir, embedder).partition_counts()) == {v7}
    assert lake.tombstones()[v6]["reason"] == f"superseded by {v7}"
    assert not any((lake.root / "derived").rglob(f"{v6}.parquet"))


def test_several_versions_leave_every_store_in_one_batch(
    tmp_path: Path, embedder: Embedder, upsert
) -> None:
    lake = Lake(tmp_path / "lake")
    (lake.raw_dir).mkdir(parents=True)
    db = lake.lancedb_dir
    index = Index(db, embedder)
    for key in ("doc-a@v1", "doc-a@v2", "doc-b@v1"):
        upsert(index, key)
    gone = {"doc-a@v1": "superseded by doc-a@v2", "doc-b@v1": "revoked"}
    removals, _ = purge_versions(lake, db, gone)
    assert {k: r.rows for k, r in removals.items()} == {"doc-a@v1": 3, "doc-b@v1": 2}
    assert set(index.partition_counts()) == {"doc-a@v2"}
    assert {k: v["reason"] for k, v in lake.tombstones().items()} == gone
    secret = b"Employee passwords must be rotated"  # nor can it be read back from disk
    assert not [p for p in Path(db).rglob("*") if p.is_file() and secret in p.read_bytes()]
    assert purge_versions(lake, db, gone)[0]["doc-b@v1"].rows == 0  # nothing left: nothing


def test_code_versions_are_read_back_for_new_materializations_only() -> None:
    with DagsterInstance.ephemeral() as instance:

        def materialized(key: str, code: str) -> None:
            tags = {"dagster/code_version": code}
            instance.report_runless_asset_event(
                AssetMaterialization(asset_key="raw_pdf", partition=key, tags=tags)
            )

        materialized("doc@v1", "1")
        materialized("doc@v2", "1")
        assert ran_with(instance)["raw_pdf"] == {"doc@v1": "1", "doc@v2": "1"}
        materialized("doc@v1", "2")  # what a run with new code records
        assert ran_with(instance)["raw_pdf"] == {"doc@v1": "2", "doc@v2": "1"}
        assert ran_with(instance)["raw_pdf"] == {"doc@v1": "2", "doc@v2": "1"}
        assert ran_with(instance)["chunks"] == {}


def many_commits(uri: Path, name: str, commits: int) -> None:
    """A table written by `commits` small commits (one fragment and one version each)."""
    db = lancedb.connect(str(uri))
    for n in range(commits):
        data = pa.table({"id": [n], "text": [f"row {n}"]})
        if n == 0:
            db.create_table(name, data)
        else:
            db.open_table(name).add(data)


def test_upkeep_compacts_a_table_and_deletes_its_old_versions(tmp_path: Path) -> None:
    db = tmp_path / "lancedb"
    many_commits(db, "chunks__some-model", 20)
    many_commits(db, "embcache__some-model", 3)
    tbl = lancedb.connect(str(db)).open_table("chunks__some-model")
    assert table_shape(tbl) == (20, 20)
    done = {d.table: d for d in upkeep_tables(db)}  # recent versions are kept
    assert done["chunks__some-model"].fragments == (20, 1)
    assert "embcache__some-model" not in done  # 3 fragments: nothing to do yet
    assert tbl.count_rows() == 20
    done = {d.table: d for d in upkeep_tables(db, keep=dt.timedelta(0))}
    assert table_shape(lancedb.connect(str(db)).open_table("chunks__some-model")) == (1, 1)
    assert done["embcache__some-model"].versions == (3, 1)
    assert lancedb.connect(str(db)).open_table("chunks__some-model").count_rows() == 20


def test_the_upkeep_schedule_runs_a_job_that_compacts_the_lake_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = Lake(tmp_path / "lake")
    lake.raw_dir.mkdir(parents=True)
    many_commits(lake.lancedb_dir, "chunks__some-model", 18)
    monkeypatch.setenv("TRECHO_UPKEEP_CRON", "5 */2 * * *")
    defs = build_definitions(str(lake.root))
    schedule = defs.resolve_schedule_def("table_upkeep")
    assert schedule.cron_schedule == "5 */2 * * *" and schedule.job_name == "table_upkeep_job"
    result = defs.resolve_job_def("table_upkeep_job").execute_in_process()
    assert result.success
    tbl = lancedb.connect(str(lake.lancedb_dir)).open_table("chunks__some-model")
    assert table_shape(tbl)[0] == 1 and tbl.count_rows() == 18
