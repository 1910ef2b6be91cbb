"""The GraphQL schema: ``Query`` and ``Mutation``. Resolvers only call selectors and services.

Who may act on which end user is checked once, for every field, by ``UserScopeExtension``
(``memories.graphql.permissions``); model types filter their rows by the same scope.
"""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache

import strawberry
import strawberry_django
from django.conf import settings
from django.core.exceptions import ValidationError
from strawberry.extensions import (
    AddValidationRules,
    MaxAliasesLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry.scalars import JSON
from strawberry_django.optimizer import DjangoOptimizerExtension

from memories import search, selectors
from memories.backlog import backlog_get
from memories.graphql.enums import Order
from memories.graphql.errors import StableErrors
from memories.graphql.inputs import ContextInput, MessageInput, SearchInput
from memories.graphql.permissions import UserScopeExtension, scope_of
from memories.graphql.search_types import ContextType, HitType, SearchResultType, UsageType
from memories.graphql.types import (
    AddMessagesResult,
    BacklogType,
    DeleteAllResult,
    DeleteDiaryResult,
    DeleteHistoryResult,
    DeleteKnowledgeResult,
    DeleteSummariesResult,
    DiaryType,
    EntityKindEnum,
    EntityType,
    ForgetUserResult,
    KnowledgeStatusEnum,
    KnowledgeType,
    MessageType,
    Page,
    PendingSummaryType,
    QueuedSummariesResult,
    SessionType,
    SummaryType,
)
from memories.metrics import MetricsExtension
from memories.search import SearchFilter
from memories.services.diaries import diaries_delete_all, diary_delete, diary_upsert
from memories.services.entities import entities_list
from memories.services.history import history_delete, user_forget
from memories.services.knowledge import (
    knowledge_add,
    knowledge_delete,
    knowledge_delete_all,
    knowledge_review,
    knowledge_update,
)
from memories.services.messages import MessageIn, messages_add
from memories.services.summaries import summaries_delete, summaries_request

__all__ = ["schema"]

DEFAULT_PAGE_SIZE = 100


def _page(queryset, node_type: type, *, limit: int | None, offset: int) -> Page:  # noqa: ANN001
    """A ``Page`` of ``queryset``; out-of-range ``limit``/``offset`` are refused, not clamped.

    Without a ``limit``, pages hold ``DEFAULT_PAGE_SIZE`` rows (at most ``MAX_PAGE_SIZE``).
    """
    limit = min(DEFAULT_PAGE_SIZE, settings.MAX_PAGE_SIZE) if limit is None else limit
    errors: dict[str, list[str]] = {}
    if not 1 <= limit <= settings.MAX_PAGE_SIZE:
        errors["limit"] = [f"limit must be between 1 and {settings.MAX_PAGE_SIZE} (MAX_PAGE_SIZE)."]
    if offset < 0:
        errors["offset"] = ["offset must not be negative."]
    if errors:
        raise ValidationError(errors)
    return Page(limit=limit, offset=offset, queryset=queryset, node_type=node_type)


def _knowledge_id(value: strawberry.ID) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError({"id": [f"{value!r} is not a knowledge id."]}) from None


@strawberry.type
class Query:
    @strawberry.field(
        description="A user's messages by conversation time (since inclusive, until exclusive); "
        "`order: NEWEST_FIRST, limit: N` gives the last N; `withinSeconds` keeps the recent ones."
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
        limit: int | None = None,
        offset: int = 0,
    ) -> Page[MessageType]:
        queryset = selectors.message_list(
            user_external_id=user_id,
            session_external_id=session_id,
            channel=channel,
            since=since,
            until=until,
            within_seconds=within_seconds,
            newest_first=order is Order.NEWEST_FIRST,
        )
        return _page(queryset, MessageType, limit=limit, offset=offset)

    @strawberry.field(
        description="A user's sessions by first message (`order`), with whether each is summarised; "
        "`withinSeconds` keeps those with a message that recent."
    )
    def sessions(
        self,
        user_id: str,
        within_seconds: int | None = None,
        order: Order = Order.OLDEST_FIRST,
        limit: int | None = None,
        offset: int = 0,
    ) -> Page[SessionType]:
        queryset = selectors.session_list(
            user_external_id=user_id, within_seconds=within_seconds, newest_first=order is Order.NEWEST_FIRST
        )
        return _page(queryset, SessionType, limit=limit, offset=offset)

    @strawberry.field(
        description="How far the worker is behind for a user (or, without userId, for every user: an all-users "
        "key): messages waiting for a vector, sessions waiting for a summary and when each is due."
    )
    def backlog(self, user_id: str | None = None, limit: int = 100) -> BacklogType:
        if not 1 <= limit <= settings.MAX_PAGE_SIZE:
            raise ValidationError({"limit": [f"limit must be between 1 and {settings.MAX_PAGE_SIZE} (MAX_PAGE_SIZE)."]})
        result = backlog_get(user_external_id=user_id, limit=limit)
        return BacklogType(
            messages_waiting_for_vector=result.messages_waiting_for_vector,
            sessions_waiting_for_summary=[
                PendingSummaryType(user_id=p.user_id, session_id=p.session_id, due_at=p.due_at)
                for p in result.sessions_waiting_for_summary
            ],
        )

    @strawberry.field(description="A user's session summaries, ascending by the time they cover.")
    def summaries(
        self, user_id: str, session_id: str | None = None, limit: int | None = None, offset: int = 0
    ) -> Page[SummaryType]:
        queryset = selectors.summary_list(user_external_id=user_id, session_external_id=session_id)
        return _page(queryset, SummaryType, limit=limit, offset=offset)

    @strawberry.field(
        description="A user's knowledge, shared (system-wide) knowledge with `shared: true`, or both; "
        "active facts unless `status` says otherwise (e.g. CANDIDATE: facts awaiting review)."
    )
    def knowledge(
        self,
        user_id: str | None = None,
        shared: bool = False,
        status: KnowledgeStatusEnum = KnowledgeStatusEnum.ACTIVE,
        limit: int | None = None,
        offset: int = 0,
    ) -> Page[KnowledgeType]:
        queryset = selectors.knowledge_list(user_external_id=user_id, shared=shared or not user_id, status=status.value)
        return _page(queryset, KnowledgeType, limit=limit, offset=offset)

    @strawberry.field(description="A user's diary entries, newest first: one date, or since..until inclusive.")
    def diaries(
        self,
        user_id: str,
        diary_date: date | None = None,
        since: date | None = None,
        until: date | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> Page[DiaryType]:
        queryset = selectors.diary_list(user_external_id=user_id, diary_date=diary_date, since=since, until=until)
        return _page(queryset, DiaryType, limit=limit, offset=offset)

    @strawberry.field(
        description="The people, pets, places and organisations a user talks about (of one `kind`), most recently "
        "mentioned first, with the facts that name them and how many turns mention them."
    )
    def entities(
        self, user_id: str, kind: EntityKindEnum | None = None, limit: int | None = None, offset: int = 0
    ) -> Page[EntityType]:
        queryset = entities_list(user_external_id=user_id, kind=kind.value if kind else None)
        return _page(queryset, EntityType, limit=limit, offset=offset)

    @strawberry_django.mutation(
        description="Search the memory of one or more end users (messages, summaries, knowledge and diaries "
        "ranked together) and answer the question from the hits.",
    )
    def search(self, input: SearchInput) -> SearchResultType:  # noqa: A002 - GraphQL convention
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
            usage=UsageType(
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
                embedding_tokens=result.usage.embedding_tokens,
            ),
            hits=[HitType.of(h, multi_user=result.multi_user, cited=i in cited) for i, h in enumerate(result.hits)],
        )

    @strawberry_django.mutation(
        description="The context for a chatbot's next turn in a session: the recent window, the memories "
        "relevant to the query (none of them in the window) and one prompt block.",
    )
    def context(self, input: ContextInput) -> ContextType:  # noqa: A002 - GraphQL convention
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


@strawberry.type
class Mutation:
    @strawberry_django.mutation(
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

    @strawberry_django.mutation(
        description="Delete a user's messages (all, one session's or one channel's) and the summaries built on them.",
    )
    def delete_history(
        self, user_id: str, session_id: str | None = None, channel: str | None = None
    ) -> DeleteHistoryResult:
        deleted = history_delete(user_external_id=user_id, session_external_id=session_id, channel=channel)
        return DeleteHistoryResult(
            deleted_messages=deleted.messages,
            deleted_sessions=deleted.sessions,
            deleted_summaries=deleted.summaries,
            resummarized_session_ids=deleted.resummarized_session_ids,
        )

    @strawberry_django.mutation(
        description="Summarise now (not when idle) a user's sessions lacking a current summary (all of them with "
        "`overwrite`; at most `maxCount`, the most recently active first).",
    )
    def create_summaries(
        self, user_id: str, session_id: str | None = None, overwrite: bool = False, max_count: int | None = None
    ) -> QueuedSummariesResult:
        queued = summaries_request(
            user_external_id=user_id, session_external_id=session_id, overwrite=overwrite, max_count=max_count
        )
        return QueuedSummariesResult(queued_session_ids=queued)

    @strawberry_django.mutation(
        description=(
            "Delete a user's summaries (all or one session's). Summaries are derived from messages: the "
            "sweep writes a deleted one again once its session is idle; deleteHistory removes the words for good."
        ),
    )
    def delete_summaries(self, user_id: str, session_id: str | None = None) -> DeleteSummariesResult:
        return DeleteSummariesResult(
            deleted_summaries=summaries_delete(user_external_id=user_id, session_external_id=session_id)
        )

    @strawberry_django.mutation(
        description="Add a fact for a user, or shared (system-wide) knowledge when userId is omitted.",
    )
    def add_knowledge(self, content: str, user_id: str | None = None) -> KnowledgeType:
        return knowledge_add(user_external_id=user_id, content=content)  # type: ignore[return-value]

    @strawberry_django.mutation(
        description="Change a fact's text (it is embedded again). Omit userId for shared. "
        "A candidate's text needs an API key that may curate."
    )
    def update_knowledge(
        self,
        info: strawberry.Info,
        id: strawberry.ID,  # noqa: A002
        content: str,
        user_id: str | None = None,
    ) -> KnowledgeType:
        return knowledge_update(  # type: ignore[return-value]
            knowledge_id=_knowledge_id(id),
            user_external_id=user_id,
            content=content,
            candidates=scope_of(info).may_curate,
        )

    @strawberry_django.mutation(
        description="Approve a user's fact candidate: it becomes active (or superseded, when its slot holds a "
        "fact said later). Needs an API key that may curate."
    )
    def approve_knowledge(self, id: strawberry.ID, user_id: str) -> KnowledgeType:  # noqa: A002
        return knowledge_review(knowledge_id=_knowledge_id(id), user_external_id=user_id, approve=True)  # type: ignore[return-value]

    @strawberry_django.mutation(
        description="Reject a user's fact candidate: kept for the record, never searched. "
        "Needs an API key that may curate."
    )
    def reject_knowledge(self, id: strawberry.ID, user_id: str) -> KnowledgeType:  # noqa: A002
        return knowledge_review(knowledge_id=_knowledge_id(id), user_external_id=user_id, approve=False)  # type: ignore[return-value]

    @strawberry_django.mutation(description="Delete a fact. Omit userId for shared.")
    def delete_knowledge(self, id: strawberry.ID, user_id: str | None = None) -> DeleteKnowledgeResult:  # noqa: A002
        deleted = knowledge_delete(knowledge_id=_knowledge_id(id), user_external_id=user_id)
        return DeleteKnowledgeResult(deleted_id=strawberry.ID(str(deleted)))

    @strawberry_django.mutation(description="Delete every fact of a user.")
    def delete_all_knowledge(self, user_id: str) -> DeleteAllResult:
        return DeleteAllResult(deleted=knowledge_delete_all(user_external_id=user_id))

    @strawberry_django.mutation(description="Delete every diary entry of a user.")
    def delete_all_diaries(self, user_id: str) -> DeleteAllResult:
        return DeleteAllResult(deleted=diaries_delete_all(user_external_id=user_id))

    @strawberry_django.mutation(description="Create or replace a user's diary entry for a date.")
    def upsert_diary(self, user_id: str, diary_date: date, content: str, metadata: JSON | None = None) -> DiaryType:
        return diary_upsert(  # type: ignore[return-value]
            user_external_id=user_id, diary_date=diary_date, content=content, metadata=metadata
        )

    @strawberry_django.mutation(description="Delete a user's diary entry for a date.")
    def delete_diary(self, user_id: str, diary_date: date) -> DeleteDiaryResult:
        return DeleteDiaryResult(deleted=diary_delete(user_external_id=user_id, diary_date=diary_date))

    @strawberry_django.mutation(
        description="Remove every row of a user (messages, sessions, summaries, knowledge, diaries) at once.",
    )
    def forget_user(self, user_id: str) -> ForgetUserResult:
        forgotten = user_forget(user_external_id=user_id)
        return ForgetUserResult(
            messages=forgotten.messages,
            sessions=forgotten.sessions,
            summaries=forgotten.summaries,
            knowledge=forgotten.knowledge,
            diaries=forgotten.diaries,
        )


@lru_cache(maxsize=8)
def _limit_rules(max_depth: int, max_aliases: int) -> list:
    """The depth and alias limits' validation rules, made once per pair of limits.

    Each limiter makes a new rule class; made per request, they would never match the
    validation cache's key (the document and its rules).
    """
    return [
        *QueryDepthLimiter(max_depth=max_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=max_aliases).validation_rules,
    ]


# A frontend sends the same few documents again and again: parse and validate each once.
# The caches are bounded LRU caches (Strawberry's ParserCache and
# ValidationCache), so distinct documents cannot grow memory without limit.
DOCUMENT_CACHE_SIZE = 256

schema = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    extensions=[
        DjangoOptimizerExtension,
        lambda: AddValidationRules(_limit_rules(settings.MAX_QUERY_DEPTH, settings.MAX_ALIASES)),
        lambda: ParserCache(maxsize=DOCUMENT_CACHE_SIZE),
        lambda: ValidationCache(maxsize=DOCUMENT_CACHE_SIZE),
        UserScopeExtension,
        StableErrors,
        MetricsExtension,
    ],
)
