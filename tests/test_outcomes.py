"""What `trecho status` says of a version's last run, from the outcomes in the lake: kept
across the upgrade from the old one-file record, and recorded for a run that fails only
on a blocking asset check."""

from __future__ import annotations

import json
from pathlib import Path

from rag_assets.cli import main
from rag_assets.core.lake import sha256_file
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lifecycle import read_outcomes


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
