"""`trecho serve`, `trecho mcp` and `trecho search` against what an attacker or a careless
client sends: text that is not Unicode, slow and oversized requests, a foreign `Host`
(DNS rebinding), values one mode accepted and another refused, a reader that closes the
pipe. A real server in a subprocess on a small lake, called over real sockets; MCP over
stdio as raw JSON-RPC lines (what a client could send, not only what the SDK's client
sends); property-based requests (hypothesis) that must never get a 5xx or no answer."""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.cli import main
from rag_assets.core.lake.layout import Lake

from .conftest import REPO, copy_lake
from .test_serve import Server, serve_env, start_server, stop

VIBRATION = "qual o limite de vibração?"
CAP = 24  # the module server's --max-connections
DEADLINE = "4"  # its --request-timeout, seconds


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Iterator[Lake]:
    """The operation manual, materialized once."""
    root = tmp_path_factory.mktemp("hardening")
    lake = copy_lake(root / "lake", ["manual-operacao"], [])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
        yield lake


@pytest.fixture(scope="module")
def server(lake: Lake, tmp_path_factory) -> Iterator[Server]:
    """`trecho serve` with small connection limits and one extra Host name."""
    log = tmp_path_factory.mktemp("log") / "serve.log"
    limits = ["--max-connections", str(CAP), "--request-timeout", DEADLINE]
    running = start_server(lake, log, *limits, "--allow-host", "trecho.test")
    yield running
    stop(running)


def port_of(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def request(
    server: Server,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    """One request on its own connection: (status, body text). `body` is sent as JSON
    with non-ASCII escaped, so a lone surrogate travels as `\\ud800`."""
    connection = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=60)
    try:
        data = json.dumps(body).encode() if body is not None else None
        sent = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, data, sent)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def detail(text: str) -> str:
    return str(json.loads(text)["detail"])


class StdioMcp:
    """`trecho mcp` driven by raw JSON-RPC lines on its stdin."""

    def __init__(self, lake: Lake) -> None:
        command = [sys.executable, "-m", "rag_assets.cli", "mcp", "--lake", str(lake.root)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=serve_env(),
            cwd=REPO,
        )
        self.next_id = 0
        client = {"name": "test", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        assert "result" in self.ask("initialize", params, timeout=180)
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def ask(self, method: str, params: Any, timeout: float = 60) -> dict[str, Any]:
        """Send one request (non-ASCII escaped) and wait for the answer with its id."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.send(json.dumps(message))
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if not ready:
                break
            line = self.process.stdout.readline()
            assert line, "trecho mcp exited"
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return dict(answer)
        raise AssertionError(f"no answer to {message!r}")

    def tool(self, name: str, arguments: Any) -> tuple[bool, str]:
        """(refused, text): a tool error or a JSON-RPC error counts as refused."""
        answer = self.ask("tools/call", {"name": name, "arguments": arguments})
        if "error" in answer:
            return True, str(answer["error"]["message"])
        result = answer["result"]
        return bool(result.get("isError")), str(result["content"][0]["text"])

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def stdio(lake: Lake) -> Iterator[StdioMcp]:
    running = StdioMcp(lake)
    yield running
    running.close()


def cli(lake: Lake, capsys, *args: str) -> tuple[int, str]:
    """`trecho search` in-process: (exit code, stderr)."""
    capsys.readouterr()
    try:
        code = main(["search", *args, "--lake", str(lake.root)])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


# -- invalid text ----------------------------------------------------------------------

LONE = "\ud800 vibração"


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fts"])
def test_a_lone_surrogate_is_refused_with_a_4xx_in_every_mode(server: Server, mode: str) -> None:
    status, text = request(server, "POST", "/search", {"query": LONE, "mode": mode})
    assert status == 422 and "lone surrogate (U+D800)" in detail(text)
    status, text = request(server, "POST", "/search", {"query": "x", "documents": ["\udcff"]})
    assert status == 422 and "lone surrogate (U+DCFF)" in detail(text)


def test_mcp_over_stdio_answers_a_request_holding_a_lone_surrogate(stdio: StdioMcp) -> None:
    refused, message = stdio.tool("search_documents", {"query": LONE})
    assert refused and "lone surrogate" in message
    refused, message = stdio.tool("search_documents", {"query": VIBRATION, "mode": "\udfff"})
    assert refused and "lone surrogate" in message
    refused, _ = stdio.tool("search_documents", {"query": VIBRATION, "k": 1})
    assert not refused  # and the server still answers


def test_mcp_over_stdio_answers_a_line_that_is_not_json_with_a_parse_error(
    stdio: StdioMcp,
) -> None:
    """JSON-RPC's answer to what cannot be parsed: -32700 with a null id (over HTTP the
    SDK says the same); the client is never left waiting, and the server goes on."""
    stdio.send('{"jsonrpc": "2.0", "id": 7, "method": ')
    assert stdio.process.stdout is not None
    ready, _, _ = select.select([stdio.process.stdout], [], [], 60)
    assert ready, "no answer to a line that is not JSON"
    answer = json.loads(stdio.process.stdout.readline())
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert "not JSON" in answer["error"]["message"]
    refused, _ = stdio.tool("search_documents", {"query": VIBRATION, "k": 1})
    assert not refused


@pytest.mark.parametrize(
    ("line", "code", "said"),
    [
        ("[]", -32600, "an array"),
        ("42", -32600, "a number"),
        ("{}", -32600, '"jsonrpc": "2.0"'),
        ('"ping"', -32600, "a string"),
        ('{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', -32602, "lone surrogate"),
    ],
)
def test_mcp_over_stdio_answers_json_that_is_no_request_with_a_null_id(
    stdio: StdioMcp, line: str, code: int, said: str
) -> None:
    """Every line gets an answer (the SDK alone dropped these, and a client waited for
    ever): JSON that is not a request is an invalid request (-32600), and an id that
    cannot be written back (a lone surrogate) is answered as null."""
    stdio.send(line)
    assert stdio.process.stdout is not None
    ready, _, _ = select.select([stdio.process.stdout], [], [], 60)
    assert ready, f"no answer to {line}"
    answer = json.loads(stdio.process.stdout.readline())
    assert answer["id"] is None and answer["error"]["code"] == code, answer
    assert said in answer["error"]["message"]
    refused, _ = stdio.tool("search_documents", {"query": VIBRATION, "k": 1})
    assert not refused  # the server goes on


def test_mcp_over_stdio_refuses_json_nested_deep_or_a_line_too_long_and_goes_on(
    stdio: StdioMcp,
) -> None:
    """A 2.3 KB `tools/call` whose `documents` nest 1,100 levels deep ended `trecho mcp`
    (Python's JSON parser recursed past its limit); it is refused unparsed with -32600,
    as is a line over the size limit, and the server answers the next request."""
    nested = "[" * 1100 + "]" * 1100
    deep = (
        '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": '
        '"search_documents", "arguments": {"query": "x", "documents": ' + nested + "}}}"
    )
    long = json.dumps({"jsonrpc": "2.0", "id": 10, "method": "ping", "x": "a" * 1_100_000})
    assert stdio.process.stdout is not None
    for line, said in ((deep, "nests deeper than 64 levels"), (long, "over the limit")):
        stdio.send(line)
        ready, _, _ = select.select([stdio.process.stdout], [], [], 60)
        assert ready, f"no answer to {said}"
        answer = json.loads(stdio.process.stdout.readline())
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert said in answer["error"]["message"]
        assert stdio.process.poll() is None  # still running
    refused, _ = stdio.tool("search_documents", {"query": VIBRATION, "k": 1})
    assert not refused  # the server goes on


def next_line(stdio: StdioMcp, about: str) -> dict[str, Any]:
    """The next line `trecho mcp` writes, as JSON (it must come: no line goes unanswered)."""
    assert stdio.process.stdout is not None
    ready, _, _ = select.select([stdio.process.stdout], [], [], 60)
    assert ready, f"no answer to {about}"
    return dict(json.loads(stdio.process.stdout.readline()))


BAD_IDS = ['{"a": 1}', "null", "1.5", "true", "[1]"]
"""Ids JSON-RPC does not allow (an id is an integer or a string; MCP's is never null):
the SDK read such a request as a notification and never answered it."""


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_mcp_over_stdio_answers_a_request_whose_id_is_no_integer_or_string(
    stdio: StdioMcp, bad_id: str
) -> None:
    stdio.send('{"jsonrpc": "2.0", "id": ' + bad_id + ', "method": "ping"}')
    answer = next_line(stdio, f"id {bad_id}")
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    assert "an id is an integer or a string" in answer["error"]["message"]
    refused, _ = stdio.tool("search_documents", {"query": VIBRATION, "k": 1})
    assert not refused  # the server goes on


NOT_UTF8 = '{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": '
NOT_UTF8 += '"search_documents", "arguments": {"query": "vibração"}}}'
LATIN1 = NOT_UTF8.encode("latin-1")
"""A search whose query is Latin-1, not UTF-8: stdio replaced the byte with U+FFFD and
searched, while HTTP refused it."""


def test_mcp_over_stdio_refuses_bytes_that_are_not_utf8_as_http_does(
    stdio: StdioMcp, server: Server
) -> None:
    assert stdio.process.stdin is not None
    stdio.process.stdin.write(LATIN1 + b"\n")
    stdio.process.stdin.flush()
    answer = next_line(stdio, "bytes that are not UTF-8")
    at = LATIN1.index(0xE7)
    assert answer["id"] is None and answer["error"]["code"] == -32700, answer
    assert answer["error"]["message"] == (
        f"the line is not UTF-8 text (byte 0xe7 at byte {at}); send JSON encoded as UTF-8"
    )
    status, text = raw_request(server, "/mcp", LATIN1, MCP_HEADERS)
    assert status == 400 and json.loads(text)["error"] == {
        "code": -32700,
        "message": f"the request body is not UTF-8 text (byte 0xe7 at byte {at}); "
        "send JSON encoded as UTF-8",
    }
    refused, _ = stdio.tool("search_documents", {"query": VIBRATION, "k": 1})
    assert not refused  # the server goes on


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def raw_request(server: Server, path: str, data: bytes, headers: dict[str, str]) -> tuple[int, str]:
    """One POST of `data` as given, with `headers` only: (status, body text)."""
    connection = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=60)
    try:
        connection.putrequest("POST", path)
        for name, value in {**headers, "Content-Length": str(len(data))}.items():
            connection.putheader(name, value)
        connection.endheaders(data)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def mcp_session(server: Server) -> dict[str, str]:
    """The headers of an initialized MCP session over HTTP."""
    client = {"name": "test", "version": "1"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    connection = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=60)
    try:
        connection.request("POST", "/mcp", body.encode(), MCP_HEADERS)
        response = connection.getresponse()
        response.read()
        session = response.getheader("mcp-session-id")
    finally:
        connection.close()
    assert session, "no MCP session"
    headers = {**MCP_HEADERS, "mcp-session-id": session}
    done = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert raw_request(server, "/mcp", done, headers)[0] == 202
    return headers


DEEP = "[" * 1100 + "]" * 1100


@pytest.mark.parametrize(
    ("line", "code", "said"),
    [
        *(
            ('{"jsonrpc": "2.0", "id": ' + bad + ', "method": "ping"}', -32600, "an id is an")
            for bad in BAD_IDS
        ),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + DEEP + "}", -32600, "64"),
        ("[]", -32600, "an array"),
    ],
)
def test_mcp_over_http_answers_what_stdio_answers(
    server: Server, stdio: StdioMcp, line: str, code: int, said: str
) -> None:
    """A request with an object id got a bodyless 202 over `/mcp` (read as a
    notification), deep JSON the parser's `recursion limit exceeded`: `/mcp` answers
    each as stdio does, in the same words, and goes on."""
    headers = mcp_session(server)
    status, text = raw_request(server, "/mcp", line.encode(), headers)
    answer = json.loads(text)
    assert status == 400 and answer["id"] is None and answer["error"]["code"] == code, text
    assert said in answer["error"]["message"]
    stdio.send(line)
    assert next_line(stdio, line)["error"] == answer["error"]
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    status, text = raw_request(server, "/mcp", ping, headers)
    assert status == 200 and '"result"' in text  # the session goes on


def test_json_nested_deep_is_refused_by_the_api_naming_the_nesting(server: Server) -> None:
    """FastAPI's parser said `There was an error parsing the body`."""
    body = ('{"query": "x", "documents": ' + DEEP + "}").encode()
    status, text = raw_request(server, "/search", body, {"Content-Type": "application/json"})
    assert (status, detail(text)) == (
        422,
        "the body is refused unread: the JSON nests deeper than 64 levels, the limit",
    )


@pytest.mark.parametrize("content_type", ["text/plain", None])
def test_a_json_body_not_sent_as_json_is_told_its_content_type(
    server: Server, content_type: str | None
) -> None:
    """It got `422 body: Input should be a valid dictionary`; `/mcp` said `Invalid
    Content-Type header` in plain text."""
    headers = {"Content-Type": content_type} if content_type else {}
    body = json.dumps({"query": VIBRATION}).encode()
    status, text = raw_request(server, "/search", body, headers)
    sent = f"sent as {content_type!r}" if content_type else "sent without a Content-Type"
    assert (status, detail(text)) == (
        415,
        f"the body is {sent}; send JSON with Content-Type: application/json",
    )
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    accept = {"Accept": MCP_HEADERS["Accept"]}
    status, text = raw_request(server, "/mcp", ping, {**headers, **accept})
    assert status == 415 and sent in json.loads(text)["error"]["message"], text


def test_a_body_that_is_not_utf8_is_refused_with_422(server: Server) -> None:
    """docs/serve.md: text that is not Unicode gets 422, bytes as much as escapes."""
    connection = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=60)
    try:
        body = '{"query": "vibração"}'.encode("latin-1")
        connection.request("POST", "/search", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        status, text = response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()
    assert status == 422 and "not UTF-8" in detail(text), text
    assert f"0xe7 at byte {body.index(0xE7)}" in detail(text)


def test_the_cli_refuses_text_that_is_not_utf8_on_one_line(lake: Lake, capsys) -> None:
    # bytes that are not UTF-8 in argv reach Python as lone surrogates (surrogateescape)
    code, err = cli(lake, capsys, "\udcff vibração")
    assert code == 2 and err.count("\n") == 1 and "lone surrogate (U+DCFF)" in err
    assert "codec" not in err and "Traceback" not in err


# -- slow and oversized requests -------------------------------------------------------


def half_header(server: Server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port_of(server)), timeout=60)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127")
    return sock


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    with sock:
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_a_half_sent_or_trickled_header_is_answered_408_and_closed(server: Server) -> None:
    held = [half_header(server) for _ in range(5)]
    trickled = half_header(server)
    trickled.settimeout(0.2)
    answer = b""
    for _ in range(300):  # a byte every 0.2 s: the deadline does not move (60 s at most)
        with contextlib.suppress(ConnectionError):
            trickled.sendall(b"1")
        with contextlib.suppress(TimeoutError):
            answer = trickled.recv(65536)
        if answer:
            break
    assert answer.startswith(b"HTTP/1.1 408 ")
    for sock in held:
        assert until_closed(sock).startswith(b"HTTP/1.1 408 ")
    assert request(server, "GET", "/health")[0] == 200


def test_connections_past_the_cap_get_503_and_normal_requests_resume(server: Server) -> None:
    held = [half_header(server) for _ in range(CAP)]
    try:
        status, text = request(server, "GET", "/health")
        assert status == 503 and f"holds {CAP} connections" in detail(text)
    finally:
        answers = [until_closed(sock) for sock in held]  # cut by the deadline
    assert all(a.startswith((b"HTTP/1.1 408 ", b"HTTP/1.1 503 ")) for a in answers)
    assert request(server, "POST", "/search", {"query": VIBRATION, "k": 1})[0] == 200


@pytest.mark.parametrize("size", [20_000, 2_000_000])
def test_oversized_request_headers_get_431(server: Server, size: int) -> None:
    sock = socket.create_connection(("127.0.0.1", port_of(server)), timeout=60)
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * size + b"\r\n\r\n"
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        sock.sendall(head)
    assert until_closed(sock).startswith(b"HTTP/1.1 431 ")


def test_a_chunked_body_over_the_limit_gets_413(server: Server) -> None:
    body = json.dumps({"query": VIBRATION, "documents": ["x" * 70_000]}).encode()
    sock = socket.create_connection(("127.0.0.1", port_of(server)), timeout=60)
    sock.sendall(
        b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\n"
    )
    answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 413 ") and b"65536 bytes" in answer


# -- DNS rebinding ---------------------------------------------------------------------

ROUTES = [
    ("POST", "/search", {"query": VIBRATION, "k": 1}),
    ("GET", "/documents", None),
    ("GET", "/health", None),
    ("GET", "/openapi.json", None),
    ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_a_foreign_host_or_origin_is_refused_on_every_route(
    server: Server, method: str, path: str, body: Any
) -> None:
    foreign = request(server, method, path, body, {"Host": "evil.example"})
    assert foreign[0] == 421 and "Host 'evil.example'" in detail(foreign[1])
    port = port_of(server)
    page = {"Host": f"127.0.0.1:{port}", "Origin": "http://evil.example"}
    status, text = request(server, method, path, body, page)
    assert status == 403 and "Origin 'http://evil.example'" in detail(text)


def test_loopback_names_and_allowed_hosts_are_served(server: Server) -> None:
    port = port_of(server)
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "trecho.test", "trecho.test:80"):
        origin = {"Origin": f"http://{host}"}
        assert request(server, "GET", "/documents", None, {"Host": host, **origin})[0] == 200


# -- the CLI, the API and MCP agree ----------------------------------------------------

AGREE = [  # (request, the CLI's arguments or None, the message all of them give)
    ({"query": "?!"}, ["?!"], "query '?!' has no word to search for"),
    ({"query": VIBRATION, "k": 100000}, [VIBRATION, "-k", "100000"], "k must be between 1 and 50"),
    ({"query": VIBRATION, "documents": ["nope"]}, [VIBRATION, "--doc", "nope"], "unknown document"),
    ({"query": VIBRATION, "versions": ["v99"]}, [VIBRATION, "--version", "v99"], "unknown version"),
    ({"query": "vibração " * 200}, ["vibração " * 200], "reads at most 256"),
    ({"query": VIBRATION, "k": True}, None, "k: Input should be a valid integer"),
    ({"query": VIBRATION, "expand": "yes"}, None, "expand: Input should be a valid boolean"),
    ({"query": VIBRATION, "top": 3}, None, "top: Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("body", "args", "message"), AGREE)
def test_the_cli_the_api_and_mcp_refuse_the_same_requests_with_the_same_words(
    server: Server,
    stdio: StdioMcp,
    lake: Lake,
    capsys,
    body: dict[str, Any],
    args: list[str] | None,
    message: str,
) -> None:
    status, text = request(server, "POST", "/search", body)
    assert 400 <= status < 500 and message in detail(text)
    refused, said = stdio.tool("search_documents", body)
    assert refused and message in said
    if args is not None:
        code, err = cli(lake, capsys, *args)
        assert code == 2 and err.count("\n") == 1 and message in err


def test_list_documents_refuses_arguments(stdio: StdioMcp) -> None:
    refused, said = stdio.tool("list_documents", {"doc": "x"})
    assert refused and "takes no arguments" in said


# -- a reader that leaves --------------------------------------------------------------


@pytest.mark.parametrize("command", [["search", VIBRATION, "-k", "20"], ["status"]])
def test_a_closed_pipe_ends_the_cli_quietly(lake: Lake, command: list[str]) -> None:
    """`trecho search ... | head -1`: here the reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rag_assets.cli", *command, "--lake", str(lake.root)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=serve_env(DAGSTER_HOME=str(lake.root.parent / "dagster_home")),
            cwd=REPO,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert done.returncode == 1


# -- property-based: never a 5xx, never a hang -----------------------------------------

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])
TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from([VIBRATION, "manual-operacao", "v1", "2026-03-01", "", " ", "?!"]),
    st.lists(st.one_of(st.text(max_size=3), SURROGATES), min_size=1, max_size=4).map("".join),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
FIELDS = {
    "query": TEXT | JSON,
    "k": st.integers(-3, 120) | JSON,
    "mode": st.sampled_from(["hybrid", "vector", "fts"]) | TEXT,
    "documents": st.lists(TEXT, max_size=2) | JSON,
    "versions": st.lists(TEXT, max_size=2) | JSON,
    "as_of": st.dates().map(str) | TEXT,
    "expand": st.booleans() | JSON,
}
ARGUMENTS = st.fixed_dictionaries({}, optional=FIELDS).flatmap(
    lambda known: st.dictionaries(TEXT, JSON, max_size=1).map(lambda extra: {**extra, **known})
)
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@PROPERTY
@given(body=ARGUMENTS | JSON)
def test_post_search_never_answers_5xx(server: Server, body: Any) -> None:
    status, text = request(server, "POST", "/search", body)
    assert status < 500, text
    answer = json.loads(text)
    assert ("hits" in answer) if status == 200 else isinstance(answer["detail"], str)


@PROPERTY
@given(name=st.sampled_from(["search_documents", "list_documents"]), arguments=ARGUMENTS)
def test_mcp_tools_always_answer_and_never_crash(
    stdio: StdioMcp, name: str, arguments: dict[str, Any]
) -> None:
    answer = stdio.ask("tools/call", {"name": name, "arguments": arguments})
    if "error" in answer:
        assert answer["error"]["code"] != -32603, answer  # no internal error
    else:
        text = answer["result"]["content"][0]["text"]
        assert text != f"Error executing tool {name}", text  # a crash: the SDK hides why
