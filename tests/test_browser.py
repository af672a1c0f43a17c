"""What users see in a browser: the HTML eval report, and the asset lineage in the Dagster UI
(a real `dagster-webserver` on loopback), rendered by headless Chromium (Debian `chromium`,
driven by Playwright; no browser is downloaded).

Screenshots are saved under `test-artifacts/` (git-ignored; CI keeps the folder).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag_assets.cli import main
from rag_assets.core.lake.layout import Lake

from .conftest import REPO, copy_lake

# slow: headless Chromium and a Dagster webserver
pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("TRECHO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts"
CHAIN = [
    "raw_pdf",
    "page_text",
    "structure_tree",
    "linearized_tables",
    "chunks",
    "embeddings",
    "eval_report",
]
LIVE = ["manual-beneficiario@v7", "manual-operacao@v1"]
EVAL_CONFIG = {
    "ops": {"eval_report": {"config": {"strategies": ["fixed_tokens-512-o64"], "offsets": 2}}}
}


def require_chromium() -> None:
    """Skip when Chromium is missing, except in CI (CI=true), where that is a failure."""
    if Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK):
        return
    reason = f"chromium not found at {CHROMIUM}: apt-get install chromium (scripts/setup.sh does)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Debian Chromium under Playwright."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def ui_lake(tmp_path_factory, embedder) -> Iterator[tuple[Lake, Path]]:
    """A small lake indexed by `trecho materialize` into a persistent Dagster home, then
    its eval report materialized there: the default and 512-token windows (two offsets)."""
    from dagster import DagsterInstance

    from rag_assets.definitions import build_definitions

    root = tmp_path_factory.mktemp("browser")
    lake = copy_lake(root / "lake", ["manual-operacao", "manual-beneficiario"], ["manuais.jsonl"])
    home = root / "dagster_home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(home))
        patch.setenv("TRECHO_LAKE", str(lake.root))
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
        instance = DagsterInstance.get()
        try:
            job = build_definitions(str(lake.root)).resolve_job_def("eval_report_job")
            assert job.execute_in_process(instance=instance, run_config=EVAL_CONFIG).success
        finally:
            instance.dispose()
    yield lake, home


def latest_report(lake: Lake) -> Path:
    return sorted(lake.reports_dir.iterdir())[-1] / "report.html"


def test_report_html_renders_tables_and_plots_offline(ui_lake, browser):
    lake, _ = ui_lake
    report = latest_report(lake)
    metrics = json.loads((report.parent / "metrics.json").read_text(encoding="utf-8"))
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")

    # one row per strategy, in the order of metrics.json, the default policy first
    names = page.locator("#metrics tbody tr td:first-child").all_inner_texts()
    assert names == list(metrics["strategies"])
    assert names == ["default", "fixed_tokens-512-o64"]
    default_row = page.locator('#metrics tr[data-strategy="default"] td').all_inner_texts()
    # a cell under every heading: strategy, chunks and the thirteen metrics (unnamed and
    # flagged tables, off-heading paths too)
    headings = page.locator("#metrics th").all_inner_texts()
    assert len(default_row) == len(headings) == 15
    assert default_row[headings.index("off_heading_paths")] == "0"  # paths hold only headings
    assert default_row[headings.index("flagged_tables")] == "0"  # every sample table is read
    # size-based: one row per start offset, each with its own hit@3
    offsets = page.locator('#offsets tr[data-strategy="fixed_tokens-512-o64"]')
    assert offsets.count() == 2
    assert page.locator("#tags tbody tr").count() >= 3  # tabela, leiga, gemea, ...
    assert page.locator("#documents tbody tr").count() == 2 * len(names)
    # abstention at the served min_score, its sweep, and every question with its top 3
    abstention = page.locator("#abstention tbody tr td:first-child").all_inner_texts()
    assert abstention == names
    assert page.locator("#sweep tbody tr").count() == len(metrics["sweep"]) > 1
    rows = page.locator("#questions tbody tr")
    assert rows.count() == len(metrics["per_question"])
    outcomes = page.locator("#questions tbody tr td:last-child").all_inner_texts()
    assert all(o.startswith(("hit@", "miss", "answers", "abstains")) for o in outcomes)
    assert page.locator("#questions tr.failed").count() == sum(
        o.startswith(("miss", "answers")) for o in outcomes
    )

    # three plots, each an image that decoded and is drawn at a visible size
    for figure in ("fig-hit-vs-tokens", "fig-tags", "fig-offsets"):
        image = page.locator(f"#{figure} img")
        natural = image.evaluate("i => [i.complete, i.naturalWidth, i.naturalHeight]")
        assert natural[0] and natural[1] > 100 and natural[2] > 100, (figure, natural)
        box = image.bounding_box()
        assert box and box["width"] > 100 and box["height"] > 100, (figure, box)

    # readable offline: nothing but the file itself and inline data was requested
    assert requests and all(u.startswith(("file:", "data:")) for u in requests), requests
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "eval-report.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def webserver(ui_lake, tmp_path) -> Iterator[str]:
    """`dagster-webserver` for the code location (workspace.yaml) on a free loopback port,
    reading the lake's Dagster home; waits for /server_info, stopped afterwards."""
    lake, home = ui_lake
    port = free_port()
    log = (tmp_path / "webserver.log").open("w", encoding="utf-8")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "TRECHO_LAKE": str(lake.root),
        "DAGSTER_DISABLE_TELEMETRY": "1",
        "HF_HUB_OFFLINE": "1",
    }
    webserver_bin = Path(sys.executable).with_name("dagster-webserver")
    process = subprocess.Popen(
        [str(webserver_bin), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the code server goes with it
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            if process.poll() is not None:
                pytest.fail(f"dagster-webserver exited: {(tmp_path / 'webserver.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/server_info", timeout=5) as response:
                    if response.status == 200 and "dagster_version" in json.loads(response.read()):
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"dagster-webserver never answered on {url}/server_info")
            time.sleep(1)
        yield url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        log.close()


def skip_community_dialog(page: Any) -> None:
    """A fresh Dagster home greets the first visit with a newsletter dialog: skip it."""
    skip = page.get_by_role("button", name="Skip")
    try:
        skip.wait_for(state="visible", timeout=5_000)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: no dialog this time
        return
    skip.click()


def settle(page: Any) -> None:
    """Wait (at most 15 s) for the UI's queries to finish, for a screenshot that shows what
    a user sees; the UI polls, so a page that never goes quiet is not an error."""
    try:
        page.wait_for_load_state("networkidle", timeout=15_000)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError
        pass


def graph_boxes(page: Any) -> dict[str, dict[str, float]]:
    """Asset nodes drawn in the graph SVG: name -> its box in graph coordinates."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('svg foreignObject')]
            .map(f => [(f.textContent || '').trim(), {
                x: +f.getAttribute('x'), y: +f.getAttribute('y'),
                w: +f.getAttribute('width'), h: +f.getAttribute('height')}])
            .filter(([name]) => /^[a-z_]+$/.test(name)))"""
    )


def graph_edges(page: Any) -> list[tuple[float, float, float, float]]:
    """Edges drawn in the graph SVG (paths ending in an arrow): (x1, y1, x2, y2)."""
    return [
        tuple(e)
        for e in page.evaluate(
            """() => [...document.querySelectorAll('svg path[marker-end]')].map(p => {
                const n = (p.getAttribute('d') || '').match(/-?[0-9.]+/g).map(Number);
                return [n[0], n[1], n[n.length - 2], n[n.length - 1]]; })"""
        )
    ]


def drawn_edge(
    source: dict[str, float], target: dict[str, float], edges: list[tuple[float, ...]]
) -> bool:
    """An edge leaves the source node's box and arrives at the target node's box."""

    def near(x: float, y: float, box: dict[str, float]) -> bool:
        slack = 20
        return (
            box["x"] - slack <= x <= box["x"] + box["w"] + slack
            and box["y"] - slack <= y <= box["y"] + box["h"] + slack
        )

    return any(near(x1, y1, source) and near(x2, y2, target) for x1, y1, x2, y2 in edges)


def test_dagster_ui_draws_the_lineage_and_lists_live_versions(webserver, browser):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(120_000)  # the code location loads torch on first request
    page.goto(f"{webserver}/asset-groups")
    skip_community_dialog(page)
    # one group: the lineage opens on every asset of the chain, no group to expand
    page.wait_for_function(
        "names => names.every(n => [...document.querySelectorAll('svg foreignObject')]"
        ".some(f => (f.textContent || '').trim() === n))",
        arg=CHAIN,
    )
    page.wait_for_function(
        f"() => document.querySelectorAll('svg path[marker-end]').length >= {len(CHAIN) - 1}"
    )
    # The graph is laid out and drawn in steps (nodes, then edges, then re-layout as status
    # arrives): poll until every edge of the chain is drawn, or 30 s have passed.
    missing: list[tuple[str, str]] = []
    for _ in range(60):
        boxes, edges = graph_boxes(page), graph_edges(page)
        missing = [
            (up, down)
            for up, down in zip(CHAIN, CHAIN[1:], strict=False)
            if up in boxes and down in boxes and not drawn_edge(boxes[up], boxes[down], edges)
        ]
        if set(CHAIN) <= set(boxes) and not missing:
            break
        page.wait_for_timeout(500)
    assert set(CHAIN) <= set(boxes), boxes
    assert not missing, (missing, len(edges))
    assert not drawn_edge(boxes["eval_report"], boxes["raw_pdf"], edges)
    settle(page)  # let the materialization status reach the nodes before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    graph_shot = ARTIFACTS / "asset-graph.png"
    page.screenshot(path=str(graph_shot))

    page.goto(f"{webserver}/assets/chunks?view=partitions")
    skip_community_dialog(page)
    for key in LIVE:
        page.get_by_text(key, exact=True).first.wait_for()
    assert page.get_by_text("manual-beneficiario@v6", exact=True).count() == 0  # revoked
    settle(page)
    partitions_shot = ARTIFACTS / "chunks-partitions.png"
    page.screenshot(path=str(partitions_shot))
    print(f"screenshots: {graph_shot} {partitions_shot}")


def test_api_docs_render_their_operations_with_the_network_blocked(ui_lake, browser, tmp_path):
    """`/docs` of `trecho serve` where nothing outside the machine can be reached: every
    request to a host other than the server's is aborted, and the operations still show."""
    from .test_serve import start_server, stop

    lake, _ = ui_lake
    server = start_server(lake, tmp_path / "serve.log")
    blocked: list[str] = []

    def only_local(route: Any) -> None:
        host = urllib.parse.urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.route("**/*", only_local)
        page = context.new_page()
        page.goto(f"{server.url}/docs")
        page.wait_for_selector(".opblock", timeout=60_000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        assert {"/search", "/documents", "/health"} <= {p.strip() for p in paths}
        assert page.locator(".opblock-post").count() >= 1  # POST /search, styled
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "api-docs-offline.png"), full_page=True)
        assert blocked == []  # nothing was asked of the internet
        context.close()
    finally:
        stop(server)


def test_check_results_name_their_version_in_the_ui(ui_lake, webserver, browser):
    """The Checks tab of `chunks`: the latest result names the version it judged and what
    it counted, and the check's partitions list each live version with its result."""
    lake, _ = ui_lake
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(120_000)
    page.goto(f"{webserver}/assets/chunks?view=checks")
    skip_community_dialog(page)
    check = page.get_by_text("no_orphan_table_values", exact=True).filter(visible=True).first
    check.wait_for()
    skip_community_dialog(page)  # on a slow machine it opens after the page drew
    check.click()
    described = page.get_by_text(re.compile(r"0 orphans among the \d+ chunks of manual-"))
    described.first.wait_for()
    shown = described.first.inner_text()
    assert any(shown.endswith(key) for key in LIVE), shown
    page.get_by_text("Partition", exact=True).first.wait_for()
    settle(page)
    ARTIFACTS.mkdir(exist_ok=True)
    latest_shot = ARTIFACTS / "chunk-check-latest.png"
    page.screenshot(path=str(latest_shot))

    page.locator("button[role=tab]", has_text="Partitions").click()  # the check's own tab
    for key in LIVE:  # each live version, with its own result
        page.get_by_text(key, exact=True).filter(visible=True).first.wait_for()
    settle(page)
    partitions_shot = ARTIFACTS / "chunk-check-partitions.png"
    page.screenshot(path=str(partitions_shot))
    print(f"screenshots: {latest_shot} {partitions_shot}")


def test_job_pages_say_the_automation_is_on(ui_lake, webserver, browser):
    """With the automation sensor running (its default), the job page does not say
    "Auto-materialize off" once the raw-folder sensor has ticked."""
    from dagster import DagsterInstance, build_sensor_context

    from rag_assets.definitions import build_definitions

    lake, home = ui_lake
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(home))
        instance = DagsterInstance.get()
        try:
            defs = build_definitions(str(lake.root))
            context = build_sensor_context(
                instance=instance, definitions=defs, resources=defs.resources
            )
            defs.resolve_sensor_def("raw_folder_sensor")(context)  # one tick
        finally:
            instance.dispose()
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(120_000)
    page.goto(f"{webserver}/locations/trecho/jobs/index_documents")
    skip_community_dialog(page)
    page.get_by_text("Auto-materialize on", exact=True).first.wait_for()
    assert page.get_by_text("Auto-materialize off", exact=True).count() == 0
    settle(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "job-automation-on.png"))
