"""JSON answers for requests that fail outside GraphQL's own error handling (every path, GraphQL's too).

- ``DatabaseFaultMiddleware``: a view that raises because the database cannot be reached, or
  because its schema changed under this process, answers HTTP 503 ``DATABASE_UNAVAILABLE`` with
  ``Retry-After``, logged as one line without a traceback (``memories.database``).
- ``server_error`` (``handler500``): anything else uncaught answers HTTP 500 ``INTERNAL_ERROR``, never
  Django's HTML page; Django logs it with its traceback.
- ``bad_request`` (``handler400``): a request Django refuses before any view (a ``Host`` header not
  in ``ALLOWED_HOSTS``, another suspicious request) answers HTTP 400 ``BAD_REQUEST``.

Both bodies have GraphQL's shape: ``{"data": null, "errors": [{"message", "extensions": {"code"}}]}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse

from memories.database import database_reconnect, database_unavailable, first_line, schema_changed

__all__ = [
    "DATABASE_UNAVAILABLE_MESSAGE",
    "DatabaseFaultMiddleware",
    "bad_request",
    "database_unavailable_response",
    "error_body",
    "server_error",
]

logger = logging.getLogger(__name__)

DATABASE_UNAVAILABLE_MESSAGE = "The database is not available right now: retry in a few seconds."
# What a client is told to wait before retrying: about the time the service takes to reconnect.
RETRY_AFTER_SECONDS = 5


def error_body(message: str, code: str) -> dict[str, object]:
    """A GraphQL response body with no data and one error: ``{"data": null, "errors": [...]}``."""
    return {"data": None, "errors": [{"message": message, "extensions": {"code": code}}]}


def database_unavailable_response() -> JsonResponse:
    """HTTP 503 ``DATABASE_UNAVAILABLE``, with ``Retry-After``."""
    return JsonResponse(
        error_body(DATABASE_UNAVAILABLE_MESSAGE, "DATABASE_UNAVAILABLE"),
        status=503,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


class DatabaseFaultMiddleware:
    """Answers a request whose view raised a database fault with HTTP 503 ``DATABASE_UNAVAILABLE``.

    A schema changed under this process (``schema_changed``) also replaces its connections first,
    so the client's retry runs on new ones.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if schema_changed(exception):
            database_reconnect()
        elif not database_unavailable(exception):
            return None
        logger.warning("%s %s: database fault: %s", request.method, request.path, first_line(exception))
        return database_unavailable_response()


def server_error(request: HttpRequest) -> JsonResponse:
    """``handler500``: HTTP 500 ``INTERNAL_ERROR`` as JSON (the error is logged by Django, never shown)."""
    return JsonResponse(error_body("Unexpected error.", "INTERNAL_ERROR"), status=500)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """``handler400``: HTTP 400 ``BAD_REQUEST`` as JSON, e.g. for a ``Host`` not in ``ALLOWED_HOSTS``."""
    message = "Bad request: the Host header is not one this service answers (ALLOWED_HOSTS)."
    if not isinstance(exception, DisallowedHost):
        message = "Bad request."
    return JsonResponse(error_body(message, "BAD_REQUEST"), status=400)
