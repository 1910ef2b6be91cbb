"""The GraphQL endpoint: authenticates the caller once and sets their ``Scope``."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware, get_token
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from strawberry.django.views import GraphQLView

from memories.graphql.permissions import Scope
from memories.search import query_embedding_started_early
from memories.services.api_keys import api_key_authenticate, api_key_recently_authenticated

__all__ = ["MemoryGraphQLView"]

_UNAUTHENTICATED = (
    "Authentication required: send `Authorization: Bearer <API key>` "
    "(create one with `manage.py create_api_key`), or log into the admin to use GraphiQL."
)


def error_body(message: str, code: str) -> dict[str, object]:
    """A GraphQL response body with no data and one error: ``{"data": null, "errors": [...]}``."""
    return {"data": None, "errors": [{"message": message, "extensions": {"code": code}}]}


def too_large_message() -> str:
    """The message of a request refused for its body's size (HTTP 413, ``PAYLOAD_TOO_LARGE``)."""
    return (
        f"The request body is larger than {settings.MAX_REQUEST_BYTES} bytes (MAX_REQUEST_BYTES): "
        "send less per call, e.g. messages in several addMessages calls."
    )


def _error(message: str, code: str, status: int) -> JsonResponse:
    return JsonResponse(error_body(message, code), status=status)


@method_decorator(csrf_exempt, name="dispatch")
class MemoryGraphQLView(GraphQLView):
    """Strawberry's view behind authentication.

    - ``Authorization: Bearer <key>``: an active API key; its scope is the key's end users.
    - A staff member's admin session (GraphiQL in the browser): all users, CSRF checked.
    - Anything else gets HTTP 401 and no data. The GraphiQL page itself (a GET without a
      query) is served to everyone, with the CSRF cookie its requests send back; API
      responses set no cookie.
    - A body over ``MAX_REQUEST_BYTES`` gets HTTP 413 (``PAYLOAD_TOO_LARGE``).

    A ``search`` sent the documented way (its input as the ``$input`` variable) with a key
    that authenticated in this process within the last minute has its query embedded while
    the key is checked and the document parsed (``query_embedding_started_early``; about 2 ms
    less per search over HTTP, README, *Benchmarks*). A request with any other key starts
    nothing before it is authenticated: a caller without a key that was good within the last
    minute cannot make the service run its model. A key revoked in another process within that
    minute is refused all the same; its first refusal here stops the early starts.
    """

    def dispatch(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method == "GET" and "query" not in request.GET:
            get_token(request)  # the GraphiQL page sets the CSRF cookie its requests send back
            return super().dispatch(request, *args, **kwargs)
        scheme, _, raw_key = request.headers.get("Authorization", "").partition(" ")
        raw_key = raw_key.strip() if scheme.lower() == "bearer" else ""
        # A search by a key that authenticated lately: its query is embedded while the key is
        # checked and the document parsed. Any other request starts nothing before it is checked.
        try:
            early_query = (
                _search_query(request) if raw_key and api_key_recently_authenticated(raw_key=raw_key) else None
            )
            with query_embedding_started_early(query=early_query):
                return self._authenticated_dispatch(request, raw_key, *args, **kwargs)
        except RequestDataTooBig:  # the body is read, by _search_query or Strawberry, past MAX_REQUEST_BYTES
            return _error(too_large_message(), "PAYLOAD_TOO_LARGE", 413)

    def decode_json(self, data: str | bytes) -> object:
        """Strawberry's JSON decoding; a body nested deeper than Python's recursion limit gets
        Strawberry's 400 for unparsable JSON rather than a server error."""
        try:
            return json.loads(data)
        except RecursionError as exc:
            raise json.JSONDecodeError("Nested too deeply", data if isinstance(data, str) else "", 0) from exc

    def _authenticated_dispatch(
        self, request: HttpRequest, raw_key: str, *args: object, **kwargs: object
    ) -> HttpResponse:
        if request.headers.get("Authorization", ""):
            key = api_key_authenticate(raw_key=raw_key) if raw_key else None
            if key is None:
                return _error("Invalid or revoked API key.", "UNAUTHENTICATED", 401)
            request.memory_scope = Scope(
                all_users=key.all_users,
                user_external_ids=frozenset(key.user_external_ids),
            )
        elif request.user.is_authenticated and request.user.is_staff:
            if CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {}) is not None:
                return _error("CSRF check failed: reload GraphiQL.", "FORBIDDEN", 403)
            request.memory_scope = Scope(all_users=True)
        else:
            return _error(_UNAUTHENTICATED, "UNAUTHENTICATED", 401)
        return super().dispatch(request, *args, **kwargs)


def _search_query(request: HttpRequest) -> str | None:
    """``variables.input.query`` of a JSON GraphQL POST whose document calls ``search``, else ``None``.

    The documented way to call ``search`` (README, *GraphQL API*). A guess, only used to start
    the query's embedding early: the search itself takes it only if its query is this text.
    """
    body = request.body if request.method == "POST" and request.content_type == "application/json" else b""
    if b"search" not in body or b'"input"' not in body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # Strawberry answers them (decode_json) after authentication
        return None
    document = data.get("query") if isinstance(data, dict) else None
    variables = data.get("variables") if isinstance(data, dict) else None
    search_input = variables.get("input") if isinstance(variables, dict) else None
    query = search_input.get("query") if isinstance(search_input, dict) else None
    return query if isinstance(document, str) and "search" in document and isinstance(query, str) else None
