"""`trecho serve` under load while the lake changes: no failed request, no revoked hit.

A small lake (the sample LGPD, CDC and beneficiary manual v7) is materialized, a real
`trecho serve` subprocess answers it, and `--clients` clients (threads, one keep-alive
connection each, a new one after any error) send `POST /search` in a loop for
`--seconds`, rotating through the modes and the queries. After `--change-after` seconds a
`trecho materialize` subprocess runs on the same lake with one version added (the
operations manual) and one revoked (the beneficiary manual v7, whose chunks the queries
hit): its run writes the new rows and purges the revoked ones from every store (old
table versions included), under the readers' feet.

Counted: requests and failed ones (any status but 200, a reset or refused connection, a
timeout: every one is a failure, none is retried), by kind; latency p50/p95/max per
phase (before, during, after the materialize); hits of the revoked version in answers
to requests sent after its run ended (must be 0) and before (allowed: a request may read
the table version it started on); and whether the added version is found after.

The slow-connections half of issue 24's load test is bench/slow_clients.py.

    python bench/load.py [--clients 16] [--seconds 60] [--change-after 10]
                         [--model all-MiniLM-L6-v2] [--tree DIR]

`--tree DIR` runs the server and materialize from another source tree (e.g. `git
archive <commit>` unpacked there): the same load before and after a change.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO, header, percentile
from serve import start_server

QUERIES = [
    "Qual o prazo para receber o reembolso?",  # the beneficiary manual: revoked
    "como pedir reembolso de consulta fora da rede",
    "qual o limite de vibração da bomba?",  # the operations manual: added
    "tratamento de dados pessoais sensíveis",
    "direito de arrependimento do consumidor",
]
MODES = ("hybrid", "vector", "fts")
REVOKED = "manual-beneficiario@v7"
ADDED = "manual-operacao@v1"


@dataclass
class Request:
    """One request as a client saw it."""

    sent: float
    """When it was sent (seconds since the load started)."""
    seconds: float
    failure: str | None
    """None when answered 200; else what went wrong (`HTTP 500`, `ConnectionResetError`...)."""
    keys: list[str] = field(default_factory=list)
    """The partition keys of its hits."""


def build_lake(root: Path) -> Path:
    """The sample lake without the version to add; the one to revoke is active."""
    raw = root / "lake" / "raw"
    for doc in ("lgpd", "cdc", "manual-beneficiario"):
        shutil.copytree(REPO / "data_lake" / "raw" / doc, raw / doc)
    return root / "lake"


TREE = REPO
"""The source tree the server and materialize run from (`--tree`: another commit's)."""


def materialize(lake: Path, model: str, home: Path, log: Path) -> tuple[int, str]:
    """`trecho materialize --skip-eval` in a subprocess: its exit code and its output."""
    env = {**os.environ, "PYTHONPATH": str(TREE), "HF_HUB_OFFLINE": "1"}
    env["DAGSTER_HOME"] = str(home)
    command = [sys.executable, "-m", "rag_assets.cli", "materialize", "--skip-eval"]
    done = subprocess.run(
        [*command, "--lake", str(lake), "--model", model],
        env=env,
        cwd=TREE,
        capture_output=True,
        text=True,
        check=False,
    )
    with log.open("a", encoding="utf-8") as fh:
        fh.write(done.stdout + done.stderr)
    return done.returncode, done.stdout


def change(lake: Path) -> None:
    """Add the operations manual's v1 and revoke the beneficiary manual's v7."""
    shutil.copytree(
        REPO / "data_lake" / "raw" / "manual-operacao", lake / "raw" / "manual-operacao"
    )
    sidecar = lake / "raw" / "manual-beneficiario" / "v7.yaml"
    text = sidecar.read_text(encoding="utf-8")
    sidecar.write_text(text.replace("status: active", "status: revoked"), encoding="utf-8")


def client(url: str, n: int, start: float, stop: threading.Event, out: list[Request]) -> None:
    """One client: a request at a time on one keep-alive connection (a new connection
    after a failure), queries and modes in turn from its own offset."""
    host, port = url.removeprefix("http://").split(":")
    conn: http.client.HTTPConnection | None = None
    i = n
    while not stop.is_set():
        body = {"query": QUERIES[i % len(QUERIES)], "k": 5, "mode": MODES[i % len(MODES)]}
        i += 1
        sent = time.perf_counter()
        failure, keys = None, []
        try:
            if conn is None:
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
            data = json.dumps(body).encode()
            conn.request("POST", "/search", data, {"Content-Type": "application/json"})
            response = conn.getresponse()
            payload = response.read()
            if response.status == 200:
                keys = [hit["partition_key"] for hit in json.loads(payload)["hits"]]
            else:
                failure = f"HTTP {response.status}: {payload[:160]!r}"
        except (OSError, http.client.HTTPException) as exc:
            failure = type(exc).__name__
        if failure is not None and conn is not None:
            conn.close()
            conn = None
        out.append(Request(sent - start, time.perf_counter() - sent, failure, keys))


def ms(values: list[float], q: float) -> str:
    return f"{percentile(values, q) * 1000:.0f}" if values else "-"


def main() -> None:
    """Run the load, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--change-after", type=float, default=10.0)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--tree", type=Path, help="run server and materialize from this tree")
    args = parser.parse_args()
    global TREE
    TREE = args.tree.resolve() if args.tree else REPO
    header("trecho serve under load while materialize adds and revokes a version", args)
    with tempfile.TemporaryDirectory(prefix="trecho-load-") as tmp:
        root = Path(tmp)
        lake, home, log = build_lake(root), root / "dagster", root / "trecho.log"
        code, out = materialize(lake, args.model, home, log)
        if code != 0:
            raise SystemExit(f"first materialize failed:\n{out}")
        uri = str(lake / "lancedb")
        server, url = start_server(TREE, lake, uri, args.model, root / "serve.log")
        try:
            report(run_load(args, lake, home, log, url), args)
        finally:
            server.terminate()
            server.wait(timeout=30)
            errors = [x for x in (root / "serve.log").read_text().splitlines() if "Error" in x]
            print(f"server log lines naming an error: {len(errors)}")
            for line in errors[:5]:
                print(f"  {line[:200]}")


@dataclass
class Load:
    """What one load run saw."""

    requests: list[Request]
    change_start: float
    change_end: float
    materialize_code: int
    materialize_out: str


def run_load(args: argparse.Namespace, lake: Path, home: Path, log: Path, url: str) -> Load:
    """The clients for `args.seconds`, the change and its materialize after
    `args.change_after`"""
    stop = threading.Event()
    results: list[list[Request]] = [[] for _ in range(args.clients)]
    start = time.perf_counter()
    threads = [
        threading.Thread(target=client, args=(url, n, start, stop, results[n]))
        for n in range(args.clients)
    ]
    for thread in threads:
        thread.start()
    time.sleep(args.change_after)
    change(lake)
    change_start = time.perf_counter() - start
    code, out = materialize(lake, args.model, home, log)
    change_end = time.perf_counter() - start
    time.sleep(max(0.0, args.seconds - change_end))
    stop.set()
    for thread in threads:
        thread.join()
    requests = sorted((r for got in results for r in got), key=lambda r: r.sent)
    return Load(requests, change_start, change_end, code, out)


def report(load: Load, args: argparse.Namespace) -> None:
    """Print requests, failures, latency by phase, revoked and added hits."""
    print(
        f"materialize: exit {load.materialize_code}, from {load.change_start:.1f} s "
        f"to {load.change_end:.1f} s"
    )
    for line in load.materialize_out.splitlines():
        if line.startswith(("[", "removed", "skipped")) or "live versions" in line:
            print(f"  {line}")
    requests = load.requests
    failed = [r for r in requests if r.failure is not None]
    print(
        f"requests: {len(requests)} by {args.clients} clients in {args.seconds:.0f} s; "
        f"failed: {len(failed)}"
    )
    for kind, n in Counter(r.failure for r in failed).most_common():
        print(f"  {n} x {kind}")
    phases = {
        "before": [r for r in requests if r.sent < load.change_start],
        "during": [r for r in requests if load.change_start <= r.sent < load.change_end],
        "after": [r for r in requests if r.sent >= load.change_end],
    }
    print("phase   requests  failed  p50 ms  p95 ms  max ms")
    for name, got in phases.items():
        times = [r.seconds for r in got]
        bad = sum(r.failure is not None for r in got)
        print(
            f"{name:7} {len(got):8}  {bad:6}  {ms(times, 50):>6}  {ms(times, 95):>6}  "
            f"{ms(times, 100):>6}"
        )
    late = [r for r in phases["after"] if REVOKED in r.keys]
    early = [r for r in phases["before"] + phases["during"] if REVOKED in r.keys]
    added = [r for r in phases["after"] if ADDED in r.keys]
    print(
        f"answers holding {REVOKED} (revoked) sent after its run ended: {len(late)} "
        f"(before it ended: {len(early)})"
    )
    print(f"answers holding {ADDED} (added) sent after its run ended: {len(added)}")


if __name__ == "__main__":
    main()
