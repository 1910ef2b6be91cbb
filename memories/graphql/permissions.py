"""Who may touch which end users' data: decided once per request, enforced in one place.

- ``Scope``: the end users a caller may act on (an API key's list, or all users for a trusted
  backend's key or a staff member logged into the admin).
- ``InUserScope``: a strawberry-django permission extension on every top-level field. Every end user
  the field names (``userId``, ``userIds``, and the same inside ``input``) must be in the caller's
  scope; a field that names no end user acts on shared or system-wide data and needs an all-users
  scope. A refused field never runs: a field that returns ``OperationInfo`` (every mutation,
  ``search``, ``context``) answers with a ``PERMISSION`` message of code ``FORBIDDEN``; a read field
  (``history``, ...) with a ``FORBIDDEN`` error at its path. The other fields of the document run
  as they would alone.
- ``ScopedType.get_queryset``: every model type filters its rows by the scope as well, so
  nested fields and any list can never reach another user's rows.
- Curation (approving, rejecting and editing fact candidates) needs ``Scope.may_curate``: a key
  with ``ApiKey.may_curate`` or a staff session. ``approveKnowledge`` and ``rejectKnowledge`` are
  refused by ``InUserScope``; ``updateKnowledge`` passes ``may_curate`` to ``knowledge_update``,
  which refuses a candidate once it holds the row's lock (only it knows the status).
- A user token (``memories.services.user_tokens``, for a browser) is scoped to its one end user by
  the same rules; it never curates, and ``createUserToken`` refuses it (no token mints another).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from strawberry.types import Info
from strawberry.types.base import StrawberryOptional
from strawberry.types.union import StrawberryUnion
from strawberry_django.fields.types import OperationInfo, OperationMessage
from strawberry_django.permissions import DjangoNoPermission, DjangoPermissionExtension

from memories.services.api_keys import api_key_authenticate
from memories.services.user_tokens import TOKEN_PREFIX, user_token_authenticate

__all__ = [
    "FORBIDDEN",
    "InUserScope",
    "Scope",
    "ScopedType",
    "api_key_scope",
    "bearer_scope",
    "require_curation",
    "scope_of",
]

# The code of every refusal for want of permission: a top-level error's ``extensions.code``, or an
# ``OperationInfo`` message's ``code``.
FORBIDDEN = "FORBIDDEN"
# The arguments naming end users (Python names), with their API names.
_USER_ARGUMENTS = {"user_id": "userId", "user_ids": "userIds"}
# Top-level fields that curate knowledge: they need a scope that may curate.
_CURATING_FIELDS = frozenset({"approveKnowledge", "rejectKnowledge"})
# Top-level fields a user token may not run.
_KEY_ONLY_FIELDS = frozenset({"createUserToken"})


@dataclass(frozen=True)
class Scope:
    """The end users (external ids) a caller may act on; ``all_users`` for every one.

    ``may_curate``: may approve, reject and edit fact candidates. ``actor``: who the caller is in
    the knowledge's audit history (``"api key <name> (#<id>)"``; empty for a staff session, whose
    user the history records itself). ``api_key_id``: the API key behind the caller (its own, or the
    one its user token was minted with; ``None`` for a staff session). ``user_token``: the caller
    holds a user token (a browser), not an API key.
    """

    all_users: bool
    user_external_ids: frozenset[str] = frozenset()
    may_curate: bool = False
    actor: str = ""
    api_key_id: int | None = None
    user_token: bool = False

    @property
    def credential(self) -> str:
        """What the caller holds, as the API's messages name it."""
        return "user token" if self.user_token else "API key"

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


def api_key_scope(raw_key: str) -> Scope | None:
    """The scope of the active API key with this secret (its end users, curation, its name for the
    audit history); ``None`` for an empty, wrong or revoked key. One query.

    Every way in (the GraphQL view, the MCP server) authenticates a key through this.
    """
    key = api_key_authenticate(raw_key=raw_key) if raw_key else None
    if key is None:
        return None
    return Scope(
        all_users=key.all_users,
        user_external_ids=frozenset(key.user_external_ids),
        may_curate=key.may_curate,
        # The history's change reason holds 100 characters: the name is cut, the id kept.
        actor=f"api key {key.name[:72]} (#{key.pk})",
        api_key_id=key.pk,
    )


def bearer_scope(credential: str) -> Scope | None:
    """The scope of a bearer credential: a user token (``memu_...``: its one end user, no curation)
    or an API key (``api_key_scope``); ``None`` for an empty, wrong, expired or revoked one. One query."""
    if not credential.startswith(TOKEN_PREFIX):
        return api_key_scope(credential)
    found = user_token_authenticate(token=credential)
    if found is None:
        return None
    key, user = found
    return Scope(
        all_users=False,
        user_external_ids=frozenset({user}),
        actor=f"user token of api key {key.name[:60]} (#{key.pk})",
        api_key_id=key.pk,
        user_token=True,
    )


def scope_of(info: Info) -> Scope:
    """The caller's scope, set by the GraphQL view after authentication."""
    return info.context.request.memory_scope


def require_curation(scope: Scope, field_name: str) -> None:
    """Raise ``PermissionDenied`` unless ``scope`` may curate knowledge (run ``field_name`` on candidates)."""
    if not scope.may_curate:
        raise PermissionDenied(
            f"{field_name} curates fact candidates: it needs an API key that may curate "
            "(`manage.py create_api_key ... --may-curate`, or tick it in the admin)."
        )


class ScopedType:
    """Base for model types: rows outside the caller's scope are never loaded."""

    shared_readable = False

    @classmethod
    def get_queryset(cls, queryset: QuerySet, info: Info, **kwargs: Any) -> QuerySet:
        return scope_of(info).filter(queryset, shared_readable=cls.shared_readable)


def _named_users(arguments: dict[str, Any]) -> dict[str, list[str]]:
    """The end users the field's arguments name, by API argument (``userId``, ``userIds``); ``{}``
    when they name none."""
    named: dict[str, list[str]] = {}
    containers = [arguments]
    if (nested := arguments.get("input")) is not None:
        containers.append({name: getattr(nested, name, None) for name in _USER_ARGUMENTS})
    for container in containers:
        for name, api_name in _USER_ARGUMENTS.items():
            value = container.get(name)
            if value is not None:
                named.setdefault(api_name, []).extend([value] if isinstance(value, str) else value)
    return named


def _refusal(scope: Scope, field_name: str, arguments: dict[str, Any]) -> tuple[str, str | None] | None:
    """Why ``scope`` may not run the top-level field with these (coerced) arguments, and the argument
    to fix (``None``: not one argument); ``None`` when it may."""
    if field_name in _CURATING_FIELDS and not scope.may_curate:
        try:
            require_curation(scope, field_name)
        except PermissionDenied as denied:
            return str(denied), None
    named = _named_users(arguments)
    if not named and not scope.all_users:
        return (
            f"{field_name} names no end user, so it acts on shared data: it needs an all-users API "
            f"key. This {'token' if scope.user_token else 'key'} must name its end users (userId or userIds).",
            None,
        )
    for api_name, users in named.items():
        if denied := sorted(u for u in users if not scope.allows(u)):
            return f"This {scope.credential} may not act on user {denied[0]!r}.", api_name
    if field_name in _KEY_ONLY_FIELDS and scope.user_token:
        return f"{field_name} needs an API key: a user token cannot mint tokens.", None
    return None


class InUserScope(DjangoPermissionExtension):
    """Runs a top-level field only when the caller's scope covers the end users it names (and, for
    ``approveKnowledge`` and ``rejectKnowledge``, may curate); see the module's docstring."""

    DEFAULT_ERROR_MESSAGE: ClassVar[str] = "This API key may not act on that end user."

    def __init__(self) -> None:
        # No schema directive: who may call a field is the key's business, not the schema's.
        super().__init__(use_directives=False)

    def resolve_for_user(self, resolver: Callable, user: Any, *, info: Info, source: Any) -> Any:
        # ``resolver`` is the field's resolver with its coerced arguments bound (a ``functools.partial``).
        if (refusal := _refusal(scope_of(info), info.field_name, resolver.keywords)) is not None:
            raise DjangoNoPermission(*refusal)
        return resolver()

    def handle_no_permission(self, exception: BaseException, *, info: Info) -> Any:
        message, field = exception.args if len(exception.args) == 2 else (self.message, None)
        if _returns_operation_info(info):
            return OperationInfo(
                messages=[
                    OperationMessage(
                        kind=OperationMessage.Kind.PERMISSION, message=message, field=field, code=FORBIDDEN
                    )
                ]
            )
        raise PermissionDenied(message) from exception


def _returns_operation_info(info: Info) -> bool:
    return_type = info.return_type
    if isinstance(return_type, StrawberryOptional):
        return_type = return_type.of_type
    return isinstance(return_type, StrawberryUnion) and any(
        isinstance(t, type) and issubclass(t, OperationInfo) for t in return_type.types
    )
