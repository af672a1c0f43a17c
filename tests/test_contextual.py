"""Contextual Retrieval against a real (tiny) OpenAI-compatible HTTP server in a thread:
sentences land after the header, a rerun is served from the cache, a dead endpoint
changes nothing and raises nothing, no chunk grows past the model's maximum."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rag_assets.core.chunking.contextual import Situator, SituatorConfig, clean_sentence
from rag_assets.core.embedding.tokens import TokenCounter
from rag_assets.core.lake.schemas import Chunk, content_hash
from rag_assets.settings import secret

DOC_HASH = "ab" * 32
TITLE = "Manual de Operação"
DOC_TEXT = "Manual de Operação e Manutenção — Bomba Centrífuga BC-200\n" + "texto " * 1000
BODIES = [
    ("2.1 Inspeção visual", "A inspeção visual deve ser realizada a cada 30 dias."),
    ("2.2 Medição de vibração", "A medição de vibração deve ser feita a cada 90 dias."),
    ("4 Registro", "Toda medição deve ser registrada com a data e o responsável."),
]


@dataclass
class Served:
    """What the fake endpoint saw."""

    url: str
    calls: int = 0
    requests: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


Reply = Callable[[dict], tuple[int, bytes]]


def echo_reply(request: dict) -> tuple[int, bytes]:
    """A deterministic sentence built from the request's section line."""
    user = request["messages"][-1]["content"]
    section = re.search(r"^Section: (.*)$", user, re.M).group(1)
    title = re.search(r"^Document title: (.*)$", user, re.M).group(1)
    sentence = f"Este trecho de {title} trata de {section}."
    body = {"choices": [{"message": {"role": "assistant", "content": sentence}}]}
    return 200, json.dumps(body).encode("utf-8")


@contextmanager
def fake_llm(reply: Reply = echo_reply, delay_s: float = 0.0) -> Iterator[Served]:
    """An OpenAI-compatible server on 127.0.0.1, stopped when the block ends."""
    served = Served(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            served.calls += 1
            served.requests.append(request)
            served.headers.append(dict(self.headers))
            if self.path != "/v1/chat/completions":
                status, body = 404, b"not found"
            else:
                status, body = reply(request)
            if delay_s:
                time.sleep(delay_s)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up (timeout test)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    served.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        assert not thread.is_alive()


@pytest.fixture
def make_chunks(hand_chunk, counter: TokenCounter) -> Callable[..., list[Chunk]]:
    """`make_chunks(bodies=BODIES)`: one section chunk of the manual per (path, body)."""

    def build(bodies: list[tuple[str, str]] = BODIES) -> list[Chunk]:
        chunks = []
        for i, (path, body) in enumerate(bodies):
            header = f"[manual-operacao | {path} | v1]"
            tokens = counter.count(f"{header}\n{body}")
            chunks.append(
                hand_chunk(
                    "manual-operacao@v1",
                    i,
                    f"c{i}",
                    path,
                    header,
                    body,
                    i * 100,
                    strategy="structural",
                    token_count=tokens,
                )
            )
        return chunks

    return build


def situator(url: str, counter: TokenCounter, cache: Path, **kw) -> Situator:
    return Situator(url=url, model="tiny", counter=counter, cache_dir=cache, **kw)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_sentences_follow_the_header_and_a_rerun_is_cached(tmp_path, counter, make_chunks):
    chunks = make_chunks()
    cache = tmp_path / "lake" / "cache" / "contextual"
    with fake_llm() as served:
        first = situator(served.url, counter, cache, api_key="sk-test").situate(
            DOC_HASH, chunks, TITLE, DOC_TEXT
        )
        assert served.calls == 3
        assert first.counts == {"called": 3, "cached": 0, "failed": 0, "skipped_too_long": 0}
        assert first.failures == []
        for old, new in zip(chunks, first.chunks, strict=True):
            path = old.path
            sentence = f"Este trecho de {TITLE} trata de {path}."
            assert new.text == f"{old.header}\n{sentence}\n{old.body}"
            assert new.text == f"{new.header}\n{new.body}" and new.body == old.body
            assert new.token_count == counter.count(new.text) <= counter.max_tokens
            assert new.token_count > old.token_count and not new.truncated
            assert new.content_hash == content_hash(new.text) != old.content_hash
            assert (new.chunk_id, new.char_start, new.char_end) == (
                old.chunk_id,
                old.char_start,
                old.char_end,
            )
        # what was sent: system prompt, title, section, body, a bounded document excerpt
        request = served.requests[0]
        assert request["model"] == "tiny" and request["messages"][0]["role"] == "system"
        user = request["messages"][1]["content"]
        assert TITLE in user and BODIES[0][0] in user and BODIES[0][1] in user
        assert "Bomba Centrífuga" in user and len(user) < 2000 + 1000
        assert served.headers[0]["Authorization"] == "Bearer sk-test"
        assert [c.text for c in chunks] != [c.text for c in first.chunks]  # inputs untouched
        assert chunks[0].text.startswith(chunks[0].header + "\n" + chunks[0].body)

        again = situator(served.url, counter, cache).situate(DOC_HASH, chunks, TITLE, DOC_TEXT)
        assert served.calls == 3  # nothing called on a rerun
        assert again.counts == {"called": 0, "cached": 3, "failed": 0, "skipped_too_long": 0}
        assert [c.text for c in again.chunks] == [c.text for c in first.chunks]
    assert len(list(cache.glob("*.jsonl"))) == 1


def test_another_model_or_document_is_not_served_from_the_cache(tmp_path, counter, make_chunks):
    chunks = make_chunks()[:1]
    with fake_llm() as served:
        situator(served.url, counter, tmp_path).situate(DOC_HASH, chunks, TITLE)
        other = Situator(served.url, "other", counter, tmp_path)
        assert other.situate(DOC_HASH, chunks, TITLE).called == 1
        assert situator(served.url, counter, tmp_path).situate("cd" * 32, chunks, TITLE).called
        assert served.calls == 3


def test_http_500_leaves_chunks_unchanged_and_counts_failures(tmp_path, counter, make_chunks):
    chunks = make_chunks()
    with fake_llm(lambda _request: (500, b'{"error": "boom"}')) as served:
        result = situator(served.url, counter, tmp_path).situate(DOC_HASH, chunks, TITLE)
    assert served.calls == 3
    assert result.counts == {"called": 3, "cached": 0, "failed": 3, "skipped_too_long": 0}
    assert [c.text for c in result.chunks] == [c.text for c in chunks]
    assert all("HTTP 500" in f for f in result.failures) and len(result.failures) == 3
    assert not list(tmp_path.glob("*.jsonl"))  # failures are not cached


def test_closed_port_timeout_and_malformed_replies_never_raise(tmp_path, counter, make_chunks):
    chunks = make_chunks()
    refused = situator(closed_port_url(), counter, tmp_path, timeout_s=2).situate(
        DOC_HASH, chunks, TITLE
    )
    assert refused.failed == 3 and [c.text for c in refused.chunks] == [c.text for c in chunks]
    assert len(refused.failures) == 3
    assert all("cannot reach" in f for f in refused.failures)

    with fake_llm(lambda _request: (200, b"not json at all")) as served:
        bad = situator(served.url, counter, tmp_path).situate(DOC_HASH, chunks, TITLE)
    assert bad.failed == 3 and all("malformed" in f for f in bad.failures)

    with fake_llm(lambda _request: (200, b'{"choices": []}')) as served:
        empty = situator(served.url, counter, tmp_path).situate(DOC_HASH, chunks, TITLE)
    assert empty.failed == 3 and [c.text for c in empty.chunks] == [c.text for c in chunks]

    with fake_llm(delay_s=1.0) as served:
        started = time.monotonic()
        slow = situator(
            served.url, counter, tmp_path, timeout_s=0.2, max_consecutive_failures=2
        ).situate(DOC_HASH, chunks, TITLE)
        assert time.monotonic() - started < 5
    assert slow.counts == {"called": 2, "cached": 0, "failed": 3, "skipped_too_long": 0}
    assert "endpoint down" in slow.failures[-1]
    assert [c.text for c in slow.chunks] == [c.text for c in chunks]


def test_a_sentence_that_would_overflow_the_model_is_skipped(tmp_path, counter, make_chunks):
    long_body = " ".join(["medição"] * 400)
    words = long_body.split()
    while counter.count(f"[manual-operacao | 9 Longo | v1]\n{' '.join(words)}") > 250:
        words.pop()
    bodies = [("9 Longo", " ".join(words)), BODIES[0]]
    chunks = make_chunks(bodies)
    with fake_llm() as served:
        result = situator(served.url, counter, tmp_path).situate(DOC_HASH, chunks, TITLE)
    assert result.counts == {"called": 2, "cached": 0, "failed": 0, "skipped_too_long": 1}
    assert result.chunks[0] is chunks[0]
    assert result.chunks[1].text != chunks[1].text
    for chunk in result.chunks:
        assert chunk.token_count == counter.count(chunk.text) <= counter.max_tokens


def test_long_replies_are_cut_to_max_words_and_cleaned(tmp_path, counter, make_chunks):
    chunks = make_chunks()[:1]
    long_reply = "<think>hmm</think> “" + " ".join(["palavra"] * 100) + "”"
    body = json.dumps({"choices": [{"message": {"content": long_reply}}]}).encode()
    with fake_llm(lambda _request: (200, body)) as served:
        result = situator(served.url, counter, tmp_path, max_words=10).situate(
            DOC_HASH, chunks, TITLE
        )
    sentence = result.chunks[0].text.split("\n")[1]
    assert sentence == " ".join(["palavra"] * 10) + " …"
    assert clean_sentence('  "Uma frase."\n', 40) == "Uma frase."


def test_config_is_off_by_default_and_reads_the_key_from_env(tmp_path, counter, monkeypatch):
    assert SituatorConfig().enabled is False
    assert SituatorConfig().build(counter, tmp_path) is None
    monkeypatch.setenv("TRECHO_TEST_KEY", "sk-env")
    config = SituatorConfig(
        enabled=True, url="http://127.0.0.1:1/v1", api_key=secret("TRECHO_TEST_KEY")
    )
    built = config.build(counter, tmp_path)
    assert built is not None and built.api_key == "sk-env"
    assert built.endpoint == "http://127.0.0.1:1/v1/chat/completions"
