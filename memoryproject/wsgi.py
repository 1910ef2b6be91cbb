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
import os
from collections.abc import Callable, Iterable
from typing import Any

from cheroot.wsgi import Server
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

__all__ = ["application", "web_server"]

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


def _with_chunked_bodies_buffered(app: WSGIApp) -> WSGIApp:
    """``app`` with a request body sent chunked (``Transfer-Encoding: chunked``, no
    ``Content-Length``) read first and given to it with its length.

    Django reads ``CONTENT_LENGTH`` bytes of a body, and none when it is missing; the server
    marks a chunked body as read to its end (``wsgi.input_terminated``, a WSGI extension that
    Django ignores). At most ``MAX_REQUEST_BYTES`` + 1 bytes are read: a body longer than
    that is given as that long, and Django refuses it (``RequestDataTooBig``; the GraphQL
    view answers HTTP 413, ``PAYLOAD_TOO_LARGE``) without the rest being read.
    """

    def buffered(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("wsgi.input_terminated") and not environ.get("CONTENT_LENGTH"):
            body = environ["wsgi.input"].read(settings.MAX_REQUEST_BYTES + 1)
            environ = {**environ, "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
        return app(environ, start_response)

    return buffered


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
    server = Server((host, port), application, numthreads=settings.WEB_THREADS)
    server.keep_alive_conn_limit = None
    return server
