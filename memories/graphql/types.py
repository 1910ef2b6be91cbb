"""GraphQL types. Fields are listed explicitly; raw vectors never appear in the API.

Every model type derives from ``ScopedType``: its rows are filtered by the caller's scope
wherever the type appears.
"""

from __future__ import annotations

from datetime import date, datetime
from enum import Enum
from typing import Generic, TypeVar

import strawberry
import strawberry_django
from django.db.models import QuerySet
from strawberry.scalars import JSON
from strawberry.types import Info
from strawberry_django.optimizer import optimize

from memories import models
from memories.graphql.permissions import ScopedType

__all__ = [
    "AddMessagesResult",
    "DeleteDiaryResult",
    "DeleteHistoryResult",
    "DeleteKnowledgeResult",
    "DeleteSummariesResult",
    "DiaryType",
    "ForgetUserResult",
    "HitKind",
    "HitType",
    "KnowledgeStatusEnum",
    "KnowledgeType",
    "MessageType",
    "Page",
    "QueuedSummariesResult",
    "SearchResultType",
    "SessionType",
    "SummaryType",
    "UsageType",
]

T = TypeVar("T")


@strawberry_django.type(models.Session, name="Session")
class SessionType(ScopedType):
    """A conversation of an end user."""

    id: strawberry.ID
    channel: str
    first_message_at: datetime | None
    last_message_at: datetime | None

    @strawberry_django.field(only=["external_id"], description="The chatbot's session id.")
    def session_id(self, root: models.Session) -> str:
        return root.external_id

    @strawberry_django.field(select_related=["user"], only=["user__external_id"], description="The chatbot's user id.")
    def user_id(self, root: models.Session) -> str:
        return root.user.external_id

    @strawberry_django.field(description="Whether the session has a summary (listed by `sessions`).")
    def has_summary(self, root: models.Session) -> bool | None:
        return getattr(root, "has_summary", None)

    @strawberry_django.field(description="Whether the summary includes the newest message (listed by `sessions`).")
    def summary_is_current(self, root: models.Session) -> bool | None:
        return getattr(root, "summary_is_current", None)


@strawberry_django.type(models.Message, name="Message")
class MessageType(ScopedType):
    """A stored message. ``createdAt`` is when it was said (conversation time)."""

    id: strawberry.ID
    role: str
    content: str
    channel: str
    metadata: JSON
    created_at: datetime

    @strawberry_django.field(select_related=["session"], only=["session__external_id"])
    def session_id(self, root: models.Message) -> str:
        return root.session.external_id

    @strawberry_django.field(only=["external_id"], description="The client's own id for the message, if it sent one.")
    def external_id(self, root: models.Message) -> str | None:
        return root.external_id or None


@strawberry_django.type(models.Summary, name="Summary")
class SummaryType(ScopedType):
    """The summary of a session, up to its newest message when written."""

    id: strawberry.ID
    content: str
    mode: str
    covers_from: datetime
    covers_until: datetime
    message_count: int
    updated_at: datetime

    @strawberry_django.field(select_related=["session"], only=["session__external_id"])
    def session_id(self, root: models.Summary) -> str:
        return root.session.external_id


@strawberry.enum(name="KnowledgeStatus")
class KnowledgeStatusEnum(Enum):
    ACTIVE = "active"
    CANDIDATE = "candidate"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"


@strawberry_django.type(models.Knowledge, name="Knowledge")
class KnowledgeType(ScopedType):
    """A curated fact; ``userId`` is null for shared (system-wide) knowledge."""

    shared_readable = True

    id: strawberry.ID
    content: str
    created_at: datetime
    updated_at: datetime

    @strawberry_django.field(
        only=["status"], description="active (searched), candidate (awaiting review), rejected or superseded."
    )
    def status(self, root: models.Knowledge) -> KnowledgeStatusEnum:
        return KnowledgeStatusEnum(root.status)

    @strawberry_django.field(
        select_related=["source_session"],
        only=["source_session__external_id"],
        description="For a fact raised from a conversation: the session it came from.",
    )
    def source_session_id(self, root: models.Knowledge) -> str | None:
        return root.source_session.external_id if root.source_session_id else None

    @strawberry_django.field(select_related=["user"], only=["user__external_id"])
    def user_id(self, root: models.Knowledge) -> str | None:
        return root.user.external_id if root.user_id else None

    @strawberry_django.field(
        only=["embedding_model"], description="Whether the current text is embedded by the configured model."
    )
    def embedding_is_current(self, root: models.Knowledge) -> bool:
        from django.conf import settings

        return root.embedding_model == settings.EMBEDDING_MODEL


@strawberry_django.type(models.Diary, name="Diary")
class DiaryType(ScopedType):
    """One diary entry of an end user for one date."""

    id: strawberry.ID
    diary_date: date
    content: str
    metadata: JSON
    created_at: datetime
    updated_at: datetime

    @strawberry_django.field(select_related=["user"], only=["user__external_id"])
    def user_id(self, root: models.Diary) -> str:
        return root.user.external_id


@strawberry.type(description="A page of a list: `items` from `offset`, at most `limit` of them.")
class Page(Generic[T]):
    limit: int
    offset: int
    queryset: strawberry.Private[QuerySet]
    node_type: strawberry.Private[type]

    @strawberry.field(description="The rows of this page.")
    def items(self, info: Info) -> list[T]:
        return self._rows(info)[: self.limit]

    @strawberry.field(description="Whether rows follow this page.")
    def has_next_page(self, info: Info) -> bool:
        return len(self._rows(info)) > self.limit

    @strawberry.field(description="How many rows the whole list has (one extra count query).")
    def total_count(self, info: Info) -> int:
        return self.node_type.get_queryset(self.queryset, info).count()

    def _rows(self, info: Info) -> list:
        # One query for the page and one more row, to tell whether another page follows.
        if not hasattr(self, "_cache"):
            scoped = optimize(self.node_type.get_queryset(self.queryset, info), info)
            self._cache = list(scoped[self.offset : self.offset + self.limit + 1])
        return self._cache


@strawberry.type
class AddMessagesResult:
    """What ``addMessages`` stored. Embedding and summarising happen later in the worker."""

    session: SessionType
    messages: list[MessageType]
    skipped: int = strawberry.field(description="Messages not stored because their externalId was already there.")


@strawberry.type
class DeleteHistoryResult:
    """What ``deleteHistory`` removed; sessions that kept messages are summarised again."""

    deleted_messages: int
    deleted_sessions: int
    deleted_summaries: int
    resummarized_session_ids: list[str]


@strawberry.type
class QueuedSummariesResult:
    """The sessions whose summaries were queued."""

    queued_session_ids: list[str]


@strawberry.type
class DeleteSummariesResult:
    deleted_summaries: int


@strawberry.type
class DeleteKnowledgeResult:
    deleted_id: strawberry.ID


@strawberry.type
class DeleteDiaryResult:
    deleted: bool


@strawberry.type
class ForgetUserResult:
    """How many rows of each kind were removed."""

    messages: int
    sessions: int
    summaries: int
    knowledge: int
    diaries: int


@strawberry.enum
class HitKind(Enum):
    SUMMARY = "summary"
    KNOWLEDGE = "knowledge"
    DIARY = "diary"
    MESSAGE = "message"


@strawberry.type(name="Hit")
class HitType:
    """One retrieved row. ``score`` is cosine similarity to the query (higher is closer); null for a
    message found by its words only (not embedded yet)."""

    kind: HitKind
    id: strawberry.ID
    score: float | None
    content: str
    user_id: str
    conversation_time: datetime | None
    session_id: str | None


@strawberry.type(name="Usage")
class UsageType:
    """Tokens used, where the backend reports them."""

    prompt_tokens: int | None
    completion_tokens: int | None
    embedding_tokens: int | None


@strawberry.type(name="SearchResult")
class SearchResultType:
    """The answer and what it was drawn from.

    ``answerMode`` is ``generated`` (an LLM wrote it) or ``extractive`` (sentences copied
    from the retrieved data; no LLM configured), or ``none`` when the search was asked for
    retrieval only (``answer: false``). ``stages`` lists the stages that ran:
    ``memory`` (summaries, knowledge, diaries) and ``messages`` (raw messages).
    """

    answer: str | None
    answer_mode: str
    retrieved_data: str | None
    hits: list[HitType]
    stages: list[str]
    usage: UsageType
