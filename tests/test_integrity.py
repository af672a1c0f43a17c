"""Nothing corrupts, nothing phones home, nothing misleads (issue 34): commands started at
once on one lake, hostile PDFs, what leaves the machine, and status lines that tell the
truth. Real `trecho` processes on real lakes; hostile PDFs written byte by byte."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
from pathlib import Path

import pytest

from .conftest import REPO, copy_lake
from .test_serve import Server, free_port, serve_env


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


# -- nothing leaves the machine ---------------------------------------------------------

LOCAL = re.compile(
    r"sa_family=AF_UNIX"
    r"|sa_family=AF_INET, sin_port=htons\(\d+\), sin_addr=inet_addr\(\"127\."
    r"|sa_family=AF_INET6, sin6_port=htons\(\d+\), [^)]*inet_pton\(AF_INET6, \"(::1|::ffff:127\.)"
)
"""A `connect` strace prints for a socket that stays on this machine."""


def traced(log: Path, *args: str, home: Path) -> subprocess.Popen[str]:
    """A `trecho` command under `strace -f -e trace=connect` (every process it starts
    followed), with the product's default model (OpenVINO's path where the CPU has it)
    and `home` as its home folder."""
    env = {k: v for k, v in serve_env(HOME=str(home)).items() if k != "TRECHO_MODEL"}
    strace = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(log)]
    return subprocess.Popen(
        [*strace, sys.executable, "-m", "rag_assets.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        start_new_session=True,
    )


def remote_connections(log: Path) -> list[str]:
    """The `connect` calls of a strace log to anything but a unix or loopback socket."""
    calls = [line for line in log.read_text().splitlines() if " connect(" in line]
    return [line for line in calls if not LOCAL.search(line)]


@pytest.mark.slow
def test_status_materialize_and_a_served_search_connect_to_nothing_outside(
    tmp_path: Path,
) -> None:
    """No DNS query, no usage report: every socket the commands open is a unix socket or
    loopback; no client id lands in the home folder; LanceDB never warns of a fork."""
    assert shutil.which("strace"), "strace is missing: scripts/setup.sh installs it"
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    home = tmp_path / "home"
    home.mkdir()
    for command in (("materialize", "--skip-eval"), ("status",)):
        log = tmp_path / f"{command[0]}.strace"
        process = traced(log, *command, "--lake", str(lake.root), home=home)
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, out + err
        assert remote_connections(log) == [], command
        assert "fork" not in err, err
    log = tmp_path / "serve.strace"
    port = free_port()
    serve = ("serve", "--lake", str(lake.root), "--port", str(port))
    process = traced(log, *serve, home=home)
    server = Server(f"http://127.0.0.1:{port}", process, log)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None and time.monotonic() < deadline
            try:
                server.call("GET", "/health")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        status, answer = server.call("POST", "/search", {"query": "limite de vibração"})
        assert status == 200 and answer["hits"]
    finally:
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert remote_connections(log) == []
    assert "fork" not in err, err
    assert not (home / "intel").exists()  # OpenVINO's client id and stats
    assert not (home / ".cache" / "Microsoft").exists()  # ONNX Runtime's device id, events
