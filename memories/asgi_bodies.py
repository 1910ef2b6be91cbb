"""Request bodies read whole by ASGI middleware before the application sees them, then given to it again.

Reference: https://asgi.readthedocs.io/en/latest/specs/www.html (``http.request``, ``http.disconnect``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "App",
    "BodyTooLarge",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "declared_length",
    "drain_body",
    "read_body",
    "replayed",
]

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(Exception):
    """More than the limit came; ``received`` holds what was read of it."""

    def __init__(self, received: bytes) -> None:
        super().__init__(f"{len(received)} bytes and more")
        self.received = received


def declared_length(scope: Scope) -> int:
    """The request's ``Content-Length`` (0 when absent or unreadable: the body is counted as it comes)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0


async def read_body(receive: Receive, *, max_bytes: int) -> bytes | None:
    """The whole body, or ``None`` when the client disconnected first.

    Raises:
        BodyTooLarge: more than ``max_bytes`` came (chunked or not); nothing more is read.
    """
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(b"".join(chunks))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def drain_body(receive: Receive) -> None:
    """Read the rest of the body and drop it (until its end, or the client's disconnect)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return


def replayed(body: bytes, receive: Receive, *, more: bool = False) -> Receive:
    """A ``receive`` that gives the application ``body`` first (``more``: the rest still to come from
    ``receive``), then whatever ``receive`` gives (the rest, or the client's disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return replay
