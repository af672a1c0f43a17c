"""Starting `trecho serve` and `trecho mcp`: the checks before listening, and the engine
built on a background thread (LanceDB opened, the model loaded, one query run), so the
server answers `initialize` and `/health` at once while it loads, and the first search
is not slow. A search or listing that arrives before the load is done waits for it; if
the load fails, each one is refused with the reason (503), and so is `/health`."""

from __future__ import annotations

import dataclasses
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from rag_assets.core.errors import UserError
from rag_assets.core.hosts import is_loopback_host
from rag_assets.core.lake import Lake, LakeError
from rag_assets.core.request import Limits, RequestError, SearchRequest
from rag_assets.serve.exposure import TOKEN_ENV, query_threads
from rag_assets.settings import Settings

if TYPE_CHECKING:
    from rag_assets.core.embedding import Embedder
    from rag_assets.serve.engine import Engine


class Answers(Protocol):
    """What the JSON API and the MCP server answer from: an `Engine`, or a
    `StartingEngine` that builds one in the background."""

    limits: Limits

    def search(self, request: SearchRequest) -> dict[str, Any]: ...

    def documents(self) -> dict[str, Any]: ...

    def health(self) -> dict[str, Any]: ...


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to listen on an address other machines reach (`--host`) without a token."""
    if not is_loopback_host(host) and token is None:
        raise LakeError(
            f"--host {host} accepts connections from other machines: set {TOKEN_ENV} "
            "(clients then send Authorization: Bearer <token>)"
        )


class StartingEngine:
    """A server's `Engine`, built by `load` on a background thread from `start()` on.

    `health` answers at once (`status: loading` until the engine is built); `search` and
    `documents` wait for it. A failed load is kept: every later call raises it as a
    `RequestError` (503) saying why, so a client is told, never left waiting."""

    def __init__(
        self,
        load: Callable[[], Engine],
        limits: Limits,
        lake: Lake,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        """`say` gets one line when the load is done (the table, its rows, the seconds
        it took) or failed (why)."""
        self.limits = limits
        self.lake = lake
        self._load = load
        self._say = say
        self._done = threading.Event()
        self._engine: Engine | None = None
        self._error: str | None = None
        self._since = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="trecho-load", daemon=True)
        self.took: float | None = None
        """Seconds the load took, once done."""

    def start(self) -> StartingEngine:
        """Begin loading in the background (once); returns self."""
        if not self._thread.is_alive() and not self._done.is_set():
            self._since = time.monotonic()
            self._thread.start()
        return self

    def _run(self) -> None:
        try:
            engine = self._load()
            index = engine.index()
            rows = index.index_stats().rows if index.exists() else 0
            self.took = time.monotonic() - self._since
            self._engine = engine
            self._say(
                f"{self.lake.root}: {index.table_name} ({rows} rows) ready, "
                f"loaded in {self.took:.1f} s"
            )
        except UserError as exc:  # a wrong setting or lake: its one line
            self._error = " ".join(str(exc).split())
        except Exception as exc:  # a bug: its traceback on stderr, the line to clients
            traceback.print_exc()
            self._error = f"{type(exc).__name__}: {exc}"
        finally:
            if self._error is not None:
                self._say(f"the index could not be loaded: {self._error}")
            self._done.set()

    @property
    def error(self) -> str | None:
        """Why the load failed (None while loading or once loaded)."""
        return self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the load is done (or `timeout` seconds); whether it is."""
        return self._done.wait(timeout)

    def engine(self) -> Engine:
        """The engine, once loaded (waits for it); RequestError (503) if the load failed."""
        self._done.wait()
        if self._engine is None:
            raise RequestError(f"the index could not be loaded: {self._error}", status=503)
        return self._engine

    def search(self, request: SearchRequest) -> dict[str, Any]:
        """`Engine.search`, once loaded."""
        return self.engine().search(request)

    def documents(self) -> dict[str, Any]:
        """`Engine.documents`, once loaded."""
        return self.engine().documents()

    def health(self) -> dict[str, Any]:
        """`Engine.health` once loaded; before, at once: `status: loading`, the lake and
        the seconds since the load began."""
        if not self._done.is_set():
            return {
                "status": "loading",
                "lake": str(self.lake.root),
                "loading_for_s": round(time.monotonic() - self._since, 1),
            }
        return self.engine().health()


def check_options(limits: Limits, threads: int, query_cache: int) -> None:
    """Refuse limits and options no server can run with (before it listens)."""
    if min(limits.max_k, limits.max_query_chars, limits.max_body_bytes, threads) < 1:
        raise LakeError("--max-k, --max-query-chars, --max-body and --threads must be >= 1")
    if query_cache < 0:
        raise LakeError("--query-cache must be >= 0")


def build_engine(
    settings: Settings,
    lake: Lake,
    db_uri: str,
    limits: Limits,
    embedder: Embedder,
    threads: int = 1,
    query_cache: int = 1024,
) -> Engine:
    """The engine of a server: `embedder` with `threads` embedding one query, the
    vectors of the last `query_cache` queries remembered, the index options of the
    settings; its model loaded and one query run (the slow part of a start)."""
    from rag_assets.serve.engine import Engine

    query_threads(threads)
    embedder = dataclasses.replace(embedder, threads=threads)
    engine = Engine(lake, db_uri, embedder, limits, query_cache, settings.index_options())
    engine.warm_up()
    return engine


def start_engine(
    settings: Settings,
    lake: Lake,
    db_uri: str,
    limits: Limits,
    configured: Embedder,
    *,
    threads: int = 1,
    query_cache: int = 1024,
    say: Callable[[str], None] = lambda line: None,
) -> StartingEngine:
    """The engine of a server, checked now (a wrong option fails here, before the server
    listens), to load in the background once started (`run_http` and `run_stdio` start it
    as they begin to listen), on `configured` (a server's, `Settings.embedder(...,
    server=True)`: the caller checked the model when it built it). `say`: as
    `StartingEngine`'s."""
    check_options(limits, threads, query_cache)

    def load() -> Engine:
        return build_engine(settings, lake, db_uri, limits, configured, threads, query_cache)

    return StartingEngine(load, limits, lake, say)
