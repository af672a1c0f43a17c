"""What `trecho status` says of a version's last run, from the outcomes in the lake: kept
across the upgrade from the old one-file record, and recorded for a run that fails only
on a blocking asset check."""

from __future__ import annotations

import json
from pathlib import Path

from dagster import DagsterInstance

from rag_assets.cli import main
from rag_assets.core.lake import sha256_file
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lifecycle import read_outcomes
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.checks import NO_ORPHAN_TABLE_VALUES
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .test_tables import SCHEDULE_KEY, schedule_pdf


def status_line(lake: Lake, key: str, capsys) -> str:
    """The line `trecho status` prints for `key`."""
    assert main(["status", "--lake", str(lake.root)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if key in x]
    return line


def test_a_lake_with_only_the_old_outcomes_file_keeps_its_failure_reasons(
    tmp_path: Path, capsys, monkeypatch, make_pdf
) -> None:
    """A lake written before the per-version outcomes keeps them in
    `<lake>/cache/version-outcomes.json`: after the upgrade, status still names why the
    last run failed (it said PENDING), the entries are carried into `<lake>/outcomes/`
    and the old file is gone (no second record to go stale); a removed version's entry
    is not carried."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    lake = Lake(tmp_path / "lake")
    pdf = make_pdf(lake.raw_dir / "folheto" / "v1.pdf", [("Folheto", 18, True)])
    old = lake.root / "cache" / "version-outcomes.json"
    old.parent.mkdir(parents=True)
    reason = "no text units found: every one of its 1 lines reads as a section heading"
    failed = {"sha256": sha256_file(pdf), "reason": reason, "at": "2026-12-01T10:00:00+00:00"}
    entries = {"folheto@v1": {"failed": failed}, "gone@v1": {"indexed": "ab" * 32}}
    old.write_text(json.dumps(entries), encoding="utf-8")

    assert f"FAILED (not indexed): {reason}" in status_line(lake, "folheto@v1", capsys)
    assert not old.exists()
    assert read_outcomes(lake) == {"folheto@v1": {"failed": failed}}
    # read again from the per-version file alone
    assert f"FAILED (not indexed): {reason}" in status_line(lake, "folheto@v1", capsys)


def test_a_run_failing_only_on_a_blocking_check_is_failed_in_status(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """A run started as the sensor or the UI starts it (a Dagster run on the instance, not
    a `trecho` command) whose chunks fail a blocking check (cut every 40 characters, the
    schedule's values leave their headers): Dagster fails the step after trecho's body
    returned, and `trecho status` says FAILED with the check and where it failed (it said
    PENDING: no outcome was recorded)."""
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    lake = Lake(tmp_path / "lake")
    schedule_pdf(lake.raw_dir / "hearings" / "v1.pdf")
    config = {"ops": {"chunks": {"config": {"strategy": "fixed_chars-40-o0"}}}}
    with DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(DOC_VERSIONS, [SCHEDULE_KEY])
        job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
        run = job.execute_in_process(
            partition_key=SCHEDULE_KEY, instance=instance, raise_on_error=False, run_config=config
        )
    assert not run.success
    line = status_line(lake, SCHEDULE_KEY, capsys)
    assert f"FAILED (not indexed): blocking check chunks/{NO_ORPHAN_TABLE_VALUES} failed" in line
    assert "page 1" in line and "without its header" in line, line
