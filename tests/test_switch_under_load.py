"""Searches served while a backfill switches the active model there and back: none fails.

A switch points search at the new model's table, then drops the old one; a search that
started on the old table must still answer (it holds its table through a grace period,
or is asked again of the new active table). Served both ways a server answers: the
engine in this process (the Python API of `serve.engine`) and a real `trecho serve` over
HTTP, while `trecho backfill` runs in another process, as it does in production. The
two models are the bundled MiniLM and the same weights under another name (another model
id, so another table): the cheapest real switch.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.core.embedding.embedder import resolve_model_path
from rag_assets.core.index import read_active
from rag_assets.core.request import Limits, SearchRequest
from rag_assets.serve.engine import Engine

from .conftest import REPO, copy_lake
from .test_serve import serve_env, start_server, stop

# slow: a lake materialized, a server started, two backfills in a subprocess
pytestmark = pytest.mark.slow

MINILM = "all-MiniLM-L6-v2"
QUESTION = "qual o limite de vibração?"


def test_searches_through_a_backfill_there_and_back_all_answer(
    tmp_path: Path, monkeypatch, embedder
) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    where = ["--lake", str(lake.root)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["materialize", "--skip-eval", *where]) == 0
    twin = tmp_path / "minilm-twin"  # the bundled weights under another name: another id
    twin.symlink_to(resolve_model_path(MINILM), target_is_directory=True)

    engine = Engine(lake, lake.lancedb_dir, embedder, Limits(), query_cache=0)
    engine.warm_up()
    server = start_server(lake, tmp_path / "serve.log")
    failures: list[str] = []
    answered: Counter[str] = Counter()
    done = threading.Event()

    def record(how: str, model: str | None, hits: int, error: str = "") -> None:
        if error or not hits:
            failures.append(f"{how}: {error or 'no hit'}")
        else:
            answered[f"{how} {model}"] += 1

    def in_process() -> None:
        while not done.is_set():
            try:
                answer = engine.search(SearchRequest(query=QUESTION, k=3))
                listed = engine.documents()["versions"]
                healthy = engine.health()["status"] == "ok"
                record("engine", answer["model"], len(answer["hits"]) * len(listed) * healthy)
            except Exception as exc:  # what a caller of the engine would get
                record("engine", None, 0, f"{type(exc).__name__}: {exc}")

    def over_http() -> None:
        while not done.is_set():
            try:
                status, answer = server.call("POST", "/search", {"query": QUESTION, "k": 3})
            except (OSError, ValueError) as exc:  # reset, refused, a 500 that is not JSON
                record("http", None, 0, f"{type(exc).__name__}: {exc}")
                continue
            if status != 200:
                record("http", None, 0, f"HTTP {status}: {answer}")
            else:
                record("http", answer["model"], len(answer["hits"]))

    threads = [threading.Thread(target=f) for f in (in_process, in_process, over_http, over_http)]
    for thread in threads:
        thread.start()
    try:
        for model in (str(twin), MINILM):  # there, and back
            backfill = [sys.executable, "-m", "rag_assets.cli", "backfill", "--model", model]
            ran = subprocess.run(
                [*backfill, *where],
                capture_output=True,
                text=True,
                cwd=REPO,
                env=serve_env(DAGSTER_HOME=str(home)),
            )
            assert ran.returncode == 0, ran.stdout + ran.stderr
            assert "dropped" in ran.stdout or "search uses" in ran.stdout, ran.stdout
            assert read_active(lake.lancedb_dir).model == model
    finally:
        done.set()
        for thread in threads:
            thread.join()
        stop(server)

    print(f"answered {dict(answered)}, failed {len(failures)}")  # the probe's figures (-s)
    assert failures == [], (len(failures), failures[:5], answered)
    twin_id = twin.name  # the twin's model id is its folder's name
    for how in ("engine", "http"):  # each way served both models: the switches were seen
        models = {key.split(" ", 1)[1] for key in answered if key.startswith(how)}
        assert any(twin_id in m for m in models) and any("minilm-l6" in m for m in models), answered
