"""Removal means gone from every store trecho writes to, Dagster's own included: the run
history, event logs and captured step logs of the instance hold counts, ids, hashes and
pages of a version, never its text, so revoking a version leaves none of its words there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.core.corpus import load_chunks
from rag_assets.core.lake.layout import Lake

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
