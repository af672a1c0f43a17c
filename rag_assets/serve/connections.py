"""The HTTP connections of `trecho serve`: limits that keep slow or greedy clients from
holding the server (docs/serve.md, "Connection limits").

uvicorn's h11 protocol, with:

- a request head (request line and headers) of at most `max_header_bytes` (16 KiB); a
  larger one is answered 431 and the connection closed;
- a deadline: a request's head and body must arrive within `request_timeout` seconds
  (10) of the connection opening, or of the previous answer on a kept-alive
  connection. A client that sends half a header, or trickles it a byte at a time, is
  answered 408 and closed; the deadline does not move when bytes arrive. A request whose
  body has arrived is not timed: the search takes what it takes;
- an idle kept-alive connection closed after `keep_alive` seconds (5);
- at most `max_connections` (2048) open at once: the next one is answered 503 and closed
  at once, so a crowd of slow clients costs at most that many file descriptors, never
  all of the process's, and is cleared by the deadline;
- the process's limit of open files raised to its hard limit, and `max_connections`
  lowered (with a line on stderr) if the limit cannot hold it plus the files the index
  itself opens.

Every refusal is a JSON body `{"detail": ...}` like the API's.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

RESERVED_FILES = 512
"""Open files kept for the process itself (the index's files, the model, logs)."""
LINGER = 2.0
"""Seconds a refused connection is kept half-closed, reading what the client still sends."""


@dataclass(frozen=True)
class ConnectionLimits:
    """How many connections, how long a request may take to arrive, how big its head."""

    max_connections: int = 2048
    request_timeout: float = 10.0
    keep_alive: int = 5
    max_header_bytes: int = 16 * 1024

    def check(self) -> None:
        """Refuse limits that would turn every client away."""
        if self.max_connections < 1 or self.request_timeout <= 0 or self.keep_alive < 1:
            raise ValueError(
                "--max-connections must be >= 1, --request-timeout > 0 and keep-alive >= 1"
            )


def fit_open_files(limits: ConnectionLimits) -> ConnectionLimits:
    """`limits` within the open-file limit: the soft limit raised to the hard one, and
    `max_connections` lowered (said on stderr) if that still cannot hold it plus
    `RESERVED_FILES`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limits.max_connections + RESERVED_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < wanted:
        fitted = max(1, soft - RESERVED_FILES)
        print(
            f"trecho: --max-connections {limits.max_connections} lowered to {fitted}: this "
            f"process may open {soft} files (ulimit -n)",
            file=sys.stderr,
        )
        return replace(limits, max_connections=fitted)
    return limits


def answer(status: int, detail: str) -> bytes:
    """A whole HTTP/1.1 answer `{"detail": detail}` that closes the connection."""
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def guarded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with `limits` (the module doc): give it as `http=`."""
    busy = answer(503, f"the server holds {limits.max_connections} connections: retry later")
    slow = answer(408, f"the request did not arrive within {limits.request_timeout:g} s")
    too_big = answer(431, f"request headers over {limits.max_header_bytes} bytes")

    class GuardedProtocol(H11Protocol):
        """h11 with a connection cap, a deadline for each request, a head size cap."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.refused = False  # over the cap: never served
            self.lingering = False  # answered with a refusal, closing
            self.deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= limits.max_connections:
                self.refused = True
                self.transport = transport
                self._close_with(busy)
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.refused:
                return
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.refused or self.lingering:
                return  # what a refused client still sends is read and dropped
            if self.conn.their_state is h11.IDLE and self._head_too_big(data):
                self._close_with(too_big)
                return
            super().data_received(data)
            if not self._awaiting():
                self._disarm()  # the request has arrived, head and body

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self._awaiting():
                self._arm()  # the next request on this connection has its own deadline

        def _head_too_big(self, data: bytes) -> bool:
            """Whether the request head being read (what came before and `data`) is
            over the cap, complete or not (h11's own cap only counts an incomplete one)."""
            before = self.conn.trailing_data[0]
            pending = before + data if before else data
            end = pending.find(b"\r\n\r\n")
            cap = limits.max_header_bytes
            return end > cap or (end < 0 and len(pending) > cap)

        def _awaiting(self) -> bool:
            """Whether a request's head or body is still to arrive."""
            return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

        def _arm(self) -> None:
            self._disarm()
            self.deadline = self.loop.call_later(limits.request_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            self.deadline = None
            if self._awaiting():
                self._close_with(slow)

        def _close_with(self, response: bytes) -> None:
            """Send `response` and close: first our side only, reading and dropping what
            the client still sends for up to `LINGER` seconds, so that its unread bytes
            do not make the system reset the connection before the client has read the
            answer."""
            transport = self.transport
            if transport.is_closing() or self.lingering:
                return
            self.lingering = True
            self._disarm()
            transport.write(response)
            if transport.can_write_eof():
                transport.write_eof()
            self.loop.call_later(LINGER, transport.close)

    return GuardedProtocol


def uvicorn_options(limits: ConnectionLimits) -> dict[str, Any]:
    """The `uvicorn.Config` keyword arguments that apply `limits`."""
    return {
        "http": guarded_protocol(limits),
        "h11_max_incomplete_event_size": limits.max_header_bytes,
        "timeout_keep_alive": limits.keep_alive,
    }
