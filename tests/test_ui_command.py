"""`trecho ui`: the Dagster UI started the one right way on a fresh lake (its instance's
dagster.yaml written first: telemetry off, the queue limit) and stopped by SIGTERM with
no process left behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from rag_assets.orchestration.concurrency import unconfigured_instance

from .conftest import REPO, copy_lake


def free_port() -> int:
    """A TCP port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (children, their children...), read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":  # a zombie is gone already, waiting to be reaped
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def front_page(url: str, process: subprocess.Popen[bytes], log: Path) -> str:
    """The UI's HTML page, once its code location `trecho` has loaded."""
    query = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
    body = json.dumps({"query": query}).encode()
    request = urllib.request.Request(f"{url}/graphql", body, {"Content-Type": "application/json"})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                entries = json.loads(response.read())["data"]["workspaceOrError"]
            loaded = {e["name"]: e["loadStatus"] for e in entries["locationEntries"]}
            if loaded.get("trecho") == "LOADED":
                with urllib.request.urlopen(url, timeout=10) as response:
                    return response.read().decode()
        except (urllib.error.URLError, ConnectionError, TimeoutError, KeyError, TypeError):
            pass
        time.sleep(1)
    raise AssertionError(f"the UI never loaded trecho:\n{log.read_text()}")


def start_ui(
    lake: Path, cwd: Path, port: int, stdout: Any, stderr: Any, **env: str
) -> subprocess.Popen[bytes]:
    """`trecho ui` on `lake` in a process group of its own, on `port`, run from `cwd` with
    no DAGSTER_ or TRECHO_ variable of ours (but those of `env`), the model offline."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "TRECHO_"))}
    clean.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", **env)
    return subprocess.Popen(
        [sys.executable, "-m", "rag_assets.cli", "ui", "--lake", str(lake), "--port", str(port)],
        cwd=cwd,
        env=clean,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


@pytest.mark.slow
def test_trecho_ui_starts_with_telemetry_off_and_leaves_no_process(tmp_path):
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    home = lake.root / ".dagster"
    assert not home.exists()  # a fresh lake: no trecho command ran on it yet
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("w", encoding="utf-8") as out:
        process = start_ui(lake.root, tmp_path, port, out, subprocess.STDOUT)
    try:
        page = front_page(f"http://127.0.0.1:{port}", process, log)
        config = yaml.safe_load((home / "dagster.yaml").read_text())
        assert config["telemetry"] == {"enabled": False}
        limits = config["concurrency"]["runs"]["tag_concurrency_limits"]
        assert limits[0]["key"] == "dagster/partition" and limits[0]["limit"] == 1
        assert '"telemetryEnabled": false' in page  # the browser loads no telemetry script
        started = descendants(process.pid)
        assert len(started) >= 3  # dg dev, webserver, daemon (and the code server)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:  # a failure above: stop it the same way
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    time.sleep(1)  # the orphans' reaping by init
    left = sorted(pid for pid in started if alive(pid))
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]
    text = log.read_text()
    assert not (home / "logs" / "event.log").exists()  # no telemetry events written
    assert "telemetry" not in text.lower()  # no usage-statistics banner
    assert "has no dagster.yaml" not in text  # the code location found its instance's file


def test_a_load_without_the_instance_file_says_how_to_start(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    said = unconfigured_instance({"DAGSTER_HOME": str(home), "TRECHO_LAKE": "/x/lake"})
    assert said is not None and "`trecho ui --lake /x/lake`" in said and "\n" not in said
    assert "DAGSTER_HOME is not set" in (unconfigured_instance({}) or "")
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    assert unconfigured_instance({"DAGSTER_HOME": str(home)}) is None


def code_server_started(pid: int) -> bool:
    """Whether a process below `pid` is Dagster's code server (`dagster api grpc`), which
    then loads the definitions for seconds."""
    for child in descendants(pid):
        try:
            if b"grpc" in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


@pytest.mark.slow
def test_trecho_ui_stopped_while_it_starts_stops_quietly(tmp_path):
    """SIGTERM while the code server loads the definitions printed two tracebacks of
    Dagster's `DagsterExecutionInterruptedError` (and click's `Aborted!`)."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    process = start_ui(lake.root, tmp_path, free_port(), subprocess.DEVNULL, subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not code_server_started(process.pid) and time.monotonic() < deadline:
            assert process.poll() is None
            time.sleep(0.05)
        started = descendants(process.pid)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = err.decode()
    assert process.returncode == 0, text
    assert "Traceback" not in text and "Interrupted" not in text and "Aborted!" not in text, text
    assert text.rstrip().endswith("trecho: the UI stopped"), text
    time.sleep(1)  # the orphans' reaping by init
    assert [pid for pid in started if alive(pid)] == []


INTERRUPTED_LOAD = b"""Traceback (most recent call last):
  File "dagster/_grpc/server.py", line 504, in __init__
    self._loaded_repositories = LoadedRepositories(
  File "dagster/_utils/interrupts.py", line 81, in _new_signal_handler
    raise error_cls()
dagster._core.errors.DagsterExecutionInterruptedError
"""


@pytest.mark.parametrize("stopping", [True, False])
def test_the_ui_s_stderr_is_relayed_less_what_a_stop_makes_it_print(stopping: bool, capsys) -> None:
    """Once a stop was asked for, an interrupt's traceback and click's `Aborted!` are
    left out; any other line, and every traceback while the UI runs, is passed on."""
    import io

    from rag_assets.cli.ui import relay

    failed = b'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad\n'
    text = b"starting\nAborted!\n" + INTERRUPTED_LOAD + b"\n" + failed + b"done\n"
    relay(io.BytesIO(text), lambda: stopping)
    err = capsys.readouterr().err
    assert err.startswith("starting\n") and err.endswith("ValueError: bad\ndone\n")
    assert ("DagsterExecutionInterruptedError" in err) is not stopping
    assert ("Aborted!" in err) is not stopping


USER_YAML = """# the user's own instance: kept as written
storage:
  sqlite:
    base_dir: {home}/storage
run_queue:
  max_concurrent_runs: 3
telemetry:
  enabled: true # the user's choice, turned off by trecho ui
"""


def test_a_dagster_yaml_of_the_user_gets_telemetry_and_nux_off_the_rest_kept(tmp_path, monkeypatch):
    from dagster import DagsterInstance

    from rag_assets.cli.ui import settings_off

    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(USER_YAML.format(home=home), encoding="utf-8")
    said = settings_off(home)
    assert said is not None and "\n" not in said and str(home / "dagster.yaml") in said
    assert "telemetry" in said and "nux" in said
    text = (home / "dagster.yaml").read_text(encoding="utf-8")
    assert text.startswith("# the user's own instance: kept as written\nstorage:\n")
    assert "  max_concurrent_runs: 3\n" in text
    config = yaml.safe_load(text)
    assert config["telemetry"] == {"enabled": False} and config["nux"] == {"enabled": False}
    instance = DagsterInstance.from_config(str(home))  # Dagster reads it as it is
    try:
        assert not instance.telemetry_enabled and not instance.nux_enabled
        assert instance.run_coordinator.get_run_queue_config().max_concurrent_runs == 3
        assert instance.get_runs() == []
        assert (home / "storage" / "history" / "runs.db").is_file()  # its storage setting
    finally:
        instance.dispose()
    assert settings_off(home) is None  # once set, left alone (and nothing said)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    assert settings_off(home) == (  # an instance of an older trecho: the pop-up only
        f"trecho: turned Dagster's community pop-up (nux) off in {home / 'dagster.yaml'} "
        "(its other settings kept)"
    )
    (home / "dagster.yaml").write_text("telemetry: {enabled: true}\nnux:\n", encoding="utf-8")
    assert settings_off(home) is not None
    assert yaml.safe_load((home / "dagster.yaml").read_text()) == {
        "telemetry": {"enabled": False},
        "nux": {"enabled": False},
    }
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: true\n", encoding="utf-8")

    def refused(*_args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("rag_assets.cli.ui.os.replace", refused)  # a home we may not write
    said = settings_off(home) or ""
    assert said.startswith("trecho: could not turn ") and "Permission denied" in said
    assert not list(home.glob(".dagster.yaml.tmp-*"))  # no temporary file left


@pytest.mark.slow
def test_trecho_ui_on_a_home_with_a_dagster_yaml_of_its_own_turns_telemetry_off(tmp_path):
    """A DAGSTER_HOME whose dagster.yaml does not turn telemetry off was kept as it was:
    the browser loaded Dagster's telemetry script and the community pop-up showed."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(USER_YAML.format(home=home), encoding="utf-8")
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("w", encoding="utf-8") as out:
        process = start_ui(
            lake.root, tmp_path, port, out, subprocess.STDOUT, DAGSTER_HOME=str(home)
        )
    try:
        url = f"http://127.0.0.1:{port}"
        page = front_page(url, process, log)
        assert '"telemetryEnabled": false' in page  # the browser loads no telemetry script
        body = json.dumps({"query": "{ shouldShowNux }"}).encode()
        request = urllib.request.Request(
            f"{url}/graphql", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["data"]["shouldShowNux"] is False
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    text = log.read_text()
    said = [line for line in text.splitlines() if "turned Dagster's telemetry" in line]
    assert len(said) == 1 and str(home / "dagster.yaml") in said[0], text
    assert yaml.safe_load((home / "dagster.yaml").read_text())["run_queue"] == {
        "max_concurrent_runs": 3
    }
    assert not (home / "logs" / "event.log").exists()  # no telemetry events written
    assert not (home / ".telemetry").exists()  # no telemetry id either
    assert "telemetry" not in text.replace(said[0], "").lower()  # no usage-statistics banner
    assert (home / "storage").is_dir()  # the user's storage setting was the one used
