"""Who may touch which end users' data: decided once per request, enforced in one place.

- ``Scope``: the end users a caller may act on (an API key's list, or all users for a
  trusted backend's key or a staff member logged into the admin).
- ``UserScopeExtension``: every end user a top-level field names (``userId``, ``userIds``,
  and the same inside ``input``) must be in the caller's scope; a field that names no end
  user acts on shared or system-wide data and needs an all-users scope. The operation is
  checked as a whole before any field runs: one out-of-scope field refuses the whole
  document (``PermissionDenied``), so a mutation document mixing an allowed and a forbidden
  field writes nothing. Each field is checked again, with its coerced arguments, as it runs.
- ``ScopedType.get_queryset``: every model type filters its rows by the scope as well, so
  nested fields and any list can never reach another user's rows.
- Curation (approving, rejecting and editing fact candidates) needs ``Scope.may_curate``: a key
  with ``ApiKey.may_curate`` or a staff session. ``approveKnowledge`` and ``rejectKnowledge`` are
  refused by name, with the whole document; ``updateKnowledge`` passes ``may_curate`` to
  ``knowledge_update``, which refuses a candidate once it holds the row's lock (only it knows the status).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    value_from_ast_untyped,
)
from strawberry.extensions import SchemaExtension
from strawberry.types import Info

from memories.services.api_keys import api_key_authenticate

__all__ = ["Scope", "ScopedType", "UserScopeExtension", "api_key_scope", "require_curation", "scope_of"]

_USER_ARGUMENTS = ("userId", "userIds")
# Top-level fields that curate knowledge: they need a scope that may curate.
_CURATING_FIELDS = frozenset({"approveKnowledge", "rejectKnowledge"})


@dataclass(frozen=True)
class Scope:
    """The end users (external ids) a caller may act on; ``all_users`` for every one.

    ``may_curate``: may approve, reject and edit fact candidates. ``actor``: who the caller is in
    the knowledge's audit history (``"api key <name> (#<id>)"``; empty for a staff session, whose
    user the history records itself).
    """

    all_users: bool
    user_external_ids: frozenset[str] = frozenset()
    may_curate: bool = False
    actor: str = ""

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
                # As sent, before coercion: anything but text or a list fails coercion later.
                values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
                users.update(v for v in values if isinstance(v, str))
    return named, users


def _check(scope: Scope, field_name: str, arguments: dict[str, Any]) -> None:
    """Raise ``PermissionDenied`` unless ``scope`` may run the top-level field with these arguments."""
    if field_name in _CURATING_FIELDS:
        require_curation(scope, field_name)
    named, users = _named_users(arguments)
    if not named and not scope.all_users:
        raise PermissionDenied(
            f"{field_name} names no end user, so it acts on shared data: it needs an all-users API "
            "key. This key must name its end users (userId or userIds)."
        )
    denied = sorted(u for u in users if not scope.allows(u))
    if denied:
        raise PermissionDenied(f"This API key may not act on user {denied[0]!r}.")


class UserScopeExtension(SchemaExtension):
    """Refuses a document any of whose top-level fields names an end user outside the caller's
    scope, before any field runs; and checks each top-level field again as it runs."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        scope = getattr(getattr(context.context, "request", None), "memory_scope", None)
        restricted = scope is not None and not (scope.all_users and scope.may_curate)
        if restricted and context.graphql_document is not None:
            denied = _denied_field(scope, context.graphql_document, context.operation_name, context.variables or {})
            if denied is not None:
                field, exc = denied
                key = (field.alias or field.name).value
                error = GraphQLError(str(exc), nodes=[field], path=[key], original_error=exc)
                # Nothing runs: the result is this one error (StableErrors gives it its code).
                context.result = ExecutionResult(data=None, errors=[error])
        yield

    def resolve(self, _next, root, info: Info, *args: Any, **kwargs: Any):
        if info.path.prev is None and not info.field_name.startswith("__"):
            _check(scope_of(info), info.field_name, kwargs)
        return _next(root, info, *args, **kwargs)


def _denied_field(
    scope: Scope, document: DocumentNode, operation_name: str | None, variables: dict
) -> tuple[FieldNode, PermissionDenied] | None:
    """The first top-level field of the operation to run that ``_check`` refuses, with its
    arguments as sent, and why; ``None`` when the scope allows them all.

    Fields under ``@skip``/``@include`` are checked too. Variables are taken as sent (or their
    defaults); one that would not coerce to its type fails before any field runs anyway.
    """
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    operation = next((o for o in operations if o.name and o.name.value == operation_name), None)
    if operation is None:
        if operation_name is not None or len(operations) != 1:
            return None  # no such operation: execution reports it before any field runs
        operation = operations[0]
    values = dict(variables)
    for definition in operation.variable_definitions or ():
        if definition.variable.name.value not in values and definition.default_value is not None:
            values[definition.variable.name.value] = value_from_ast_untyped(definition.default_value)
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    for field in _root_fields(operation.selection_set, fragments, seen=set()):
        if field.name.value.startswith("__"):
            continue
        arguments = {a.name.value: value_from_ast_untyped(a.value, values) for a in field.arguments or ()}
        try:
            _check(scope, field.name.value, arguments)
        except PermissionDenied as exc:
            return field, exc
    return None


def _root_fields(
    selection_set: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode], *, seen: set[str]
) -> Iterator[FieldNode]:
    """The fields of a selection set, through inline fragments and fragment spreads."""
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            yield selection
        elif isinstance(selection, InlineFragmentNode):
            yield from _root_fields(selection.selection_set, fragments, seen=seen)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in seen:
            seen.add(selection.name.value)
            if (fragment := fragments.get(selection.name.value)) is not None:
                yield from _root_fields(fragment.selection_set, fragments, seen=seen)
