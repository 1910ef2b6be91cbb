"""Errors clients see: stable codes, never stack traces or SQL.

The contract is in docs/api.md ("Errors"). Mutations, ``search`` and ``context`` return what a
caller can fix in them (validation, an unknown id, permission) as ``OperationInfo`` results
(strawberry-django; ``memories.graphql.fields``), with the services' argument names turned into the
API's here (``api_validation_error``). Anything else a resolver raises ends up here, with a stable
code:

- ``PermissionDenied`` (a field that reads, refused by ``InUserScope``): ``FORBIDDEN``;
- ``ValidationError`` (e.g. a page size over the limit): ``BAD_USER_INPUT``, naming the field;
- ``ObjectDoesNotExist``: ``NOT_FOUND``;
- text PostgreSQL cannot store in an argument the services do not check (a NUL character, a
  lone surrogate, e.g. in a ``sessionId`` filter): ``BAD_USER_INPUT``;
- a value Python cannot hold (a date out of range once converted to UTC, a document or JSON
  value nested past the recursion limit): ``BAD_USER_INPUT``, naming the field;
- an argument or variable that cannot be coerced to its type (``"2024-02-30"`` as a
  ``DateTime``, ``NaN`` as a ``Float``, an integer over 4,300 digits): ``BAD_USER_INPUT``, with
  GraphQL's message naming the argument or variable;
- ``ModelBackendError``: its own code (``MODEL_BACKEND_UNAVAILABLE``, ...);
- a database that cannot be reached, or a schema changed under this process (a restore, a
  migration): ``DATABASE_UNAVAILABLE`` (``memories.database``; the view answers HTTP 503 when
  nothing else could be answered, and runs a query once more after a schema change);
- ``ReembeddingNeeded``: ``REEMBEDDING_NEEDED`` (stored vectors are from another model);
- ``ExportTooLarge``: ``EXPORT_TOO_LARGE`` (an ``exportUser`` over ``EXPORT_MAX_BYTES``);
- a statement cancelled after ``REQUEST_STATEMENT_TIMEOUT_SECONDS``: ``STATEMENT_TIMEOUT``;
- a deadlock or serialization failure the services' retries did not get past:
  ``DATABASE_CONFLICT`` (``memories.database.retry_transient``);
- anything else: ``Unexpected error.`` with ``INTERNAL_ERROR``, logged, never shown.

- a document that does not parse: ``GRAPHQL_PARSE_FAILED``; one that does not validate against
  the schema (an unknown field, a literal not of its type such as an inline
  ``createdAt: "2024-02-30"``, a document nested past the depth limit):
  ``GRAPHQL_VALIDATION_FAILED``; both with GraphQL's message (Apollo Server's codes); one over
  ``MAX_QUERY_TOKENS`` or the cost limit (``memories.graphql.cost``): ``QUERY_TOO_COMPLEX``.

Client errors are logged at INFO as one line per request, without a traceback, however many the
document causes (a client cannot flood the log with them: the first few, and how many); a database
fault, a statement timeout or a conflict as one WARNING line; only ``INTERNAL_ERROR`` is logged with
its traceback, at ERROR.
Strawberry's own logger (``strawberry.execution``), which logs every error with its traceback, is
silenced in ``settings.LOGGING``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.db import DataError
from graphql.error import GraphQLError, GraphQLSyntaxError
from strawberry.extensions import MaskErrors
from strawberry.utils.str_converters import to_camel_case

from memories.database import (
    database_unavailable,
    first_line,
    schema_changed,
    statement_timed_out,
    transient_conflict,
)
from memories.graphql.cost import QUERY_TOO_COMPLEX
from memories.http import DATABASE_UNAVAILABLE_MESSAGE
from memories.llm import ModelBackendError
from memories.search import ReembeddingNeeded
from memories.services.user_export import ExportTooLarge

__all__ = ["SCHEMA_CHANGED", "ApiValidationError", "StableErrors", "api_name", "api_validation_error"]

logger = logging.getLogger(__name__)

# The request attribute set when an error came from a schema changed under this process (the view
# then replaces its connections, and runs a query again).
SCHEMA_CHANGED = "memory_schema_changed"

# A GraphQL message quotes the value it refused: a 5,000-digit literal is cut to this many characters.
_MAX_MESSAGE_CHARS = 500
# Client errors of one request quoted in its log line; the others are counted.
_LOGGED_ERRORS = 3


# Service argument names whose API name is not their camelCase: the one place the two vocabularies meet.
_API_NAMES = {
    "user_external_id": "userId",
    "user_external_ids": "userIds",
    "session_external_id": "sessionId",
    "knowledge_id": "id",
}
# A predicate about a list's item names the item: "userId must be at most 255 characters." on userIds.
_ITEM_NAMES = {"user_external_ids": "userId"}


def api_name(name: str) -> str:
    """The API's name of a service argument or model field path: ``user_external_id`` is ``userId``,
    ``messages.3.created_at`` is ``messages.3.createdAt``."""
    return ".".join(_API_NAMES.get(part) or to_camel_case(part) for part in name.split("."))


class ApiValidationError(ValidationError):
    """A ``ValidationError`` the GraphQL layer raises itself, already in the API's terms."""


def api_validation_error(error: ValidationError) -> ValidationError:
    """A service's ``ValidationError`` in the API's terms: keyed by API names, and each message about
    its field (a predicate, beginning with a lower-case letter: ``"must not be empty."``) after the
    field's API name (``"userId must not be empty."``); sentences are kept as they are."""
    if isinstance(error, ApiValidationError) or not hasattr(error, "error_dict"):
        return error
    named = {}
    for key, errors in error.error_dict.items():
        path = api_name(key)
        subject = _ITEM_NAMES.get(key) or path.rsplit(".", 1)[-1]
        named[path] = [f"{subject} {m}" if m[:1].islower() else m for m in ValidationError(errors).messages]
    return ValidationError(named)


class StableErrors(MaskErrors):
    """``MaskErrors`` that keeps model-backend failures readable and gives every error a code."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=lambda _: True)
        self._client_errors: list[str] = []

    def on_operation(self) -> Iterator[None]:
        self._client_errors = []
        yield from super().on_operation()
        if errors := self._client_errors:
            more = f" (and {len(errors) - _LOGGED_ERRORS} more)" if len(errors) > _LOGGED_ERRORS else ""
            logger.info("GraphQL client error %s%s", "; ".join(errors[:_LOGGED_ERRORS]), more)

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        original = error.original_error
        if original is None and not error.path:
            # The document itself: it did not parse, or did not validate against the schema, or is over a limit.
            message, code = _document_error(error)
        elif isinstance(original, ModelBackendError | ReembeddingNeeded | ExportTooLarge):
            message, code = str(original), original.code
        elif isinstance(original, PermissionDenied):
            message, code = str(original) or "Not allowed.", "FORBIDDEN"
        elif isinstance(original, ValidationError):
            message, code = _validation_message(original), "BAD_USER_INPUT"
        elif isinstance(original, ObjectDoesNotExist):
            message, code = "Not found.", "NOT_FOUND"
        elif database_unavailable(original) or schema_changed(original):
            if schema_changed(original) and (request := getattr(self.execution_context.context, "request", None)):
                setattr(request, SCHEMA_CHANGED, True)
            logger.warning("GraphQL database fault at %s: %s", error.path or "-", first_line(original))
            message, code = DATABASE_UNAVAILABLE_MESSAGE, "DATABASE_UNAVAILABLE"
        elif statement_timed_out(original) or transient_conflict(original):
            logger.warning("GraphQL database statement failed at %s: %s", error.path or "-", first_line(original))
            message, code = (
                (_STATEMENT_TIMEOUT, "STATEMENT_TIMEOUT")
                if statement_timed_out(original)
                else (_CONFLICT, "DATABASE_CONFLICT")
            )
        elif _unstorable_text(original):
            message, code = _UNSTORABLE_TEXT, "BAD_USER_INPUT"
        elif isinstance(original, RecursionError):
            message, code = _prefixed(error, _TOO_DEEP), "BAD_USER_INPUT"
        elif isinstance(original, OverflowError):
            message, code = _prefixed(error, _OUT_OF_RANGE), "BAD_USER_INPUT"
        elif not error.path and isinstance(original, GraphQLError | ValueError | TypeError):
            # Raised before any resolver ran, coercing an argument or a variable to its type.
            message, code = _shortened(error.message), "BAD_USER_INPUT"
        else:
            logger.error("GraphQL resolver failed", exc_info=original)
            message, code = self.error_message, "INTERNAL_ERROR"
        if code not in {"INTERNAL_ERROR", "DATABASE_UNAVAILABLE", "DATABASE_CONFLICT", "STATEMENT_TIMEOUT"}:
            # A client's text may hold lone surrogates, which no log handler can encode: escaped.
            printable = message.encode("utf-8", "backslashreplace").decode("utf-8")
            self._client_errors.append(f"{code} at {error.path or '-'}: {printable}")
        return GraphQLError(
            message=message,
            nodes=error.nodes,
            source=error.source,
            positions=error.positions,
            path=error.path,
            extensions={"code": code},
        )


_STATEMENT_TIMEOUT = (
    "A database statement ran past REQUEST_STATEMENT_TIMEOUT_SECONDS and was cancelled: ask for less "
    "(fewer users, a date window, a smaller page) or retry later."
)
_CONFLICT = "The database could not order this change after concurrent ones, even after retrying: retry it."


def _document_error(error: GraphQLError) -> tuple[str, str]:
    """The message and code of an error about the document itself: its limits' own code
    (``QUERY_TOO_COMPLEX``: tokens, cost), else Apollo Server's codes for parsing and validation."""
    if isinstance(error, GraphQLSyntaxError):
        if _TOO_MANY_TOKENS in error.message:
            return (
                f"The document has more than {settings.MAX_QUERY_TOKENS} tokens (MAX_QUERY_TOKENS): send values "
                "as variables, and fewer fields per request.",
                QUERY_TOO_COMPLEX,
            )
        return _shortened(error.message), "GRAPHQL_PARSE_FAILED"
    return _shortened(error.message), (error.extensions or {}).get("code") or "GRAPHQL_VALIDATION_FAILED"


# graphql-core's message for a document over ``max_tokens``.
_TOO_MANY_TOKENS = "tokens. Parsing aborted."


_UNSTORABLE_TEXT = (
    "An argument holds text PostgreSQL cannot store: the NUL character (U+0000) or a lone surrogate (U+D800-U+DFFF)."
)


_OUT_OF_RANGE = (
    "a date or number is out of range: dates (createdAt, since, until, ...) must stay within years 1 to 9999 "
    "once converted to UTC."
)
_TOO_DEEP = "the document or a value in it (e.g. metadata) is nested too deeply: at most a few hundred levels."


def _unstorable_text(error: BaseException | None) -> bool:
    """psycopg or PostgreSQL refusing such text: ``DataError`` for a NUL or, in ``jsonb``, a lone
    surrogate's escape; ``UnicodeEncodeError`` for a lone surrogate in text (the connection's
    encoding is UTF-8)."""
    if isinstance(error, UnicodeEncodeError):
        return True
    return isinstance(error, DataError) and any(s in str(error) for s in ("cannot contain NUL", "surrogate"))


def _prefixed(error: GraphQLError, message: str) -> str:
    """``message``, after the top-level field it comes from when it comes from one."""
    return f"{error.path[0]}: {message}" if error.path else message[0].upper() + message[1:]


def _shortened(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE_CHARS else message[: _MAX_MESSAGE_CHARS - 1] + "…"


def _validation_message(error: ValidationError) -> str:
    error = api_validation_error(error)
    if hasattr(error, "error_dict"):
        return " ".join(f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items())
    return " ".join(error.messages)
