"""Errors clients see: stable codes, never stack traces or SQL.

Validation problems come back as ``OperationInfo`` results (strawberry-django). Anything a
resolver raises ends up here: a ``ModelBackendError`` keeps its message and stable code;
every other exception is replaced by ``Unexpected error.`` with code ``INTERNAL_ERROR``
(and logged). GraphQL syntax and schema-validation errors pass through unchanged.
"""

from __future__ import annotations

import logging

from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from memories.llm import ModelBackendError

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
        if isinstance(original, ModelBackendError):
            message, code = str(original), original.code
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
