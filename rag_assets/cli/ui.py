"""`trecho ui`: the Dagster UI (webserver and daemon) on a lake's own instance.

The one way the README and the hints start the UI: the instance's `dagster.yaml` is
written first (telemetry off, one run per version in the queue: `INSTANCE_YAML`), so no
usage statistics are sent or logged and the queue limit holds from the first run. The UI
runs in a process group of its own; Ctrl-C or SIGTERM stops that whole group (SIGTERM,
then SIGKILL after `GRACE_S`), so no webserver, daemon or code server outlives it. Its
stderr is passed on line by line (`relay`), less what a stop itself makes its processes
print: a code server stopped while it loads the definitions prints the traceback of
Dagster's `DagsterExecutionInterruptedError`, click an `Aborted!`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO, Any

import yaml

from rag_assets.cli.hints import WORKSPACE, tool
from rag_assets.orchestration.concurrency import SETTINGS_OFF, write_home_yaml

GRACE_S = 10.0
"""Seconds the UI's processes get to stop after SIGTERM before they are killed."""

SAID = {
    ("telemetry", "nux"): "Dagster's telemetry and its community pop-up (nux)",
    ("telemetry",): "Dagster's telemetry",
    ("nux",): "Dagster's community pop-up (nux)",
}
"""How the line names what `settings_off` turned off (keys in `SETTINGS_OFF`'s order)."""


def settings_off(home: Path) -> str | None:
    """Merge `SETTINGS_OFF` into an existing `<home>/dagster.yaml` that lacks them, the
    user's other settings (and comments) kept; written whole or not at all. Returns the
    one line that says what was turned off, or why the file was left as it is (not read,
    no YAML mapping, not written); None when nothing changed."""
    path = home / "dagster.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:  # said, and the UI starts as it is
        return f"trecho: could not read {path}: left as it is (not UTF-8 at byte {exc.start:,})"
    except OSError as exc:
        return f"trecho: could not read {path}: left as it is ({exc.strerror or exc})"
    try:
        config = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        config = None
    if not isinstance(config, dict):
        return f"trecho: {path} is no YAML mapping: left as it is (Dagster will say why)"
    missing = {k: v for k, v in SETTINGS_OFF.items() if config.get(k) != v}
    if not missing:
        return None
    turned = SAID[tuple(missing)]
    try:
        write_home_yaml(home, merged_yaml(text, config, missing))
    except OSError as exc:  # a home we may not write: said, and the UI starts as it is
        return f"trecho: could not turn {turned} off in {path} ({exc.strerror or exc})"
    return f"trecho: turned {turned} off in {path} (its other settings kept)"


def merged_yaml(text: str, config: dict[str, Any], settings: dict[str, Any]) -> str:
    """`text` (a YAML mapping, read as `config`) with each top-level key of `settings`
    set: its block replaced, or appended, the rest of the text as it was; when reading
    the result back does not give `config` updated (a layout the edit misread: anchors,
    a block split by a blank line), the updated mapping written whole instead."""
    merged = text
    for key, value in settings.items():
        block = yaml.safe_dump({key: value}, default_flow_style=False)
        merged, found = _top_block(key).subn(lambda _m, b=block: b, merged, count=1)
        if not found:
            merged += ("" if not merged or merged.endswith("\n") else "\n") + block
    try:
        same = yaml.safe_load(merged) == {**config, **settings}
    except yaml.YAMLError:
        same = False
    return merged if same else yaml.safe_dump({**config, **settings}, sort_keys=False)


def _top_block(key: str) -> re.Pattern[str]:
    """A top-level `key:` line of a YAML file and the indented lines under it."""
    return re.compile(rf"^{re.escape(key)}[ \t]*:.*(?:\n[ \t]+.*)*\n?", re.M)


def ui_program(host: str, port: int) -> list[str]:
    """`dg dev` (Dagster 1.13's successor of `dagster dev`) on this checkout's absolute
    workspace.yaml, else on the installed module."""
    where = ["-w", str(WORKSPACE)] if WORKSPACE.is_file() else ["-m", "rag_assets.definitions"]
    return [tool("dg"), "dev", *where, "-h", host, "-p", str(port)]


def ui_env(lake: str, home: Path, model: dict[str, str]) -> dict[str, str]:
    """This process's environment with the lake, the instance, telemetry off and the
    model variables given (`TRECHO_MODEL`...)."""
    env = dict(os.environ)
    env.update(
        TRECHO_LAKE=lake,
        DAGSTER_HOME=str(home.resolve()),
        DAGSTER_DISABLE_TELEMETRY="1",
        HF_HUB_OFFLINE=env.get("HF_HUB_OFFLINE", "1"),
        TOKENIZERS_PARALLELISM=env.get("TOKENIZERS_PARALLELISM", "false"),
        **model,
    )
    return env


def group_alive(pgid: int) -> bool:
    """Whether a process of the group `pgid` is left that has not ended (an ended one
    that its new parent has not reaped yet, a zombie, no longer counts)."""
    proc = Path("/proc")
    if not proc.is_dir():  # no procfs: ask the kernel, zombies included
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while listed
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_group(process: subprocess.Popen[bytes], grace: float = GRACE_S) -> None:
    """SIGTERM to the whole group led by `process`, SIGKILL to what is left after
    `grace` seconds; returns once the group is gone (its leader reaped)."""
    pgid = process.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            process.poll()  # reap the leader
            if not group_alive(pgid):
                return
            time.sleep(0.1)
    process.poll()


INTERRUPTED = re.compile(rb"DagsterExecutionInterruptedError|KeyboardInterrupt")
"""The last line of a traceback a stop makes a starting process print (not an error)."""
STOP_NOISE = (b"Aborted!", b"During handling of the above exception", b"The above exception")
"""Lines a stop makes click and Python print around those tracebacks."""


def relay(source: IO[bytes], stopping: Callable[[], bool]) -> None:
    """Copy the UI's stderr (`source`) to ours line by line until it ends, but for the
    tracebacks ending in an interrupt and the lines around them once `stopping()`: a
    traceback is held until its last line (the exception) says what it is."""
    held: list[bytes] = []
    for line in iter(source.readline, b""):
        if held or line.startswith(b"Traceback (most recent call last):"):
            held.append(line)
            if line[:1] in (b" ", b"\t") or not line.strip() or line.startswith(b"Traceback"):
                continue  # the traceback goes on
            lines, held = held, []
            if stopping() and INTERRUPTED.search(line):
                continue
        elif stopping() and line.strip().startswith(STOP_NOISE):
            continue
        else:
            lines = [line]
        _write(lines)
    _write(held)


def _write(lines: list[bytes]) -> None:
    """`lines` to our stderr; where it is gone (a reader that left), dropped: the relay
    goes on draining the UI's pipe, which would otherwise fill and stall the UI."""
    try:
        sys.stderr.write(b"".join(lines).decode("utf-8", "replace"))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def run_ui(
    lake: str, home: Path, model: dict[str, str], host: str, port: int, say: Callable[[str], None]
) -> int:
    """Write the instance's `dagster.yaml`, start the UI in its own process group and
    wait for it; Ctrl-C or SIGTERM stops the group. The exit code: 0 when stopped by a
    signal, else the UI's own."""
    from rag_assets.orchestration.materialize import write_instance_yaml

    write_instance_yaml(home)
    merged = settings_off(home)  # a DAGSTER_HOME of the user's, with its own dagster.yaml
    if merged:
        say(merged)
    stopping: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        process = subprocess.Popen(
            ui_program(host, port),
            env=ui_env(lake, home, model),
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: a terminal's Ctrl-C reaches us only
        )
        assert process.stderr is not None
        stderr = (process.stderr, lambda: bool(stopping))
        relaying = threading.Thread(target=relay, args=stderr, daemon=True)
        relaying.start()
        say(f"trecho: Dagster UI on http://{host}:{port} for {lake} (instance {home})")
        say("trecho: Ctrl-C stops it")
        while process.poll() is None and not stopping:
            time.sleep(0.2)
        code = process.returncode
        stop_group(process)
        relaying.join(timeout=GRACE_S)  # the group's last lines (its pipe ends with it)
        if stopping:
            say("trecho: the UI stopped")
            return 0
        return code or 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
