"""A request body read whole before the app sees it, and handed on as if unread: the one
reading that `BodyLimit` (`serve.api`) and `McpBodies` (`serve.mcp_http`) share."""

from __future__ import annotations

from starlette.types import Message, Receive


async def whole_body(receive: Receive, limit: int | None) -> bytearray | None:
    """The request's whole body, read from `receive` (no `limit`: None); read only until
    it grows past `limit` bytes, the rest left unread, when it is longer (the caller
    refuses it: `len(body) > limit`); None when the client left before it came (nothing
    to answer)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client left before the body came
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False) or (limit is not None and len(body) > limit):
            return body


def replaying(body: bytes | bytearray, receive: Receive) -> Receive:
    """A `receive` that gives `body` whole as the first message, then what `receive`
    gives (the disconnect the app may wait for)."""
    whole: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

    async def replay() -> Message:
        return whole.pop() if whole else await receive()

    return replay
