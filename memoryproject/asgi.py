"""ASGI entry point, for an ASGI server run by hand (``uvicorn memoryproject.asgi:application``).

``manage.py serve`` serves the WSGI application in cheroot instead (``memoryproject.wsgi``):
a search at 1M messages took 0.92-0.94x the time there, with no event loop between the
socket and the thread that runs the request.

GraphQL POSTs (what chatbots send: every search and ``addMessages``) run through Django's
WSGI handler behind a2wsgi, the adapter uvicorn itself recommends for WSGI apps: the whole
request runs in one thread of a fixed pool of ``WEB_THREADS``, one hop from the event loop
per request. Every view here is synchronous (the ORM, the embedding model), and Django's own
ASGI handler runs such a view with each of the nine middleware hopping between the event
loop and a thread for its request and response halves, fifteen hops per request, in a new
thread per request. A trivial GraphQL request took a median 6.2-7.7 ms through Django's ASGI
handler and 3.7-4.0 ms this way, in the same process; a search at 1M messages 8-15 ms less
over HTTP (README, *Benchmarks*).

The body is read on the event loop before the request gets a thread, so a client that sends
it slowly holds no thread, and a chunked body (no ``Content-Length``, which WSGI needs)
arrives whole; one over ``MAX_REQUEST_BYTES`` (declared or as it arrives) is refused with
HTTP 413 before it is read whole. Static files go to WhiteNoise in the same thread pool: it
serves files as WSGI iterators, which Django's ASGI handler would read whole into memory
(with a warning for each file). Everything else (the admin, the GraphiQL page) goes through
Django's ASGI handler, which streams responses without holding a thread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.asgi import get_asgi_application

from memoryproject.wsgi import application as wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

__all__ = ["application"]

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_django_asgi = get_asgi_application()
_wsgi = WSGIMiddleware(wsgi_application, workers=settings.WEB_THREADS)
_GRAPHQL_PATH = "/graphql/"
_STATIC_PATH = "/" + settings.STATIC_URL.lstrip("/")


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    """Route GraphQL POSTs to the thread pool, with their body read first, and static files to
    WhiteNoise there; anything else to Django's ASGI handler."""
    if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and scope["path"].startswith(_STATIC_PATH):
        await _wsgi(scope, receive, send)
        return
    if not (scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == _GRAPHQL_PATH):
        await _django_asgi(scope, receive, send)
        return
    limit = settings.MAX_REQUEST_BYTES
    declared = next((value for name, value in scope["headers"] if name.lower() == b"content-length"), b"0")
    if declared.isdigit() and int(declared) > limit:
        await _too_large(send)
        return
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:  # a chunked body (no Content-Length) that grew too large
            await _too_large(send)
            return
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    headers = [(name, value) for name, value in scope["headers"] if name.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    replayed = False

    async def receive_buffered() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    await _wsgi({**scope, "headers": headers}, receive_buffered, send)


async def _too_large(send: Send) -> None:
    """Refuse a body over ``MAX_REQUEST_BYTES`` with HTTP 413, without reading the rest of it."""
    from memories.graphql.views import error_body, too_large_message

    content = json.dumps(error_body(too_large_message(), "PAYLOAD_TOO_LARGE")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": content})
