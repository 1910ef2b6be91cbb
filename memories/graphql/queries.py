"""GraphQL ``Query``: lists, search and context. Resolvers only call selectors and services.

Lists are strawberry-django offset-paginated fields: a resolver returns its selector's queryset,
which strawberry-django scopes (the node type's ``get_queryset``), optimizes and pages (``Page``).
"""

from __future__ import annotations

from datetime import date, datetime

import strawberry
import strawberry_django
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from strawberry.scalars import JSON

from memories import models, search, selectors
from memories.backlog import backlog_get
from memories.graphql.enums import Order
from memories.graphql.fields import mutation
from memories.graphql.inputs import ContextInput, SearchInput
from memories.graphql.permissions import InUserScope, scope_of
from memories.graphql.search_types import ContextType, HitType, SearchResultType, UsageType
from memories.graphql.types import (
    BacklogType,
    DiaryType,
    EntityKindEnum,
    EntityType,
    KnowledgeStatusEnum,
    KnowledgeType,
    MessageType,
    Page,
    PendingSummaryType,
    SessionType,
    SummaryType,
)
from memories.search import SearchFilter
from memories.services.entities import entities_list
from memories.services.user_export import export_document

__all__ = ["Query"]


@strawberry.type
class Query:
    @strawberry_django.offset_paginated(
        Page[MessageType],
        extensions=[InUserScope()],
        description="A user's messages by conversation time (since inclusive, until exclusive); "
        "`order: NEWEST_FIRST, pagination: {limit: N}` gives the last N; `withinSeconds` keeps the recent ones.",
    )
    def history(
        self,
        user_id: str,
        session_id: str | None = None,
        channel: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        within_seconds: int | None = None,
        order: Order = Order.OLDEST_FIRST,
    ) -> QuerySet[models.Message]:
        return selectors.message_list(
            user_external_id=user_id,
            session_external_id=session_id,
            channel=channel,
            since=since,
            until=until,
            within_seconds=within_seconds,
            newest_first=order is Order.NEWEST_FIRST,
        )

    @strawberry_django.offset_paginated(
        Page[SessionType],
        extensions=[InUserScope()],
        description="A user's sessions by first message (`order`), with whether each is summarised; "
        "`withinSeconds` keeps those with a message that recent.",
    )
    def sessions(
        self,
        user_id: str,
        within_seconds: int | None = None,
        order: Order = Order.OLDEST_FIRST,
    ) -> QuerySet[models.Session]:
        return selectors.session_list(
            user_external_id=user_id, within_seconds=within_seconds, newest_first=order is Order.NEWEST_FIRST
        )

    @strawberry.field(
        extensions=[InUserScope()],
        description="How far the worker is behind for a user (or, without userId, for every user: an all-users "
        "key): messages waiting for a vector, sessions waiting for a summary and when each is due, user turns "
        "waiting to be read for facts, and whether all is processed.",
    )
    def backlog(self, user_id: str | None = None, limit: int = 100) -> BacklogType:
        if not 1 <= limit <= settings.MAX_PAGE_SIZE:
            raise ValidationError({"limit": [f"must be between 1 and {settings.MAX_PAGE_SIZE} (MAX_PAGE_SIZE)."]})
        result = backlog_get(user_external_id=user_id, limit=limit)
        return BacklogType(
            messages_waiting_for_vector=result.messages_waiting_for_vector,
            sessions_waiting_for_summary=[
                PendingSummaryType(user_id=p.user_id, session_id=p.session_id, due_at=p.due_at)
                for p in result.sessions_waiting_for_summary
            ],
            messages_waiting_for_facts=result.messages_waiting_for_facts,
            all_processed=result.all_processed,
        )

    @strawberry_django.offset_paginated(
        Page[SummaryType],
        extensions=[InUserScope()],
        description="A user's session summaries, ascending by the time they cover.",
    )
    def summaries(self, user_id: str, session_id: str | None = None) -> QuerySet[models.Summary]:
        return selectors.summary_list(user_external_id=user_id, session_external_id=session_id)

    @strawberry_django.offset_paginated(
        Page[KnowledgeType],
        extensions=[InUserScope()],
        description="A user's knowledge, shared (system-wide) knowledge with `shared: true`, or both; "
        "active facts unless `status` says otherwise (e.g. CANDIDATE: facts awaiting review).",
    )
    def knowledge(
        self,
        user_id: str | None = None,
        shared: bool = False,
        status: KnowledgeStatusEnum = KnowledgeStatusEnum.ACTIVE,
    ) -> QuerySet[models.Knowledge]:
        return selectors.knowledge_list(user_external_id=user_id, shared=shared or user_id is None, status=status.value)

    @strawberry_django.offset_paginated(
        Page[DiaryType],
        extensions=[InUserScope()],
        description="A user's diary entries, newest first: one date, or since..until inclusive.",
    )
    def diaries(
        self,
        user_id: str,
        diary_date: date | None = None,
        since: date | None = None,
        until: date | None = None,
    ) -> QuerySet[models.Diary]:
        return selectors.diary_list(user_external_id=user_id, diary_date=diary_date, since=since, until=until)

    @strawberry_django.offset_paginated(
        Page[EntityType],
        extensions=[InUserScope()],
        description="The people, pets, places and organisations a user talks about (of one `kind`), most recently "
        "mentioned first, with the facts that name them and how many turns mention them.",
    )
    def entities(self, user_id: str, kind: EntityKindEnum | None = None) -> QuerySet[models.Entity]:
        return entities_list(user_external_id=user_id, kind=kind.value if kind else None)

    @strawberry.field(
        extensions=[InUserScope()],
        description="Everything stored of one end user as one JSON document (docs/export.md): sessions, messages, "
        "summaries, knowledge with its history, diaries and entities, without vectors. For a large user, "
        "`manage.py export_user` streams the same document to a file; `manage.py import_user` reads it back.",
    )
    def export_user(self, info: strawberry.Info, user_id: str) -> JSON:
        scope = scope_of(info)
        return export_document(user_external_id=user_id, own_key=None if scope.all_users else scope.actor)

    # Queries declared with strawberry-django's mutation field: it returns bad input as an OperationInfo member.
    @mutation(
        description="Search the memory of one or more end users (messages, summaries, knowledge and diaries "
        "ranked together) and answer the question from the hits.",
    )
    def search(self, input: SearchInput) -> SearchResultType:  # GraphQL convention
        if input.user_id is not None and not input.user_id.strip():
            raise ValidationError({"user_id": ["must not be empty."]})
        user_ids = list(input.user_ids or []) + ([input.user_id] if input.user_id else [])
        sources = tuple(dict.fromkeys(k.value for k in input.sources)) if input.sources is not None else search.SOURCES
        result = search.search(
            user_external_ids=user_ids,
            query=input.query,
            top_k=input.top_k,
            sources=sources,
            answer=input.answer,
            include_shared=input.include_shared,
            search_filter=SearchFilter.local_days(
                since=input.since, until=input.until, utc_offset_hours=input.utc_offset_hours, channel=input.channel
            ),
        )
        answer = result.answer
        cited = set(answer.cited) if answer else set()
        return SearchResultType(
            answer=answer.text if answer else None,
            answer_mode=answer.mode if answer else "none",
            found=answer.found if answer else None,
            retrieved_data=result.retrieved_data if input.include_retrieved_data else None,
            stages=list(sources),
            usage=UsageType.of(result.usage),
            hits=[HitType.of(h, multi_user=result.multi_user, cited=i in cited) for i, h in enumerate(result.hits)],
        )

    @mutation(
        description="The context for a chatbot's next turn in a session: the recent window, the memories "
        "relevant to the query (none of them in the window) and one prompt block.",
    )
    def context(self, input: ContextInput) -> ContextType:  # GraphQL convention
        return ContextType.of(
            search.context(
                user_external_id=input.user_id,
                session_external_id=input.session_id,
                query=input.query,
                window_turns=input.window_turns,
                max_tokens=input.max_tokens,
                include_other_sessions=input.include_other_sessions,
                include_shared=input.include_shared,
            )
        )
