"""JSON-RPC request ids the MCP server answers: a message whose ``id`` is not a string or a number gets an
error, rather than the SDK taking it for a notification (HTTP 202, nothing said).

JSON-RPC 2.0 (https://www.jsonrpc.org/specification#request_object) allows a string, a number or
null; MCP (https://modelcontextprotocol.io/specification/2025-06-18/basic#requests) a string or an
integer. A POST to the MCP path whose message (or a message of whose batch) has another ``id``
(an object, a list, a boolean) is answered HTTP 400 with the JSON-RPC error -32600 "Invalid
Request" and ``id`` null, before the SDK sees it.
"""

from __future__ import annotations

import json

from memories.asgi_bodies import App, BodyTooLarge, Receive, Scope, Send, read_body, replayed

__all__ = ["RequestIds", "invalid_id"]

INVALID_REQUEST = -32600


def invalid_id(payload: object) -> bool:
    """Whether a JSON-RPC message (or a batch of them) has an ``id`` that is neither a string nor a number."""
    messages = payload if isinstance(payload, list) else [payload]
    return any(
        isinstance(m, dict) and "id" in m and (isinstance(m["id"], bool) or not isinstance(m["id"], str | int | float))
        for m in messages
    )


class RequestIds:
    """ASGI middleware of the MCP app: refuses messages with an invalid ``id`` (see the module's docstring).

    Args:
        app: the MCP app.
        path: the MCP endpoint's path.
        max_bytes: bodies larger than this are passed on unread (the app refuses them).
    """

    def __init__(self, app: App, *, path: str, max_bytes: int) -> None:
        self.app, self.path, self.max_bytes = app, path, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(receive, max_bytes=self.max_bytes)
        except BodyTooLarge as too_large:
            await self.app(scope, replayed(too_large.received, receive, more=True), send)
            return
        if body is None:
            return
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            payload = None  # the SDK answers a parse error
        if not invalid_id(payload):
            await self.app(scope, replayed(body, receive), send)
            return
        error = {"code": INVALID_REQUEST, "message": "Invalid Request: id must be a string or a number."}
        answer = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": answer})
