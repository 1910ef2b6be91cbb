"""The GraphQL schema: ``Query`` and ``Mutation``. Resolvers only call selectors and services.

Who may act on which end user is checked on every top-level field by its ``InUserScope`` extension
(``memories.graphql.permissions``); model types filter their rows by the same scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import strawberry
from django.conf import settings
from graphql.error import GraphQLSyntaxError
from strawberry.extensions import (
    AddValidationRules,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry_django.optimizer import DjangoOptimizerExtension

from memories.graphql.cost import cost_limit_rule
from memories.graphql.errors import StableErrors
from memories.graphql.mutations import Mutation
from memories.graphql.queries import Query
from memories.metrics import MetricsExtension

__all__ = ["schema"]


@lru_cache(maxsize=8)
def _limit_rules(max_depth: int, max_aliases: int, max_cost: int) -> list:
    """The depth, alias and cost limits' validation rules, made once per set of limits.

    Each limiter makes a new rule class; made per request, they would never match the
    validation cache's key (the document and its rules).
    """
    return [
        *QueryDepthLimiter(max_depth=max_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=max_aliases).validation_rules,
        cost_limit_rule(max_cost, max_depth),
    ]


class _ParserCache(ParserCache):
    """``ParserCache`` that leaves a document that does not parse to Strawberry's own parse, whose
    error the operation's extensions (``StableErrors``) then see; raised from the cache's hook, the
    error would skip them and reach the client without a code."""

    def on_parse(self) -> Iterator[None]:
        try:
            yield from super().on_parse()
        except GraphQLSyntaxError:
            yield


# A frontend sends the same few documents again and again: parse and validate each once.
# The caches are bounded LRU caches (Strawberry's ParserCache and
# ValidationCache), so distinct documents cannot grow memory without limit.
DOCUMENT_CACHE_SIZE = 256

schema = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    extensions=[
        DjangoOptimizerExtension,
        lambda: MaxTokensLimiter(settings.MAX_QUERY_TOKENS),
        lambda: AddValidationRules(
            _limit_rules(settings.MAX_QUERY_DEPTH, settings.MAX_ALIASES, settings.MAX_QUERY_COST)
        ),
        lambda: _ParserCache(maxsize=DOCUMENT_CACHE_SIZE),
        lambda: ValidationCache(maxsize=DOCUMENT_CACHE_SIZE),
        StableErrors,
        MetricsExtension,
    ],
)
