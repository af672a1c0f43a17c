"""Starting `trecho serve` and `trecho mcp`: the checks before listening, and the engine
built from the settings with its model loaded (and one query run), so the first request
is not slow."""

from __future__ import annotations

import dataclasses

from rag_assets.core.lake.layout import Lake, LakeError
from rag_assets.core.request import Limits
from rag_assets.serve import TOKEN_ENV, is_loopback, query_threads
from rag_assets.serve.engine import Engine
from rag_assets.settings import Settings


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to listen on an address other machines reach (`--host`) without a token."""
    if not is_loopback(host) and token is None:
        raise LakeError(
            f"--host {host} accepts connections from other machines: set {TOKEN_ENV} "
            "(clients then send Authorization: Bearer <token>)"
        )


def start_engine(
    settings: Settings,
    lake: Lake,
    db_uri: str,
    limits: Limits,
    *,
    model: str | None = None,
    query_prefix: str | None = None,
    passage_prefix: str | None = None,
    threads: int = 1,
    query_cache: int = 1024,
) -> Engine:
    """The engine of a server: the configured model (or `model` with its prompts, by
    `Settings.embedder`), `threads` embedding one query, the vectors of the last
    `query_cache` queries remembered, the index options of the settings; its model
    loaded and one query run."""
    if min(limits.max_k, limits.max_query_chars, limits.max_body_bytes, threads) < 1:
        raise LakeError("--max-k, --max-query-chars, --max-body and --threads must be >= 1")
    if query_cache < 0:
        raise LakeError("--query-cache must be >= 0")
    query_threads(threads)
    configured = settings.embedder(model, query_prefix, passage_prefix, server=True)
    embedder = dataclasses.replace(configured, threads=threads)
    engine = Engine(lake, db_uri, embedder, limits, query_cache, settings.index_options())
    engine.warm_up()
    return engine
