"""Seconds from launching `trecho serve` / `trecho mcp` to their first answer, this tree
beside a given commit, on one lake, the two taking turns (issue 44).

For each side and run, on a materialized lake (default: the sample lake, `make demo`):

- serve: a `trecho serve` process on a free loopback port; `GET /health` is polled every
  20 ms: seconds to the first answer, and the CPU seconds the process had used by then
  (user + system, all threads: a steadier reading on a loaded machine); then one
  `POST /search` sent at once: seconds (and CPU seconds) from launch to its hits (the
  first search waits for the model and index when they are still loading);
- mcp: a `trecho mcp` process with `initialize` written to its stdin at launch: seconds
  (and CPU seconds) to the answer; then one `search_documents` call: seconds (and CPU
  seconds) from launch to its result.

Both sides run on this checkout's virtual environment; the other commit's code is
unpacked to a temporary folder (`git archive`) and put first on PYTHONPATH.

    python bench/serve_ready.py [--lake data_lake] [--against 84aad86] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from _common import REPO, machine, median

QUERY = "qual o limite de vibração?"


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def env_for(tree: Path) -> dict[str, str]:
    """The environment of a server whose code is `tree`'s."""
    env = {k: v for k, v in os.environ.items() if k != "TRECHO_SERVE_TOKEN"}
    env.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process `pid` has used (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _post(url: str, body: dict[str, object], timeout: float = 300) -> dict[str, object]:
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data, headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return dict(json.loads(response.read()))


def time_serve(tree: Path, lake: Path) -> tuple[float, float, float, float]:
    """(seconds to /health's first answer, CPU seconds by then, seconds to the first
    search's hits, CPU seconds by then)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "rag_assets.cli", "serve", "--lake", str(lake)]
    start = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env_for(tree),
        cwd=tree,
    )
    try:
        while True:
            if process.poll() is not None:
                raise SystemExit(f"trecho serve ({tree}) exited with {process.returncode}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=60) as response:
                    response.read()
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.02)
        health = time.perf_counter() - start
        cpu = cpu_seconds(process.pid)
        answer = _post(f"{url}/search", {"query": QUERY, "k": 3})
        assert answer["hits"], answer
        return health, cpu, time.perf_counter() - start, cpu_seconds(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


class Stdio:
    """A `trecho mcp` process spoken to in JSON-RPC lines."""

    def __init__(self, tree: Path, lake: Path) -> None:
        command = [sys.executable, "-m", "rag_assets.cli", "mcp", "--lake", str(lake)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env_for(tree),
            cwd=tree,
        )

    def send(self, message: dict[str, object]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def answer(self, request_id: int, timeout: float = 300) -> dict[str, object]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            line = self.process.stdout.readline() if ready else b""
            if not line:
                raise SystemExit(f"trecho mcp gave no answer to request {request_id}")
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)
        raise SystemExit(f"trecho mcp gave no answer to request {request_id}")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def time_mcp(tree: Path, lake: Path) -> tuple[float, float, float, float]:
    """(seconds to `initialize`'s answer, CPU seconds by then, seconds to the first
    search's result, CPU seconds by then)."""
    start = time.perf_counter()
    stdio = Stdio(tree, lake)
    try:
        client = {"name": "bench", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        stdio.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert "result" in stdio.answer(1)
        initialized = time.perf_counter() - start
        cpu = cpu_seconds(stdio.process.pid)
        stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "search_documents", "arguments": {"query": QUERY, "k": 3}}
        stdio.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        result = stdio.answer(2)["result"]
        assert isinstance(result, dict) and not result.get("isError"), result
        return initialized, cpu, time.perf_counter() - start, cpu_seconds(stdio.process.pid)
    finally:
        stdio.close()


def unpack(ref: str, into: Path) -> Path:
    """The code of commit `ref` in `into` (git archive)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lake", type=Path, default=REPO / "data_lake")
    parser.add_argument("--against", default="84aad86", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    lake = args.lake.resolve()
    if not (lake / "lancedb").is_dir():
        raise SystemExit(f"{lake}: no index yet; run `make demo` (or trecho materialize) first")
    print(machine())
    print(f"lake {lake}; this tree against {args.against}; {args.runs} runs, sides alternating")
    rows: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sides = {args.against: unpack(args.against, Path(tmp)), "this tree": REPO}
        for run in range(args.runs):
            order = list(sides.items()) if run % 2 == 0 else list(sides.items())[::-1]
            for name, tree in order:
                side = rows.setdefault(name, {})
                for label, value in zip(
                    (
                        "serve /health",
                        "serve /health, CPU s",
                        "serve first search",
                        "serve first search, CPU s",
                    ),
                    time_serve(tree, lake),
                    strict=True,
                ):
                    side.setdefault(label, []).append(value)
                for label, value in zip(
                    (
                        "mcp initialize",
                        "mcp initialize, CPU s",
                        "mcp first search",
                        "mcp first search, CPU s",
                    ),
                    time_mcp(tree, lake),
                    strict=True,
                ):
                    side.setdefault(label, []).append(value)
                print(
                    f"  run {run + 1} {name}: "
                    + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in side.items())
                )
    old, new = rows[args.against], rows["this tree"]
    print()
    print(f"| seconds after launch (median of {args.runs}) | {args.against} | this tree | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for label in old:
        a, b = median(old[label]), median(new[label])
        print(f"| {label} | {a:.2f} | {b:.2f} | {b / a:.2f} |")


if __name__ == "__main__":
    main()
