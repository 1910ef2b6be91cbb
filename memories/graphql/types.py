"""GraphQL types. Fields are listed explicitly; raw vectors never appear in the API.

Every model type derives from ``ScopedType``: its rows are filtered by the caller's scope
wherever the type appears.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Generic, TypeVar

import strawberry
import strawberry_django
from django.db.models import QuerySet
from strawberry.scalars import JSON
from strawberry.types import Info
from strawberry_django.optimizer import optimize

from memories import models, search, selectors
from memories.graphql.enums import HitKind
from memories.graphql.permissions import ScopedType

__all__ = [
    "AddMessagesResult",
    "DeleteDiaryResult",
    "DeleteHistoryResult",
    "DeleteKnowledgeResult",
    "DeleteSummariesResult",
    "DiaryType",
    "ForgetUserResult",
    "ContextType",
    "DeleteAllResult",
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
    "TokenCountsType",
    "TurnType",
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
    ) -> ContextType:
        return ContextType.of(
            search.context(
                user_external_id=self.session.user.external_id,
                session_external_id=self.session.external_id,
                window_turns=window_turns,
                max_tokens=max_tokens,
                include_other_sessions=include_other_sessions,
                include_shared=include_shared,
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


@strawberry.type(name="Turn", description="A message shown with a hit or in a context's recent window.")
class TurnType:
    id: strawberry.ID
    role: str
    speaker: str = strawberry.field(description="The speaker's name from the message's metadata, else its role.")
    content: str
    created_at: datetime
    is_hit: bool = strawberry.field(description="Whether this turn is the hit itself (not a neighbouring turn).")

    @classmethod
    def of(cls, turn: search.Turn) -> TurnType:
        return cls(
            id=strawberry.ID(str(turn.id)),
            role=turn.role,
            speaker=turn.speaker,
            content=turn.content,
            created_at=turn.created_at,
            is_hit=turn.is_hit,
        )


@strawberry.type(name="Hit")
class HitType:
    """One retrieved row of any kind, best first. ``score`` is cosine similarity to the query (higher is
    closer; null for a message not embedded yet); ``relevance`` is the fused score that orders the hits."""

    kind: HitKind
    id: strawberry.ID
    score: float | None
    relevance: float
    content: str
    user_id: str
    conversation_time: datetime | None
    session_id: str | None
    speaker: str | None = strawberry.field(description="For a message: its speaker.")
    turns: list[TurnType] = strawberry.field(
        description="For a message: the turns just before and after it, and itself, in order."
    )
    text: str = strawberry.field(description="The hit as a labelled, timestamped text block.")
    cited: bool = strawberry.field(description="Whether the answer rests on this hit.")

    @classmethod
    def of(cls, hit: search.Hit, *, multi_user: bool = False, cited: bool = False) -> HitType:
        return cls(
            kind=HitKind(hit.kind),
            id=strawberry.ID(str(hit.id)),
            score=hit.score,
            relevance=hit.relevance,
            content=hit.content,
            user_id=hit.user_id,
            conversation_time=hit.conversation_time,
            session_id=hit.session_id,
            speaker=hit.speaker,
            turns=[TurnType.of(t) for t in hit.turns],
            text=hit.block(multi_user=multi_user),
            cited=cited,
        )


@strawberry.type(name="Usage")
class UsageType:
    """Tokens used, where the backend reports them."""

    prompt_tokens: int | None
    completion_tokens: int | None
    embedding_tokens: int | None


@strawberry.type(name="SearchResult")
class SearchResultType:
    """The answer and the hits it was drawn from.

    ``answerMode`` is ``generated`` (an LLM wrote it, citing hits), ``extractive`` (the
    supporting turns quoted with speaker and date; no LLM configured), or ``none`` when the
    search was asked for retrieval only (``answer: false``). ``found`` is false when no hit is
    relevant enough (``SEARCH_MIN_SIMILARITY``): the answer then says so.
    """

    answer: str | None
    answer_mode: str
    found: bool | None
    retrieved_data: str | None
    hits: list[HitType]
    stages: list[str] = strawberry.field(deprecation_reason="All sources are ranked together; see `Hit.kind`.")
    usage: UsageType


@strawberry.type(name="TokenCounts", description="Token counts of a context, by the tokenizer it names.")
class TokenCountsType:
    window: int
    memories: int
    prompt: int
    tokenizer: str


@strawberry.type(name="Context")
class ContextType:
    """What a chatbot needs for its next turn: the recent window, relevant memories and one prompt block.

    ``memories`` never repeat a turn of ``window`` nor the query message; none are returned when
    nothing is relevant (``SEARCH_MIN_SIMILARITY``).
    """

    query: str | None
    window: list[TurnType]
    memories: list[HitType]
    prompt: str = strawberry.field(description="Paste into the system prompt: labelled, dated sections.")
    tokens: TokenCountsType

    @classmethod
    def of(cls, result: search.Context) -> ContextType:
        return cls(
            query=result.query,
            window=[TurnType.of(t) for t in result.window],
            memories=[HitType.of(h) for h in result.memories],
            prompt=result.prompt,
            tokens=TokenCountsType(tokenizer=result.tokenizer, **result.tokens),
        )
