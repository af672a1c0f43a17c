"""What every stage asset shares: turning input problems into a clear, per-version failure."""

from collections.abc import Callable
from typing import TypeVar

from dagster import Failure

from rag_assets.core.errors import UserError

T = TypeVar("T")


def failing_clearly(key: str, action: Callable[[], T]) -> T:
    """Run a core call; a user error (bad input, bad setting) fails only this version,
    with the file or setting and the reason."""
    try:
        return action()
    except UserError as exc:
        raise Failure(
            description=f"{key}: {exc}",
            metadata={"partition": key, "reason": str(exc)},
            allow_retries=False,
        ) from exc
