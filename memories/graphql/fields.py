"""Fields that answer refused input with ``OperationInfo``: strawberry-django's mutation field
(``handle_django_errors``), with the services' errors put in the API's terms first.

``search`` and ``context`` are queries declared with it too: strawberry-django 0.93 handles Django
errors only in mutation fields (``handle_django_errors`` is not an option of ``strawberry_django.field``;
strawberry-django issue #857), and a mutation field works as any field of ``Query``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from strawberry.annotation import StrawberryAnnotation
from strawberry.types import Info
from strawberry_django.mutations.fields import DjangoMutationBase

from memories.graphql.errors import api_validation_error
from memories.graphql.permissions import FORBIDDEN, InUserScope

__all__ = ["mutation"]


class _ApiMutation(DjangoMutationBase):
    def resolver(self, source: Any, info: Info | None, args: list[Any], kwargs: dict[str, Any]) -> Any:
        try:
            return super().resolver(source, info, args, kwargs)
        except ValidationError as error:
            raise api_validation_error(error) from error
        except PermissionDenied as error:
            error.code = FORBIDDEN  # OperationInfo takes a message's code from its exception
            raise


def mutation(*, description: str) -> Callable[[Callable[..., Any]], Any]:
    """``strawberry_django.mutation(handle_django_errors=True)`` for the caller's scope (``InUserScope``),
    whose ``ValidationError`` names the API's fields (``api_validation_error``) and whose
    ``PermissionDenied`` has the code ``FORBIDDEN``."""
    return _ApiMutation(
        python_name=None,
        django_name=None,
        graphql_name=None,
        type_annotation=StrawberryAnnotation.from_annotation(None),
        description=description,
        extensions=[InUserScope()],
        handle_django_errors=True,
    )
