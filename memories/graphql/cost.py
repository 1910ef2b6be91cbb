"""How much one GraphQL request may ask for: its expensive fields, counted before anything runs.

A few fields cost far more than the rest: each ``search`` and ``context`` embeds a query and ranks
memories, each ``addMessages`` stores up to ``MAX_MESSAGES_PER_CALL`` messages (and its ``context``
is a search), ``exportUser`` reads everything of a user, and ``deleteHistory`` and ``forgetUser``
delete it. A document may ask for at most ``MAX_QUERY_COST`` of them, and for ``exportUser`` once;
aliases make the same field run again, so each response key counts, as GraphQL runs them (fields
merged under one key run once; fragments are followed). A document over the limit is refused by a
validation rule, before anything runs, with the code ``QUERY_TOO_COMPLEX``
(``memories.graphql.errors``), as is one of more than ``MAX_QUERY_TOKENS`` tokens (Strawberry's
``MaxTokensLimiter``, before it is parsed whole).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from graphql import (
    FieldNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLNamedType,
    GraphQLObjectType,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
    get_named_type,
)

__all__ = ["EXPENSIVE_FIELDS", "QUERY_TOO_COMPLEX", "cost_limit_rule"]

QUERY_TOO_COMPLEX = "QUERY_TOO_COMPLEX"
# (type, field) pairs that count; the API's names.
EXPENSIVE_FIELDS = frozenset(
    {
        ("Query", "search"),
        ("Query", "context"),
        ("Query", "exportUser"),
        ("Mutation", "addMessages"),
        ("Mutation", "deleteHistory"),
        ("Mutation", "forgetUser"),
        ("AddMessagesResult", "context"),
    }
)
# Fields one request may ask for once at most: their answer is held whole in memory.
ONCE = frozenset({"exportUser"})

# (the type, the response key) -> (the field's name, its selection sets, merged)
_Fields = dict[tuple[str, str], tuple[str, list[SelectionSetNode]]]


@lru_cache(maxsize=8)
def cost_limit_rule(max_cost: int, max_depth: int) -> type[ValidationRule]:
    """The validation rule refusing an operation of more than ``max_cost`` expensive fields, or of
    ``exportUser`` more than once; selections deeper than ``max_depth`` are left to the depth limit.

    One class per pair of limits: the validation cache keys on the rules.
    """

    class CostLimit(ValidationRule):
        def enter_operation_definition(self, node: OperationDefinitionNode, *_args: object) -> None:
            root = self.context.schema.get_root_type(node.operation)
            if root is None:
                return
            counted = self._count(root, [node.selection_set], depth=0)
            if over := sorted(name for name in ONCE if counted[name] > 1):
                self.report_error(
                    GraphQLError(
                        f"{over[0]} may be asked for once per request, not {counted[over[0]]} times: send one "
                        "per request (for a large user, `manage.py export_user` writes the same document to a file).",
                        node,
                        extensions={"code": QUERY_TOO_COMPLEX},
                    )
                )
            total = counted.total()
            if total > max_cost:
                names = ", ".join(f"{name} x{count}" for name, count in sorted(counted.items()))
                self.report_error(
                    GraphQLError(
                        f"The document asks for {total} expensive fields ({names}); at most {max_cost} per request "
                        "(MAX_QUERY_COST; search, context, addMessages and its context, exportUser, deleteHistory "
                        "and forgetUser count, each alias once): send them in several requests.",
                        node,
                        extensions={"code": QUERY_TOO_COMPLEX},
                    )
                )

        def _count(self, parent: GraphQLNamedType, selection_sets: list[SelectionSetNode], *, depth: int) -> Counter:
            counted: Counter[str] = Counter()
            if depth > max_depth:
                return counted
            fields: _Fields = {}
            for selection_set in selection_sets:
                self._collect(parent, selection_set, fields, visited=frozenset())
            for (type_name, _), (name, subsets) in fields.items():
                if (type_name, name) in EXPENSIVE_FIELDS:
                    counted[name] += 1
                owner = self.context.schema.get_type(type_name)
                definition = owner.fields.get(name) if isinstance(owner, GraphQLObjectType) else None
                subsets = [s for s in subsets if s is not None]
                if definition is not None and subsets:
                    counted += self._count(get_named_type(definition.type), subsets, depth=depth + 1)
            return counted

        def _collect(
            self, parent: GraphQLNamedType, selection_set: SelectionSetNode, fields: _Fields, *, visited: frozenset
        ) -> None:
            """Add the fields ``selection_set`` runs on ``parent`` (through its fragments) to ``fields``."""
            for selection in selection_set.selections:
                if isinstance(selection, FieldNode):
                    key = (parent.name, (selection.alias or selection.name).value)
                    fields.setdefault(key, (selection.name.value, []))[1].append(selection.selection_set)
                    continue
                if isinstance(selection, FragmentSpreadNode):
                    name = selection.name.value
                    fragment = self.context.get_fragment(name)
                    if fragment is None or name in visited:  # unknown or cyclic: other rules report it
                        continue
                    visited, condition, inner = visited | {name}, fragment.type_condition, fragment.selection_set
                elif isinstance(selection, InlineFragmentNode):
                    condition, inner = selection.type_condition, selection.selection_set
                else:
                    continue
                target = self.context.schema.get_type(condition.name.value) if condition is not None else parent
                if target is not None:
                    self._collect(target, inner, fields, visited=visited)

    return CostLimit
