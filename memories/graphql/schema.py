"""The GraphQL schema: ``Query`` and ``Mutation``. Resolvers only call selectors and services."""

from __future__ import annotations

from datetime import datetime

import strawberry
import strawberry_django
from strawberry.extensions import MaxAliasesLimiter, QueryDepthLimiter
from strawberry_django.optimizer import DjangoOptimizerExtension

from memories import selectors
from memories.graphql.errors import StableErrors
from memories.graphql.inputs import MessageInput, SearchInput
from memories.graphql.types import (
    AddMessagesResult,
    HitKind,
    HitType,
    MessageType,
    SearchResultType,
    SummaryType,
    UsageType,
)
from memories.search import search_memories
from memories.services.messages import MessageIn, messages_add

__all__ = ["schema"]

MAX_PAGE_SIZE = 1000


@strawberry.type
class Query:
    @strawberry_django.field(description="A user's messages, ascending by conversation time.")
    def history(
        self,
        user_id: str,
        session_id: str | None = None,
        channel: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MessageType]:
        limit = max(0, min(limit, MAX_PAGE_SIZE))
        queryset = selectors.message_list(
            user_external_id=user_id, session_external_id=session_id, channel=channel, since=since, until=until
        )
        return queryset[max(0, offset) : max(0, offset) + limit]  # type: ignore[return-value]

    @strawberry_django.field(description="A user's session summaries, ascending by the time they cover.")
    def summaries(self, user_id: str, session_id: str | None = None) -> list[SummaryType]:
        return selectors.summary_list(user_external_id=user_id, session_external_id=session_id)  # type: ignore[return-value]

    @strawberry_django.mutation(
        handle_django_errors=True,
        description="Answer a question from the memory of one or more end users.",
    )
    def search(self, input: SearchInput) -> SearchResultType:  # noqa: A002 - GraphQL convention
        user_ids = list(input.user_ids or []) + ([input.user_id] if input.user_id else [])
        result = search_memories(
            user_external_ids=user_ids,
            query=input.query,
            top_k=input.top_k,
            search_content=input.search_content,
            include_retrieved_data=input.include_retrieved_data,
            include_shared=input.include_shared,
        )
        return SearchResultType(
            answer=result.answer,
            answer_mode=result.answer_mode,
            retrieved_data=result.retrieved_data,
            stages=result.stages,
            usage=UsageType(
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
                embedding_tokens=result.usage.embedding_tokens,
            ),
            hits=[
                HitType(
                    kind=HitKind(h.kind),
                    id=strawberry.ID(str(h.id)),
                    score=h.score,
                    content=h.content,
                    user_id=h.user_id,
                    conversation_time=h.conversation_time,
                    session_id=h.session_id,
                )
                for h in result.hits
            ],
        )


@strawberry.type
class Mutation:
    @strawberry_django.mutation(
        handle_django_errors=True,
        description="Store messages of a session in one transaction; embedding and summaries follow in the worker.",
    )
    def add_messages(
        self, user_id: str, session_id: str, messages: list[MessageInput], channel: str = ""
    ) -> AddMessagesResult:
        added = messages_add(
            user_external_id=user_id,
            session_external_id=session_id,
            channel=channel,
            messages=[
                MessageIn(
                    role=m.role,
                    content=m.content,
                    created_at=m.created_at,
                    metadata=m.metadata if m.metadata is not None else {},
                    external_id=m.external_id or "",
                )
                for m in messages
            ],
        )
        return AddMessagesResult(session=added.session, messages=added.messages, skipped=added.skipped)  # type: ignore[arg-type]


schema = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    extensions=[
        DjangoOptimizerExtension,
        lambda: QueryDepthLimiter(max_depth=10),
        lambda: MaxAliasesLimiter(max_alias_count=15),
        StableErrors,
    ],
)
