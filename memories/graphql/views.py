"""The GraphQL endpoint: authenticates the caller once, sets their ``Scope``, and answers every
request with JSON, a client's mistake with a 4xx and a message saying what to fix, a database it
cannot reach with a 503."""

from __future__ import annotations

import functools
import json
import logging

from cross_web import HTTPException
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware, get_token
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from graphql import ExecutionResult, GraphQLError, OperationDefinitionNode, OperationType, parse
from strawberry.django.views import GraphQLView
from strawberry.http import GraphQLRequestData

from memories.database import database_reconnect
from memories.graphql.errors import SCHEMA_CHANGED
from memories.graphql.permissions import Scope, bearer_scope
from memories.http import RETRY_AFTER_SECONDS, error_body
from memories.services.user_tokens import TOKEN_PREFIX

__all__ = ["MemoryGraphQLView", "too_large_message"]

logger = logging.getLogger(__name__)

_UNAUTHENTICATED = (
    "Authentication required: send `Authorization: Bearer <API key>` "
    "(create one with `manage.py create_api_key`), or log into the admin to use GraphiQL."
)
_INVALID_TOKEN = "Invalid, expired or revoked user token: ask your backend for a new one (createUserToken)."
_NOT_AN_OBJECT = 'The request body must be a JSON object: {"query": "...", "variables": {...}, "operationName": "..."}.'


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

    - ``Authorization: Bearer <key>``: an active API key; its scope is the key's end users. Or a
      user token a backend minted for a browser (``createUserToken``): its one end user.
    - A staff member's admin session (GraphiQL in the browser): all users, CSRF checked.
    - Anything else gets HTTP 401 and no data. The GraphiQL page itself (a GET without a
      query) is served to everyone, with the CSRF cookie its requests send back; API
      responses set no cookie.
    - A body over ``MAX_REQUEST_BYTES`` gets HTTP 413 (``PAYLOAD_TOO_LARGE``), whether it
      comes with a ``Content-Length`` or chunked (``memoryproject.wsgi.terminated_input``).
    - A body that is not UTF-8, not JSON, or not a JSON object, and a document with several
      operations but no ``operationName``, get HTTP 400 (``BAD_REQUEST``) with a JSON body.
    - A database that cannot be reached gets HTTP 503 (``DATABASE_UNAVAILABLE``) when nothing
      could be answered; a query that failed on a schema changed under this process (a restore,
      a migration) runs once more on new connections (``memories.database``).
    """

    def dispatch(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method == "GET" and "query" not in request.GET:
            get_token(request)  # the GraphiQL page sets the CSRF cookie its requests send back
            return super().dispatch(request, *args, **kwargs)
        try:
            return self._authenticated_dispatch(request)
        except RequestDataTooBig:
            return _error(too_large_message(), "PAYLOAD_TOO_LARGE", 413)
        except HTTPException as exc:  # Strawberry's refusal of the request itself
            logger.info("GraphQL request refused (HTTP %s): %s", exc.status_code, exc.reason)
            return _error(exc.reason, "BAD_REQUEST", exc.status_code)

    def decode_json(self, data: str | bytes) -> object:
        """The JSON body; anything Python's decoder refuses is Strawberry's HTTP 400, with a reason.

        Raises:
            HTTPException: 400 for bytes that are not UTF-8, JSON nested deeper than Python's
                recursion limit, or an integer over Python's 4,300-digit limit.
        """
        try:
            return json.loads(data)
        except UnicodeDecodeError as exc:
            raise HTTPException(400, "The request body is not UTF-8 text.") from exc
        except RecursionError as exc:
            raise HTTPException(400, "The request body's JSON is nested too deeply.") from exc
        except json.JSONDecodeError:
            raise  # Strawberry's own 400
        except ValueError as exc:  # an integer over sys.get_int_max_str_digits()
            raise HTTPException(400, f"The request body's JSON holds a number Python cannot read: {exc}") from exc

    def parse_http_body(self, request) -> GraphQLRequestData | list[GraphQLRequestData]:
        """Strawberry's parsing, refusing bodies it would crash on and ambiguous documents.

        Raises:
            HTTPException: 400 for a body that is not UTF-8, a JSON body that is not an object
                (``"x"``, ``5``, ``null``, ``true``), and a document with several operations and
                no ``operationName`` (GraphQL over HTTP: the server cannot tell which one to run).
        """
        if request.method == "POST" and "application/json" in (request.content_type or ""):
            try:
                body = request.body  # Strawberry's request adapter decodes it as UTF-8
            except UnicodeDecodeError as exc:
                raise HTTPException(400, "The request body is not UTF-8 text.") from exc
            data = self.parse_json(body)
            if not isinstance(data, dict | list):
                raise HTTPException(400, _NOT_AN_OBJECT)
            if isinstance(data, list) and not all(isinstance(item, dict) for item in data):
                raise HTTPException(400, _NOT_AN_OBJECT)
        parsed = super().parse_http_body(request)
        for item in parsed if isinstance(parsed, list) else [parsed]:
            if item.operation_name is None and isinstance(item.query, str) and len(_operations(item.query)) > 1:
                raise HTTPException(
                    400, "The document holds several operations: send operationName to say which one to run."
                )
        return parsed

    def execute_single(
        self,
        request: HttpRequest,
        request_adapter: object,
        sub_response: HttpResponse,
        context: object,
        root_value: object,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """Strawberry's execution of one operation, again on new connections after a schema change.

        A schema changed under this process fails a connection's prepared statements and typed
        parameters once (``StableErrors`` marks the request): its connections are replaced and a
        query, which writes nothing, runs again; a mutation is not run twice (its client retries).
        """
        run = functools.partial(
            super().execute_single, request, request_adapter, sub_response, context, root_value, request_data
        )
        result = run()
        if getattr(request, SCHEMA_CHANGED, False):
            setattr(request, SCHEMA_CHANGED, False)
            database_reconnect()
            if _operation_type(request_data.query, request_data.operation_name) is OperationType.QUERY:
                result = run()
        if result.data is None and any(_code(error) == "DATABASE_UNAVAILABLE" for error in result.errors or ()):
            sub_response.status_code = 503
            sub_response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return result

    def _authenticated_dispatch(self, request: HttpRequest) -> HttpResponse:
        if request.headers.get("Authorization", ""):
            scheme, _, raw_key = request.headers["Authorization"].partition(" ")
            raw_key = raw_key.strip() if scheme.lower() == "bearer" else ""
            scope = bearer_scope(raw_key)
            if scope is None:
                if raw_key.startswith(TOKEN_PREFIX):
                    return _error(_INVALID_TOKEN, "UNAUTHENTICATED", 401)
                return _error("Invalid or revoked API key.", "UNAUTHENTICATED", 401)
            request.memory_scope = scope
        elif request.user.is_authenticated and request.user.is_staff:
            if CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {}) is not None:
                return _error("CSRF check failed: reload GraphiQL.", "FORBIDDEN", 403)
            request.memory_scope = Scope(all_users=True, may_curate=True)
        else:
            return _error(_UNAUTHENTICATED, "UNAUTHENTICATED", 401)
        return self.run(request=request)


@functools.lru_cache(maxsize=256)
def _operations(query: str) -> tuple[tuple[str | None, OperationType], ...]:
    """The document's operations as ``(name, type)`` (none when it does not parse: Strawberry reports that)."""
    try:
        document = parse(query, no_location=True, max_tokens=settings.MAX_QUERY_TOKENS)
    except (GraphQLError, RecursionError):
        return ()
    return tuple(
        (d.name.value if d.name else None, d.operation)
        for d in document.definitions
        if isinstance(d, OperationDefinitionNode)
    )


def _operation_type(query: str | None, operation_name: str | None) -> OperationType | None:
    """The type of the operation a request runs (``None`` when the document does not say)."""
    operations = _operations(query) if isinstance(query, str) else ()
    chosen = [kind for name, kind in operations if operation_name is None or name == operation_name]
    return chosen[0] if len(chosen) == 1 else None


def _code(error: GraphQLError) -> str | None:
    return (error.extensions or {}).get("code")
