"""GraphQL types. Fields are listed explicitly; raw vectors never appear in the API.

Every model type derives from ``ScopedType``: its rows are filtered by the caller's scope
wherever the type appears.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import strawberry
import strawberry_django
from django.conf import settings
from django.db.models import Count, QuerySet
from strawberry.scalars import JSON
from strawberry.types import Info
from strawberry.types.unset import UNSET
from strawberry_django.pagination import NodeType, OffsetPaginated, OffsetPaginationInput

from memories import models, search, selectors
from memories.graphql.errors import ApiValidationError
from memories.graphql.permissions import ScopedType
from memories.graphql.search_types import ContextType

__all__ = [
    "AddMessagesResult",
    "BacklogType",
    "DeleteDiaryResult",
    "DeleteHistoryResult",
    "DeleteKnowledgeResult",
    "DeleteSummariesResult",
    "DiaryType",
    "EntityKindEnum",
    "EntityType",
    "ForgetUserResult",
    "DeleteAllResult",
    "KnowledgeStatusEnum",
    "KnowledgeType",
    "MessageType",
    "Page",
    "page_checked",
    "QueuedSummariesResult",
    "SessionType",
    "SummaryType",
    "UserTokenType",
]


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

    @strawberry_django.field(
        annotate={"has_summary": selectors.session_has_summary()}, description="Whether the session has a summary."
    )
    def has_summary(self, root: models.Session) -> bool:
        # Annotated by the optimizer in lists; a session returned by a mutation is looked up.
        if not hasattr(root, "has_summary"):
            return models.Summary.objects.filter(session=root).exists()
        return root.has_summary

    @strawberry_django.field(
        annotate={"summary_is_current": selectors.session_summary_is_current()},
        description="Whether the summary includes the newest message.",
    )
    def summary_is_current(self, root: models.Session) -> bool:
        if not hasattr(root, "summary_is_current"):
            current = models.Session.objects.filter(pk=root.pk).annotate(current=selectors.session_summary_is_current())
            return bool(current.values_list("current", flat=True).first())
        return root.summary_is_current


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


# The model's choices, as a GraphQL enum (CANDIDATE, ACTIVE, REJECTED, SUPERSEDED).
KnowledgeStatusEnum = strawberry.enum(models.KnowledgeStatus, name="KnowledgeStatus")


@strawberry_django.type(models.Knowledge, name="Knowledge")
class KnowledgeType(ScopedType):
    """A curated fact; ``userId`` is null for shared (system-wide) knowledge."""

    shared_readable = True

    id: strawberry.ID
    content: str
    created_at: datetime
    updated_at: datetime
    reviewed: bool = strawberry_django.field(
        description="Whether a person approved, added or edited it; a fact raised from a conversation is used "
        "at once and is not, until reviewed (see the admin's review queue)."
    )
    said_at: datetime | None = strawberry_django.field(
        description="For a fact raised from a conversation: when it was said (its latest source turn)."
    )

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
        return root.embedding_model == settings.EMBEDDING_MODEL

    entities: list[EntityType] = strawberry_django.field(
        description="The people, pets, places and organisations the fact names."
    )


# The model's choices, as a GraphQL enum (PERSON, PET, PLACE, ORGANISATION, OTHER).
EntityKindEnum = strawberry.enum(models.EntityKind, name="EntityKind")


@strawberry_django.type(models.Entity, name="Entity")
class EntityType(ScopedType):
    """Someone or something an end user talks about, with the facts and turns that mention it."""

    id: strawberry.ID
    name: str
    first_mentioned_at: datetime = strawberry_django.field(description="Conversation time of the first mention.")
    last_mentioned_at: datetime = strawberry_django.field(description="Conversation time of the latest mention.")
    facts: list[KnowledgeType] = strawberry_django.field(
        field_name="knowledge", description="The facts that name it, in any status."
    )

    @strawberry_django.field(only=["kind"])
    def kind(self, root: models.Entity) -> EntityKindEnum:
        return EntityKindEnum(root.kind)

    @strawberry_django.field(only=["aliases"], description="Other names it goes by.")
    def aliases(self, root: models.Entity) -> list[str]:
        return [str(alias) for alias in root.aliases]

    @strawberry_django.field(select_related=["user"], only=["user__external_id"])
    def user_id(self, root: models.Entity) -> str:
        return root.user.external_id

    @strawberry_django.field(
        annotate={"mention_count": Count("messages", distinct=True)},
        description="How many of the user's turns mention it.",
    )
    def mentions(self, root: models.Entity) -> int:
        if not hasattr(root, "mention_count"):
            return root.messages.count()
        return root.mention_count


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


# Rows in a page when the caller sends no limit (at most MAX_PAGE_SIZE).
DEFAULT_PAGE_SIZE = 100


def page_checked(pagination: OffsetPaginationInput | None) -> OffsetPaginationInput:
    """``pagination`` with its limit filled in (``DEFAULT_PAGE_SIZE``, at most ``MAX_PAGE_SIZE``).

    Raises:
        ValidationError: on ``pagination``, for a limit outside 1..``MAX_PAGE_SIZE`` or a negative
            offset; an out-of-range page is refused, never cut.
    """
    pagination = pagination or OffsetPaginationInput()
    limit = pagination.limit
    if limit is UNSET or limit is None:
        limit = min(DEFAULT_PAGE_SIZE, settings.MAX_PAGE_SIZE)
    problems = []
    if not 1 <= limit <= settings.MAX_PAGE_SIZE:
        problems.append(f"limit must be between 1 and {settings.MAX_PAGE_SIZE} (MAX_PAGE_SIZE).")
    if pagination.offset < 0:
        problems.append("offset must not be negative.")
    if problems:
        raise ApiValidationError({"pagination": problems})
    return OffsetPaginationInput(offset=pagination.offset, limit=limit)


# Subclassed with the base's own TypeVar: strawberry maps the generic's fields by the TypeVar's name.
@strawberry.type(description="A page of a list: up to `pageInfo.limit` results from `pageInfo.offset`.")
class Page(OffsetPaginated[NodeType]):
    """strawberry-django's ``OffsetPaginated`` that refuses an out-of-range page (``page_checked``).

    The queryset it gets is already scoped by the node type's ``get_queryset`` and optimized.
    """

    @classmethod
    def resolve_paginated(
        cls, queryset: QuerySet, *, info: Info, pagination: OffsetPaginationInput | None = None, **kwargs: Any
    ) -> Page:
        return super().resolve_paginated(queryset, info=info, pagination=page_checked(pagination), **kwargs)


@strawberry.type
class AddMessagesResult:
    """What ``addMessages`` stored. Embedding and summarising happen later in the worker."""

    session: SessionType
    messages: list[MessageType]
    skipped: int = strawberry.field(description="Messages not stored because their externalId was already there.")

    @strawberry.field(
        description="The context for the bot's reply: what `context` returns for this session, its query the "
        "newest user message just stored (saves a request per chatbot turn)."
    )
    def context(
        self,
        window_turns: int | None = None,
        max_tokens: int | None = None,
        include_other_sessions: bool = True,
        include_shared: bool = False,
    ) -> ContextType | None:
        # Nullable: if the context fails (bad arguments, the model down), the stored messages are still reported.
        asked = [m for m in self.messages if m.role == models.Role.USER]
        newest = max(asked, key=lambda m: (m.created_at, m.pk), default=None)
        return ContextType.of(
            search.context(
                user_external_id=self.session.user.external_id,
                session_external_id=self.session.external_id,
                window_turns=window_turns,
                max_tokens=max_tokens,
                include_other_sessions=include_other_sessions,
                include_shared=include_shared,
                query_message_id=newest.pk if newest else None,
                exclude_message_ids={m.pk for m in self.messages},
            )
        )


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
class DeleteAllResult:
    deleted: int


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


@strawberry.type(name="PendingSummary", description="A session whose summary is missing or behind, and when it is due.")
class PendingSummaryType:
    user_id: str
    session_id: str
    due_at: datetime = strawberry.field(
        description="When it is written: SUMMARY_IDLE_MINUTES after the last message, or when createSummaries "
        "asked for it."
    )


@strawberry.type(name="Backlog", description="What the background worker has still to do.")
class BacklogType:
    messages_waiting_for_vector: int = strawberry.field(description="Messages not yet embedded (not ranked by vector).")
    sessions_waiting_for_summary: list[PendingSummaryType] = strawberry.field(description="Soonest due first.")
    messages_waiting_for_facts: int = strawberry.field(
        description="User turns not yet read for facts (a session's facts are raised once it is summarised)."
    )
    all_processed: bool = strawberry.field(
        description="Whether nothing waits: every message embedded, every session summarised, every user turn "
        "read for facts."
    )


@strawberry.type(name="UserToken", description="A short-lived credential for one end user, for a browser.")
class UserTokenType:
    token: str = strawberry.field(description="Send it as `Authorization: Bearer <token>`; it acts on userId only.")
    user_id: str
    expires_at: datetime = strawberry.field(description="After this it is refused (UNAUTHENTICATED).")
