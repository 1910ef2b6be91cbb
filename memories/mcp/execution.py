"""Run a tool's GraphQL operation in-process, as the GraphQL view runs it, and turn the outcome into
an MCP tool result.

The request carries the caller's ``Scope`` in ``memory_scope``, where the view puts it after
authenticating the key, so the schema's scope checks, its error codes (``StableErrors``) and the
audit history's actor apply unchanged. Tools run in the SDK's worker threads: each operation
opens and releases its database connection as a Django request does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db import close_old_connections
from django.http import HttpRequest
from graphql import ExecutionResult
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError
from simple_history.models import HistoricalRecords
from strawberry.django.context import StrawberryDjangoContext
from strawberry.django.views import TemporalHttpResponse

from memories.graphql.permissions import Scope
from memories.graphql.schema import schema
from memories.maintenance import MAINTENANCE_MESSAGE, maintenance_guard

__all__ = ["arguments_refused", "error_result", "execute", "run_operation", "tool_result"]

_UNAUTHENTICATED = "Invalid or revoked API key (create one with `manage.py create_api_key`)."


def run_operation(
    document: str, variables: dict[str, Any], field: str, *, caller: Callable[[], Scope | None]
) -> CallToolResult:
    """Authenticate the caller, run the operation, and answer with ``field``'s data or a tool error.

    One request's worth of work on this thread's database connection, opened and released as
    Django does around a request.

    While maintenance is on (``memories.maintenance``) it answers ``MAINTENANCE`` without touching a table.

    Args:
        caller: the caller's scope (``None``: no valid API key, answered with ``UNAUTHENTICATED``).
    """
    close_old_connections()  # Django's request_started
    try:
        with maintenance_guard() as allowed:  # as the web process's MaintenanceMiddleware
            if not allowed:
                return error_result([{"code": "MAINTENANCE", "message": MAINTENANCE_MESSAGE}])
            scope = caller()
            if scope is None:
                return error_result([{"code": "UNAUTHENTICATED", "message": _UNAUTHENTICATED}])
            return tool_result(execute(document, variables, scope=scope), field)
    finally:
        close_old_connections()  # request_finished: the connection goes back to the pool, or is closed


def execute(document: str, variables: dict[str, Any], *, scope: Scope) -> ExecutionResult:
    """Execute ``document`` with ``variables`` as a caller with ``scope`` would over ``POST /graphql/``.

    Returns:
        GraphQL's result: ``data`` and ``errors``, each error with ``extensions.code``.
    """
    request = HttpRequest()
    request.method = "POST"
    request.memory_scope = scope
    request.user = AnonymousUser()
    context = StrawberryDjangoContext(request=request, response=TemporalHttpResponse())
    HistoricalRecords.context.request = request  # what HistoryRequestMiddleware sets: the history's actor
    try:
        return schema.execute_sync(document, variable_values=variables, context_value=context)
    finally:
        del HistoricalRecords.context.request


def tool_result(result: ExecutionResult, field: str) -> CallToolResult:
    """The tool's answer: ``field``'s data, or a tool error carrying the API's codes.

    - GraphQL errors (``FORBIDDEN``, ``BAD_USER_INPUT``, ``REEMBEDDING_NEEDED``,
      ``MODEL_BACKEND_*``, ...): one error per GraphQL error, with ``extensions.code``; data the
      operation still returned (``addMessages`` stores its messages when its context fails) is kept.
    - ``OperationInfo`` (input a mutation, ``search`` or ``context`` refused): one error per
      message, its code being the message's ``code`` or else its ``kind`` (``VALIDATION``, ``ERROR``,
      ``PERMISSION``), with the ``field`` to fix.

    The structured content is the data (``{"errors": [...], "data": ...}`` for an error); the text
    content is the same as JSON, for clients that read text only.
    """
    data = (result.data or {}).get(field)
    refused = isinstance(data, dict) and data.get("__typename") == "OperationInfo"
    if isinstance(data, dict) and not refused:
        data = {k: v for k, v in data.items() if k != "__typename"}
    if result.errors:
        errors = [
            {"code": (error.extensions or {}).get("code", "INTERNAL_ERROR"), "message": error.message}
            for error in result.errors
        ]
        return error_result(errors, data=data)
    if refused:
        errors = [
            {"code": m["code"] or m["kind"], "message": m["message"], "field": m["field"]} for m in data["messages"]
        ]
        return error_result(errors)
    return CallToolResult(content=[TextContent(type="text", text=_json(data))], structured_content=data)


def error_result(errors: list[dict[str, Any]], *, data: Any = None) -> CallToolResult:
    """A tool error (``isError``): ``errors`` as ``{"code", "message", "field"?}`` and any ``data``.

    The text names each code first (``FORBIDDEN: This API key may not act on user 'bob'.``), then
    the data as JSON, if any.
    """
    lines = [f"{e['code']}: {e['message']}" + (f" (field {e['field']})" if e.get("field") else "") for e in errors]
    structured: dict[str, Any] = {"errors": errors}
    if data is not None:
        structured["data"] = data
        lines.append(_json(data))
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(lines))], structured_content=structured, is_error=True
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# What an argument must be, by pydantic's error type: the words of the API's own messages.
_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def arguments_refused(error: ValidationError) -> CallToolResult:
    """A tool error for arguments that do not fit the tool's input schema, one ``BAD_USER_INPUT`` per
    argument (the code GraphQL gives a variable of the wrong type), each naming its ``field``
    (``messages.0.content``) and saying what it must be, as the API's messages do; no pydantic text or URL."""
    errors = []
    for problem in error.errors(include_url=False):
        field = ".".join(str(part) for part in problem["loc"])
        name = next((part for part in reversed(problem["loc"]) if isinstance(part, str)), field)
        given = json.dumps(problem.get("input"), ensure_ascii=False, default=str)  # as the caller sent it
        if problem["type"] == "missing":
            message = f"{name} must be given."
        elif problem["type"] == "literal_error":
            message = f"{name} must be one of {problem['ctx']['expected']}, not {given}."
        elif problem["type"] in _EXPECTED:
            message = f"{name} must be {_EXPECTED[problem['type']]}, not {given}."
        else:
            message = f"{name}: {problem['msg']}."
        errors.append({"code": "BAD_USER_INPUT", "message": message, "field": field})
    return error_result(errors)
