"""Opening a LanceDB database, with an object store's refusal said as one line: the
setting to look at and the problem, not the store client's Rust error."""

from __future__ import annotations

import os
from typing import Any

import lancedb

from rag_assets.core.errors import ConfigError
from rag_assets.core.lake import store_problem


class StoreError(ConfigError):
    """The object store a database is in refused it: an endpoint, credentials, a bucket."""


def connect(uri: str | os.PathLike[str]) -> Any:
    """`lancedb.connect(uri)`; a store that refuses (a plain-http endpoint without
    AWS_ALLOW_HTTP, a store that does not answer, a missing bucket, refused credentials)
    raises `StoreError`, one line naming the setting."""
    try:
        return lancedb.connect(str(uri))
    except (ValueError, OSError, RuntimeError) as exc:
        if "://" not in str(uri):
            raise
        raise StoreError(store_problem(str(uri), exc)) from exc
