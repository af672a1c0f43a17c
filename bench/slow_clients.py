"""`trecho serve` under slow clients: normal searches while a crowd of connections that
never finish their request is held open.

A real `trecho serve` subprocess (this tree) on a free loopback port, on a lake of the
sample operation manual materialized once into a temporary folder (or `--lake`, already
materialized). `--slow` connections (1,000) each send half a request head, then one more
byte every second, never the end of the head (a "slowloris" client); whenever the server
closes one (408 at its `--request-timeout`, or 503 past `--max-connections`), it is opened
again at once, so the crowd stays at `--slow` for the whole run. Meanwhile `--clients`
(4) normal clients send `POST /search` (hybrid, k=5, the sample questions in turn), each
on a new connection, one at a time, for `--seconds` (60).

Reported: the normal requests' count, failures (any answer but 200, or no answer), and
latency p50/p95/max (connect to last byte); the slow connections held open (sampled
every second: min and median), how the server ended them (408, 503, reset), and the
server's open file descriptors (max sampled).

    python bench/slow_clients.py [--slow 1000] [--seconds 60] [--clients 4]
                                 [--request-timeout 10] [--max-connections 2048] [--lake DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

from _common import REPO, header, median, percentile

QUESTIONS = [
    "qual o limite de vibração?",
    "como faço a manutenção do equipamento?",
    "temperatura máxima do mancal",
    "pressão de operação da bomba",
    "o que fazer antes da partida?",
    "frequência de lubrificação",
]
HALF_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def materialized_lake(folder: Path) -> Path:
    """The sample operation manual, materialized in `folder` (the pipeline in-process)."""
    from rag_assets.cli import main

    shutil.copytree(
        REPO / "data_lake" / "raw" / "manual-operacao", folder / "raw" / "manual-operacao"
    )
    (folder / "eval").mkdir()
    os.environ["DAGSTER_HOME"] = str(folder / "dagster_home")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["materialize", "--skip-eval", "--lake", str(folder)]) == 0
    return folder


def start_server(lake: Path, log: Path, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    """`trecho serve` on `lake`; returns once `/health` answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "rag_assets.cli", "serve", "--lake", str(lake)]
    process = subprocess.Popen(
        [*command, "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=env,
        cwd=REPO,
    )
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(log.read_text())
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                return process, port
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError("server did not start")


class Crowd:
    """The slow connections: how many are open, and how the server ended them."""

    def __init__(self) -> None:
        self.open = 0
        self.ended: Counter[str] = Counter()


async def slow_client(port: int, crowd: Crowd, stop: asyncio.Event) -> None:
    """One slow connection, opened again whenever the server ends it, until `stop`."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            crowd.ended["connect failed"] += 1
            await asyncio.sleep(0.5)
            continue
        crowd.open += 1
        try:
            writer.write(HALF_HEAD)
            answer = b""
            while not stop.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    answer = await asyncio.wait_for(reader.read(64), timeout=1.0)
                    break  # the server answered (or closed: b"")
                writer.write(b"a")  # one more byte of the header, never its end
                await writer.drain()
            if not stop.is_set():
                status = answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "closed"
                crowd.ended[status] += 1
        except OSError:
            crowd.ended["reset"] += 1
        finally:
            crowd.open -= 1
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def search(port: int, query: str) -> tuple[int, float]:
    """One `POST /search` on a new connection: (status or 0, seconds to the last byte)."""
    body = json.dumps({"query": query, "k": 5}).encode()
    head = (
        f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    start = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head + body)
        answer = await asyncio.wait_for(reader.read(-1), timeout=30)
        writer.close()
        status = int(answer[9:12]) if answer.startswith(b"HTTP/1.1 ") else 0
    except (TimeoutError, OSError, ValueError):
        status = 0
    return status, time.perf_counter() - start


async def normal_client(port: int, offset: int, until: float, out: list[tuple[int, float]]) -> None:
    """Searches one after the other until `until` (monotonic)."""
    i = offset
    while time.monotonic() < until:
        out.append(await search(port, QUESTIONS[i % len(QUESTIONS)]))
        i += 1


def open_fds(pid: int) -> int:
    """How many file descriptors process `pid` holds."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


async def run(args: argparse.Namespace, port: int, pid: int) -> None:
    crowd = Crowd()
    stop = asyncio.Event()
    slow = [asyncio.create_task(slow_client(port, crowd, stop)) for _ in range(args.slow)]
    ramp = time.monotonic() + 30
    while crowd.open < args.slow and time.monotonic() < ramp:
        await asyncio.sleep(0.2)
    print(f"slow connections open: {crowd.open} of {args.slow}; normal clients start")
    results: list[tuple[int, float]] = []
    until = time.monotonic() + args.seconds
    clients = [
        asyncio.create_task(normal_client(port, i, until, results)) for i in range(args.clients)
    ]
    held: list[int] = []
    fds: list[int] = []
    while time.monotonic() < until:
        await asyncio.sleep(1.0)
        held.append(crowd.open)
        fds.append(open_fds(pid))
    await asyncio.gather(*clients)
    stop.set()
    await asyncio.gather(*slow, return_exceptions=True)

    times = sorted(t * 1e3 for status, t in results if status == 200)
    failed = sum(1 for status, _ in results if status != 200)
    print()
    why = dict(Counter(status for status, _ in results if status != 200))
    print(f"normal requests: {len(results)}, failed {failed} {why or ''}")
    if times:
        print(
            f"latency ms: p50 {median(times):.1f}, p95 {percentile(times, 95):.1f}, "
            f"max {times[-1]:.1f}; over 1 s: {sum(1 for t in times if t > 1000)}"
        )
    print(
        f"slow connections held open (sampled each second): min {min(held)}, "
        f"median {median(held):.0f}, max {max(held)}"
    )
    print(f"slow connections ended by the server: {dict(crowd.ended)}")
    print(f"server file descriptors: max {max(fds)} sampled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--request-timeout", default="10")
    parser.add_argument("--max-connections", default="2048")
    parser.add_argument("--lake", type=Path, help="a materialized lake (default: a fresh one)")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.slow + 1024)), hard))
    header("trecho serve under slow clients", args)
    print(
        f"{args.slow} slow connections, {args.clients} normal clients for {args.seconds:g} s; "
        f"server --request-timeout {args.request_timeout} --max-connections {args.max_connections}"
    )
    with tempfile.TemporaryDirectory(prefix="trecho-slow-") as tmp:
        lake = args.lake or materialized_lake(Path(tmp) / "lake")
        log = Path(tmp) / "serve.log"
        limits = [
            "--request-timeout",
            args.request_timeout,
            "--max-connections",
            args.max_connections,
        ]
        process, port = start_server(lake, log, *limits)
        try:
            asyncio.run(run(args, port, process.pid))
        finally:
            process.terminate()
            process.wait(timeout=30)
        errors = [line for line in log.read_text().splitlines() if "Traceback" in line]
        print(f"server tracebacks in its log: {len(errors)}")


if __name__ == "__main__":
    main()
