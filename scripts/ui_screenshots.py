"""Screenshots of the Dagster UI for the docs (docs/img/): the `embeddings` overview after
a revocation and the revoked version's events (the removal's marker), the eval report
synced after it, an asset's owners, kinds, tags and row count (`chunks`), and the model
switch from the UI (the `switch_model` job's Launchpad with a model chosen, then its
run's log).

A lake of the two sample manuals is indexed and evaluated by `trecho materialize`, the
beneficiary manual's v7 is revoked and `trecho materialize` runs again (the removal,
then the eval report); `trecho ui` is started on the lake and headless Chromium
(Debian's, under Playwright: no browser is downloaded) takes each page once it shows
what is asked. Usage::

    python scripts/ui_screenshots.py                  # writes docs/img/ui-*.png
    python scripts/ui_screenshots.py --out /tmp/shots --model all-MiniLM-L6-v2
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("TRECHO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REVOKED = "manual-beneficiario@v7"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
"""No sandbox (a container's root), no GPU, nothing fetched in the background."""


def trecho(lake: Path, env: dict[str, str], *args: str) -> None:
    """Run one `trecho` command on the lake; stop on failure."""
    done = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args, "--lake", str(lake)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"trecho {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def revoke(lake: Path, key: str) -> None:
    """Set `status: revoked` in a version's sidecar."""
    doc, version = key.split("@")
    sidecar = lake / "raw" / doc / f"{version}.yaml"
    lines = [
        x for x in sidecar.read_text(encoding="utf-8").splitlines() if not x.startswith("status:")
    ]
    sidecar.write_text("\n".join([*lines, "status: revoked"]) + "\n", encoding="utf-8")


def free_port() -> int:
    """A TCP port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_ui(url: str, process: subprocess.Popen[bytes]) -> None:
    """Until the UI answers and its code location has loaded."""
    query = (
        b'{"query": "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"}'
    )
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("trecho ui exited")
        try:
            request = urllib.request.Request(
                f"{url}/graphql", query, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                if b"LOADED" in response.read():
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(2)
    raise SystemExit("the UI never loaded its code location")


def skip_dialog(page: Any) -> None:
    """A fresh Dagster home greets the first visit with a newsletter dialog: skip it."""
    try:
        page.get_by_role("button", name="Skip").click(timeout=8_000)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: no dialog
        pass


def settle(page: Any) -> None:
    """Let the UI's queries finish (it polls: at most 20 s)."""
    try:
        page.wait_for_load_state("networkidle", timeout=20_000)
    except Exception:  # noqa: BLE001
        pass


def shoot(url: str, out: Path) -> list[Path]:
    """The two pages, each once it shows what it is taken for."""
    from playwright.sync_api import sync_playwright

    shots = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport={"width": 1500, "height": 950})
        page.set_default_timeout(300_000)
        page.goto(f"{url}/assets/embeddings")
        skip_dialog(page)
        page.get_by_text("removed (revoked)").first.wait_for()
        settle(page)
        skip_dialog(page)
        shots.append(out / "ui-embeddings-after-revocation.png")
        page.screenshot(path=str(shots[-1]))
        shots += shoot_removed_partition(page, url, out)
        page.goto(f"{url}/assets/eval_report")
        skip_dialog(page)
        page.get_by_text("metrics_table").first.wait_for()
        settle(page)
        if page.get_by_text("Unsynced", exact=True).count():
            raise SystemExit("the eval report shows Unsynced after the removal")
        shots.append(out / "ui-eval-report-synced.png")
        page.screenshot(path=str(shots[-1]))
        shots += shoot_conventions(page, url, out)
        shots += shoot_switch(page, url, out)
        browser.close()
    return shots


def shoot_removed_partition(page: Any, url: str, out: Path) -> list[Path]:
    """The revoked version's `embeddings` events as the UI lists them: its latest
    materialization is the removal's marker, which says removed, why and when."""
    import urllib.parse

    key = urllib.parse.quote(REVOKED)
    page.goto(f"{url}/assets/embeddings?view=events&partition={key}")
    skip_dialog(page)
    page.get_by_text("REMOVED, not a run's index").first.wait_for()
    settle(page)
    shot = out / "ui-embeddings-removed-partition.png"
    page.screenshot(path=str(shot), full_page=True)
    return [shot]


def shoot_conventions(page: Any, url: str, out: Path) -> list[Path]:
    """The `chunks` asset's page: owners, kinds and tags beside its latest
    materialization's row count."""
    page.goto(f"{url}/assets/chunks")
    skip_dialog(page)
    page.get_by_text("Owners", exact=True).first.wait_for()
    page.get_by_text("Row count", exact=True).first.wait_for()
    settle(page)
    shot = out / "ui-asset-conventions.png"
    page.screenshot(path=str(shot), full_page=True)
    return [shot]


SWITCH_CONFIG = "ops:\n  switch_lake_model:\n    config:\n      model: multilingual_e5_small_enpt\n"


def shoot_switch(page: Any, url: str, out: Path) -> list[Path]:
    """The `switch_model` job's Launchpad with a bundled model chosen, then the run it
    launches, once its log says where the switch stands."""
    import urllib.parse

    config = urllib.parse.quote(SWITCH_CONFIG)
    page.goto(f"{url}/locations/trecho/jobs/switch_model/playground/setup?config={config}")
    skip_dialog(page)
    page.get_by_text("multilingual_e5_small_enpt").first.wait_for()
    settle(page)
    shots = [out / "ui-switch-model.png"]
    page.screenshot(path=str(shots[-1]))
    page.get_by_role("button", name="Launch Run").click()
    page.get_by_text("the lake's model is now").first.wait_for()
    settle(page)
    shots.append(out / "ui-switch-model-run.png")
    page.screenshot(path=str(shots[-1]))
    return shots


def main() -> None:
    """Build the lake, start the UI, take the screenshots, stop the UI."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    parser.add_argument("--model", help="TRECHO_MODEL (default: the configured one)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ui-shots-") as tmp:
        lake = Path(tmp) / "lake"
        for doc in ("manual-operacao", "manual-beneficiario"):
            shutil.copytree(REPO / "data_lake" / "raw" / doc, lake / "raw" / doc)
        (lake / "eval").mkdir(parents=True)
        shutil.copy(REPO / "data_lake" / "eval" / "manuais.jsonl", lake / "eval")
        env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
        env.pop("DAGSTER_HOME", None)
        if args.model:
            env["TRECHO_MODEL"] = args.model
        trecho(lake, env, "materialize", "--eval-offsets", "1")
        revoke(lake, REVOKED)
        trecho(lake, env, "materialize", "--eval-offsets", "1")  # the removal, then the eval
        port = free_port()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rag_assets.cli",
                "ui",
                "--lake",
                str(lake),
                "--port",
                str(port),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for_ui(url, process)
            for shot in shoot(url, args.out):
                print(f"screenshot: {shot} ({shot.stat().st_size // 1024} KiB)")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
