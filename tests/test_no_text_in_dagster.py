"""Removal means gone from every store trecho writes to, Dagster's own included: the run
history, event logs and captured step logs of the instance hold counts, ids, hashes and
pages of a version, never its text, so revoking a version leaves none of its words there;
and a version revoked while `trecho materialize` runs is removed by that same command.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.core.corpus import load_chunks
from rag_assets.core.index import Index
from rag_assets.core.lake.layout import Lake
from rag_assets.settings import Settings

from .conftest import REPO
from .test_drawn import write_report

# slow: a report indexed, evaluated and revoked through `trecho materialize`
pytestmark = pytest.mark.slow


def words_of(lake: Path, key: str) -> set[str]:
    """The long words of a version's indexed chunks: its title, headings, paragraphs and
    table labels (the report's made-up words of seven letters or more; its only English
    word that long is `Figures`)."""
    texts = [c.text for c in load_chunks(Lake(lake), key)]
    return {w for t in texts for w in re.findall(r"[A-Za-z]{7,}", t)} - {"Figures"}


def test_a_revoked_version_leaves_no_word_of_it_in_the_dagster_instance(tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    write_report(lake / "raw" / "atlas-report" / "2024.pdf", 1)
    home = tmp_path / "dagster-home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    assert main(["materialize", "--lake", str(lake), "--eval-offsets", "1"]) == 0
    printed = words_of(lake, "atlas-report@2024")
    assert len(printed) > 50
    # the words are the document's: search finds them in the index
    assert main(["search", sorted(printed)[0], "--lake", str(lake), "-k", "1"]) == 0
    (lake / "raw" / "atlas-report" / "2024.yaml").write_text("status: revoked\n")
    assert main(["materialize", "--lake", str(lake), "--skip-eval"]) == 0
    leaks: dict[str, list[str]] = {}
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes().decode("utf-8", "replace")
        found = sorted(w for w in printed if w in data)
        if found:
            leaks[str(path.relative_to(home))] = found[:5]
    assert leaks == {}, f"document words kept by the Dagster instance: {leaks}"
    assert any(home.rglob("*.db")), "the instance wrote its run history here"


def test_a_version_revoked_while_materialize_runs_is_removed_by_that_same_command(tmp_path):
    """No sensor: the sidecar says revoked once the version is indexed and the command is
    on its last step (the eval report); the command itself removes the version before it
    ends, and says so, instead of leaving it searchable until the next run."""
    lake = tmp_path / "lake"
    write_report(lake / "raw" / "atlas-report" / "2024.pdf", 1)
    write_report(lake / "raw" / "borealis-review" / "2024.pdf", 2)
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "rag_assets.cli", "materialize", "--lake", str(lake)]
    process = subprocess.Popen(
        [*command, "--eval-offsets", "1"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    seen = ""
    while "eval report ..." not in seen:
        char = process.stdout.read(1)
        assert char, f"the command ended before its eval: {seen}"
        seen += char
    assert "atlas-report@2024 ... ok" in seen  # indexed and committed
    (lake / "raw" / "atlas-report" / "2024.yaml").write_text("status: revoked\n")
    out = seen + process.stdout.read()
    assert process.wait() == 0, out
    assert "removed  atlas-report@2024: " in out and "revoked" in out.split("removed  ")[1]
    assert "1 live versions (1 indexed, 0 failed)" in out, out
    index = Index(Lake(lake).lancedb_dir, Settings.from_env().embedder())
    assert set(index.partition_counts()) == {"borealis-review@2024"}
