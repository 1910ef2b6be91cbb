"""ASGI entry point: ``application``, what gunicorn's ``asgi`` worker serves (``memoryproject/gunicorn.conf.py``).

Django's ASGI handler runs each request's views in a thread of its own, and ``BufferedRequests`` in
front of it makes sure a client cannot hold such a thread, or the database connection it takes,
by being slow:

- A request's body is read whole on the event loop (costing no thread) before Django sees the
  request, within ``REQUEST_BODY_TIMEOUT_SECONDS``: a body that has not arrived by then is
  answered HTTP 408 ``REQUEST_TIMEOUT``, and one over ``MAX_REQUEST_BYTES`` HTTP 413
  ``PAYLOAD_TOO_LARGE`` once it has come (chunked or not), without holding more of it.
- At most ``WEB_THREADS`` requests are in Django at once (each holds a pooled connection, of
  which there are as many); the others wait on the event loop, in order. ``/healthz`` and
  ``/readyz`` never wait behind them: a busy process still tells a load balancer it is alive.

Reference: https://asgi.readthedocs.io/en/latest/specs/www.html
"""

from __future__ import annotations

import asyncio
import json
import os

from django.conf import settings
from django.core.asgi import get_asgi_application

from memories.asgi_bodies import (
    App,
    BodyTooLarge,
    Receive,
    Scope,
    Send,
    declared_length,
    drain_body,
    read_body,
    replayed,
)

__all__ = ["BufferedRequests", "application"]

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

# Paths answered without waiting for a free slot: the health checks.
UNQUEUED_PATHS = frozenset({"/healthz", "/readyz"})


class BufferedRequests:
    """ASGI middleware: bodies read whole within a deadline and a size limit, then at most
    ``concurrency`` requests at once in ``app`` (see the module's docstring).

    Args:
        app: the ASGI application behind it (Django's).
        body_timeout: seconds a client has to send its whole body.
        max_bytes: the largest body taken.
        concurrency: requests in ``app`` at once.
    """

    def __init__(self, app: App, *, body_timeout: float, max_bytes: int, concurrency: int) -> None:
        self.app, self.body_timeout, self.max_bytes, self.concurrency = app, body_timeout, max_bytes, concurrency
        self._slots: asyncio.Semaphore | None = None  # made in the serving event loop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body, too_large = None, declared_length(scope) > self.max_bytes
        try:
            async with asyncio.timeout(self.body_timeout):
                if not too_large:
                    try:
                        body = await read_body(receive, max_bytes=self.max_bytes)
                    except BodyTooLarge:
                        too_large = True
                if too_large:  # read to its end (and dropped), so the client is there to read the answer
                    await drain_body(receive)
        except TimeoutError:
            if not too_large:
                await _refuse(send, 408, "REQUEST_TIMEOUT", _timeout_message(self.body_timeout))
                return
        if too_large:
            from memories.graphql.views import too_large_message

            await _refuse(send, 413, "PAYLOAD_TOO_LARGE", too_large_message())
            return
        if body is None:  # the client went away
            return
        replay = replayed(body, receive)
        if scope["path"] in UNQUEUED_PATHS:
            await self.app(scope, replay, send)
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.concurrency)
        async with self._slots:
            await self.app(scope, replay, send)


def _timeout_message(seconds: float) -> str:
    return (
        f"The request body did not arrive within {seconds:g} s (REQUEST_BODY_TIMEOUT_SECONDS): send it whole, at once."
    )


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    """Answer a JSON error in GraphQL's shape, and close the connection (the body was not read whole)."""
    from memories.http import error_body

    payload = json.dumps(error_body(message, code)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})


application = BufferedRequests(
    get_asgi_application(),
    body_timeout=settings.REQUEST_BODY_TIMEOUT_SECONDS,
    max_bytes=settings.MAX_REQUEST_BYTES,
    concurrency=settings.WEB_THREADS,
)
