"""Nothing corrupts, nothing phones home, nothing misleads (issue 34): commands started at
once on one lake, hostile PDFs, what leaves the machine, and status lines that tell the
truth. Real `trecho` processes on real lakes; hostile PDFs written byte by byte."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, copy_lake
from .test_serve import serve_env


def trecho(*args: str, **env: str) -> subprocess.Popen[str]:
    """A `trecho` command in its own process, output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "rag_assets.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=serve_env(**env),
        cwd=REPO,
    )


def alembic_heads(home: Path) -> dict[str, list[str]]:
    """The migration heads stamped in each SQLite database of a Dagster home."""
    heads: dict[str, list[str]] = {}
    for db in sorted(home.rglob("*.db")):
        with sqlite3.connect(db) as connection:
            tables = {r[0] for r in connection.execute("select name from sqlite_master")}
            if "alembic_version" in tables:
                rows = connection.execute("select version_num from alembic_version").fetchall()
                heads[db.name] = [r[0] for r in rows]
    return heads


@pytest.mark.slow
def test_three_first_runs_at_once_share_one_sound_instance(tmp_path: Path) -> None:
    """Three `trecho materialize` on a new lake at the same moment: the instance is made
    once, the commands take turns (the waiting ones say on which lock), none prints a
    traceback, and the instance serves the next command."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    args = ("materialize", "--skip-eval", "--lake", str(lake.root))
    started = [trecho(*args) for _ in range(3)]
    done = [(p.wait(timeout=900), *p.communicate()) for p in started]
    for code, out, err in done:
        assert code == 0, out + err
        assert "Traceback" not in err, err
    assert sum("[1/1] manual-operacao@v1 ... ok" in out for _, out, _ in done) == 1
    waited = [err for _, _, err in done if "waiting for the lock" in err]
    assert len(waited) == 2
    assert all(str(lake.root / ".trecho-runs.lock") in err for err in waited)
    heads = alembic_heads(lake.root / ".dagster")
    assert {"runs.db", "schedules.db"} <= set(heads)
    assert all(len(found) == 1 for found in heads.values()), heads
    again = trecho(*args)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, out + err
    assert "up to date" in out
