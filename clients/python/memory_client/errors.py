"""The service's errors as exceptions, one class per kind of fix, each carrying the API's code.

The codes are those of the API (docs/api.md, "Errors"): a top-level GraphQL error's
``extensions.code``, or, for input a mutation, ``search`` or ``context`` refuses (``OperationInfo``),
the code of its first message (``FORBIDDEN``) or else its kind (``VALIDATION``, ``ERROR``), with every
message in ``field_errors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BackendError",
    "FieldError",
    "ForbiddenError",
    "InputError",
    "MemoryApiError",
    "NotFoundError",
    "RateLimitedError",
    "UnauthenticatedError",
    "error_from_graphql",
    "error_from_operation_info",
]


@dataclass(frozen=True)
class FieldError:
    """One message of a refused input: ``field`` (e.g. ``messages.0.role``, None for the whole input),
    ``message`` (what to fix), ``kind`` (``VALIDATION``, ``ERROR``, ``PERMISSION``) and the API's ``code``."""

    field: str | None
    message: str
    kind: str
    code: str | None = None


class MemoryApiError(Exception):
    """An error the service answered with.

    Attributes:
        code: the API's stable code (``FORBIDDEN``, ``BAD_USER_INPUT``, ``VALIDATION``...), or
            ``HTTP_<status>`` / ``INVALID_RESPONSE`` when the answer was not GraphQL at all.
        message: the service's message.
        status: the HTTP status of the answer (200 for most GraphQL errors).
        field_errors: the messages of a refused input, each naming its field.
        errors: every GraphQL error of the answer, as sent.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int = 200,
        field_errors: Sequence[FieldError] = (),
        errors: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.code = code
        self.message = message
        self.status = status
        self.field_errors = list(field_errors)
        self.errors = list(errors)
        fields = "; ".join(f"{e.field or 'input'}: {e.message}" for e in self.field_errors)
        super().__init__(f"{code}: {fields or message}")


class UnauthenticatedError(MemoryApiError):
    """``UNAUTHENTICATED`` (HTTP 401): no API key, or a wrong or revoked one."""


class ForbiddenError(MemoryApiError):
    """``FORBIDDEN`` (HTTP 200, or 403): the API key does not cover that end user (or shared knowledge),
    or may not curate; ``PERMISSION``: a refusal of the same kind without a code."""


class InputError(MemoryApiError):
    """Input to fix: ``VALIDATION`` / ``ERROR`` (with ``field_errors``), ``BAD_USER_INPUT``, ``BAD_REQUEST``,
    ``GRAPHQL_PARSE_FAILED``, ``GRAPHQL_VALIDATION_FAILED``, ``PAYLOAD_TOO_LARGE`` (HTTP 413). Nothing was stored."""


class RateLimitedError(MemoryApiError):
    """HTTP 429 (e.g. from a proxy in front of the service): send again later."""


class NotFoundError(MemoryApiError):
    """``NOT_FOUND``: the object does not exist."""


class BackendError(MemoryApiError):
    """The service cannot answer now: ``MODEL_BACKEND_UNAVAILABLE`` / ``_TIMEOUT`` / ``_ERROR`` (the
    embedding or chat server failed; messages sent with the request are kept), ``REEMBEDDING_NEEDED``,
    ``INTERNAL_ERROR`` (details in the server's log), or an HTTP 5xx (``HTTP_503``...) without a code."""


_CLASSES: dict[str, type[MemoryApiError]] = {
    "UNAUTHENTICATED": UnauthenticatedError,
    "FORBIDDEN": ForbiddenError,
    "PERMISSION": ForbiddenError,
    "BAD_USER_INPUT": InputError,
    "BAD_REQUEST": InputError,
    "GRAPHQL_PARSE_FAILED": InputError,
    "GRAPHQL_VALIDATION_FAILED": InputError,
    "PAYLOAD_TOO_LARGE": InputError,
    "VALIDATION": InputError,
    "ERROR": InputError,
    "NOT_FOUND": NotFoundError,
    "MODEL_BACKEND_UNAVAILABLE": BackendError,
    "MODEL_BACKEND_TIMEOUT": BackendError,
    "MODEL_BACKEND_ERROR": BackendError,
    "REEMBEDDING_NEEDED": BackendError,
    "INTERNAL_ERROR": BackendError,
}


# An HTTP error without a code the client knows (e.g. a proxy's 429 or 503), by status.
_STATUS_CLASSES: dict[int, type[MemoryApiError]] = {
    400: InputError,
    401: UnauthenticatedError,
    403: ForbiddenError,
    404: NotFoundError,
    413: InputError,
    429: RateLimitedError,
}


def _error(message: str, code: str, *, status: int = 200, **details: Any) -> MemoryApiError:
    cls = _CLASSES.get(code) or _STATUS_CLASSES.get(status) or (BackendError if status >= 500 else MemoryApiError)
    return cls(message, code=code, status=status, **details)


def error_from_graphql(errors: Sequence[Mapping[str, Any]], *, status: int = 200) -> MemoryApiError:
    """The exception for a GraphQL answer's ``errors`` (its first error's code and message), or,
    for an HTTP error without them, its status (``code`` ``HTTP_<status>``)."""
    first = errors[0] if errors else {}
    code = str((first.get("extensions") or {}).get("code") or f"HTTP_{status}")
    message = str(first.get("message") or f"HTTP {status}")
    return _error(message, code, status=status, errors=errors)


def error_from_operation_info(messages: Iterable[Any]) -> MemoryApiError:
    """The exception for an ``OperationInfo`` result (input refused): one ``FieldError`` per message."""
    field_errors = [
        FieldError(field=m.field, message=m.message, kind=getattr(m.kind, "value", str(m.kind)), code=m.code)
        for m in messages
    ]
    # A refusal for want of permission carries the code FORBIDDEN; other messages only their kind.
    code = (field_errors[0].code or field_errors[0].kind) if field_errors else "VALIDATION"
    return _error(field_errors[0].message if field_errors else "Input refused.", code, field_errors=field_errors)
