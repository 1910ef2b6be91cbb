"""Who may touch which end users' data: decided once per request, enforced in one place.

- ``Scope``: the end users a caller may act on (an API key's list, or all users for a
  trusted backend's key or a staff member logged into the admin).
- ``UserScopeExtension``: before any top-level field runs, every end user it names
  (``userId``, ``userIds``, and the same inside ``input``) must be in the caller's scope; a
  field that names no end user acts on shared or system-wide data and needs an all-users
  scope. Out-of-scope calls are refused with ``PermissionDenied`` before any resolver runs.
- ``ScopedType.get_queryset``: every model type filters its rows by the scope as well, so
  nested fields and any list can never reach another user's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from strawberry.extensions import SchemaExtension
from strawberry.types import Info

__all__ = ["Scope", "ScopedType", "UserScopeExtension", "scope_of"]

_USER_ARGUMENTS = ("userId", "userIds")


@dataclass(frozen=True)
class Scope:
    """The end users (external ids) a caller may act on; ``all_users`` for every one."""

    all_users: bool
    user_external_ids: frozenset[str] = frozenset()

    def allows(self, user_external_id: str) -> bool:
        """Whether this end user's data may be read or changed."""
        return self.all_users or user_external_id in self.user_external_ids

    def filter(self, queryset: QuerySet, *, user_path: str = "user", shared_readable: bool = False) -> QuerySet:
        """Narrow ``queryset`` to rows owned by end users in scope.

        Args:
            user_path: the lookup path from the row to its ``EndUser``.
            shared_readable: also keep rows with no owner (system-wide knowledge).
        """
        if self.all_users:
            return queryset
        condition = Q(**{f"{user_path}__external_id__in": self.user_external_ids})
        if shared_readable:
            condition |= Q(**{f"{user_path}__isnull": True})
        return queryset.filter(condition)


def scope_of(info: Info) -> Scope:
    """The caller's scope, set by the GraphQL view after authentication."""
    return info.context.request.memory_scope


class ScopedType:
    """Base for model types: rows outside the caller's scope are never loaded."""

    shared_readable = False

    @classmethod
    def get_queryset(cls, queryset: QuerySet, info: Info, **kwargs: Any) -> QuerySet:
        return scope_of(info).filter(queryset, shared_readable=cls.shared_readable)


def _named_users(arguments: dict[str, Any]) -> tuple[bool, set[str]]:
    """Whether the arguments name an end user at all, and which."""
    named, users = False, set()
    for container in (arguments, arguments.get("input") or {}):
        if not isinstance(container, dict):
            continue
        for name in _USER_ARGUMENTS:
            if name in container:
                value = container[name]
                if value is None:
                    continue
                named = True
                users.update([value] if isinstance(value, str) else value)
    return named, users


class UserScopeExtension(SchemaExtension):
    """Refuses any top-level field that names an end user outside the caller's scope."""

    def resolve(self, _next, root, info: Info, *args: Any, **kwargs: Any):  # noqa: ANN001, ANN201
        if info.path.prev is None and not info.field_name.startswith("__"):
            scope = scope_of(info)
            named, users = _named_users(kwargs)
            if not named and not scope.all_users:
                raise PermissionDenied(
                    f"{info.field_name} names no end user, so it acts on shared data: it needs an all-users API "
                    "key. This key must name its end users (userId or userIds)."
                )
            denied = sorted(u for u in users if not scope.allows(u))
            if denied:
                raise PermissionDenied(f"This API key may not act on user {denied[0]!r}.")
        return _next(root, info, *args, **kwargs)
