"""Errors clients see: stable codes, never stack traces or SQL.

Mutations (and ``search``) return validation problems as ``OperationInfo`` results
(strawberry-django). Anything else a resolver raises ends up here, with a stable code:

- ``PermissionDenied``: ``FORBIDDEN`` (the caller's API key does not cover that user);
- ``ValidationError`` (e.g. a page size over the limit): ``BAD_USER_INPUT``, naming the field;
- ``ObjectDoesNotExist``: ``NOT_FOUND``;
- text PostgreSQL cannot store in an argument the services do not check (a NUL character, a
  lone surrogate, e.g. in a ``sessionId`` filter): ``BAD_USER_INPUT``;
- ``ModelBackendError``: its own code (``MODEL_BACKEND_UNAVAILABLE``, ...);
- ``ReembeddingNeeded``: ``REEMBEDDING_NEEDED`` (stored vectors are from another model);
- anything else: ``Unexpected error.`` with ``INTERNAL_ERROR``, logged, never shown.

GraphQL syntax and schema-validation errors pass through unchanged.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.db import DataError
from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from memories.llm import ModelBackendError
from memories.search import ReembeddingNeeded

__all__ = ["StableErrors"]

logger = logging.getLogger(__name__)


def _raised_by_resolver(error: GraphQLError) -> bool:
    return error.original_error is not None


class StableErrors(MaskErrors):
    """``MaskErrors`` that keeps model-backend failures readable and gives every error a code."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=_raised_by_resolver)

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        original = error.original_error
        if isinstance(original, ModelBackendError | ReembeddingNeeded):
            message, code = str(original), original.code
        elif isinstance(original, PermissionDenied):
            message, code = str(original) or "Not allowed.", "FORBIDDEN"
        elif isinstance(original, ValidationError):
            message, code = _validation_message(original), "BAD_USER_INPUT"
        elif isinstance(original, ObjectDoesNotExist):
            message, code = "Not found.", "NOT_FOUND"
        elif _unstorable_text(original):
            message, code = _UNSTORABLE_TEXT, "BAD_USER_INPUT"
        else:
            logger.error("GraphQL resolver failed", exc_info=original)
            message, code = self.error_message, "INTERNAL_ERROR"
        return GraphQLError(
            message=message,
            nodes=error.nodes,
            source=error.source,
            positions=error.positions,
            path=error.path,
            extensions={"code": code},
        )


_UNSTORABLE_TEXT = (
    "An argument holds text PostgreSQL cannot store: the NUL character (U+0000) or a lone surrogate (U+D800-U+DFFF)."
)


def _unstorable_text(error: BaseException | None) -> bool:
    """psycopg refusing to send such text: ``DataError`` for a NUL, ``UnicodeEncodeError`` for a
    lone surrogate (the connection's encoding is UTF-8)."""
    if isinstance(error, UnicodeEncodeError):
        return True
    return isinstance(error, DataError) and "cannot contain NUL" in str(error)


def _validation_message(error: ValidationError) -> str:
    if hasattr(error, "error_dict"):
        return " ".join(f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items())
    return " ".join(error.messages)
