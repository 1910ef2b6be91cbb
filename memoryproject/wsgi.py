"""WSGI entry point: what ``manage.py serve`` runs (``web_server``), and any WSGI server can.

``manage.py serve`` runs the application in cheroot (CherryPy's WSGI server): a fixed pool of
``WEB_THREADS`` threads, each reading a request from its socket, running Django's handler and
writing the response itself, while one thread waits on the idle keep-alive connections.
Under uvicorn (``memoryproject.asgi``), a2wsgi hands a request's body and each part of its
response between the event loop and the thread that runs Django, one hand-off at a time. A
search at 1M messages took 0.92-0.94x the time this way, a trivial GraphQL request
0.75-0.76x (README, *Benchmarks*).
"""

from __future__ import annotations

import io
import json
import os
import socket
from collections.abc import Callable, Iterable
from typing import Any

from cheroot.errors import MaxSizeExceeded
from cheroot.wsgi import Server
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

__all__ = ["application", "web_server"]

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


def _with_chunked_bodies_buffered(app: WSGIApp) -> WSGIApp:
    """``app`` behind what cheroot leaves to the application.

    - A body sent chunked (``wsgi.input_terminated``, with or without a ``Content-Length``)
      is read whole first and given with its length: Django reads ``CONTENT_LENGTH`` bytes,
      and none when it is missing. A body over ``MAX_REQUEST_BYTES`` gets HTTP 413
      (``PAYLOAD_TOO_LARGE``), and cheroot closes the connection without reading the rest
      (it never drains an unread chunked body, which would otherwise be read as the next
      request). cheroot itself refuses a chunk or a declared length over the limit
      (``max_request_body_size``, set by ``web_server``), so no body is held whole in memory.
    - A ``HEAD`` response is sent without its body (cheroot sends what the app returns).
    """

    def buffered(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("wsgi.input_terminated"):
            limit = settings.MAX_REQUEST_BYTES
            try:
                body = environ["wsgi.input"].read(limit + 1)
            except MaxSizeExceeded:
                return _too_large(start_response)
            if len(body) > limit:
                return _too_large(start_response)
            environ = {**environ, "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
        response = app(environ, start_response)
        if environ.get("REQUEST_METHOD") == "HEAD":
            getattr(response, "close", lambda: None)()
            return []
        return response

    return buffered


def _too_large(start_response: StartResponse) -> list[bytes]:
    from memories.graphql.views import error_body, too_large_message

    content = json.dumps(error_body(too_large_message(), "PAYLOAD_TOO_LARGE")).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(content)))]
    start_response("413 Request Entity Too Large", headers)
    return [content]


application = _with_chunked_bodies_buffered(get_wsgi_application())


def web_server(*, host: str, port: int) -> Server:
    """The server ``manage.py serve`` runs: cheroot on ``host``:``port`` (0: any free port,
    ``bind_addr`` tells which once ``prepare()`` has bound it), ``WEB_THREADS`` threads.

    Idle keep-alive connections wait in cheroot's selector, not in a thread, as many as
    clients keep open (cheroot's default keeps 10 and closes the others after their
    response). A client that opened a request and sends it slowly holds a thread for up to
    ``timeout`` (10 s) per read: behind a reverse proxy that buffers requests (nginx's
    default), it never reaches the server.
    """
    server = Server((host, port), application, numthreads=settings.WEB_THREADS, request_queue_size=socket.SOMAXCONN)
    server.keep_alive_conn_limit = None
    # A declared length over the limit gets 413 before the app runs; a chunk over it raises
    # while it is read. Slack for the wrapper's one byte over the limit.
    server.max_request_body_size = settings.MAX_REQUEST_BYTES + 1024
    return server
