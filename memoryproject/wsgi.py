"""WSGI entry point: ``application``, served by gunicorn (``memoryproject/gunicorn.conf.py``) or any WSGI server."""

import os
from collections.abc import Callable, Iterable
from io import BytesIO
from typing import Any

from django.conf import settings
from django.core.wsgi import get_wsgi_application

__all__ = ["application", "terminated_input"]

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")


def terminated_input(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """Give Django a body sent without ``Content-Length`` (chunked) by a server that de-chunks it.

    Django 5.2 reads only ``CONTENT_LENGTH`` bytes under WSGI, so such a body would look empty. A
    server that de-chunks says so with ``wsgi.input_terminated`` (a de facto PEP 3333 extension;
    gunicorn sets it): the body is read here, at most ``MAX_REQUEST_BYTES`` + 1 bytes, and passed
    on with its length; one over the limit then gets Django's ``RequestDataTooBig`` (HTTP 413).
    Such a body is read before the caller is authenticated, into memory bounded as above.
    """

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not environ.get("CONTENT_LENGTH") and environ.get("wsgi.input_terminated"):
            body = environ["wsgi.input"].read(settings.MAX_REQUEST_BYTES + 1)
            environ["wsgi.input"] = BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return app(environ, start_response)

    return wrapped


application = terminated_input(get_wsgi_application())
