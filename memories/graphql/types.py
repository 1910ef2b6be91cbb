"""GraphQL types. Fields are listed explicitly; raw vectors never appear in the API."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry
import strawberry_django
from strawberry.scalars import JSON

from memories import models

__all__ = [
    "AddMessagesResult",
    "HitKind",
    "HitType",
    "MessageType",
    "SearchResultType",
    "SessionType",
    "SummaryType",
    "UsageType",
]


@strawberry_django.type(models.Session, name="Session")
class SessionType:
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


@strawberry_django.type(models.Message, name="Message")
class MessageType:
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
class SummaryType:
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


@strawberry.type
class AddMessagesResult:
    """What ``addMessages`` stored. Embedding and summarising happen later in the worker."""

    session: SessionType
    messages: list[MessageType]
    skipped: int = strawberry.field(description="Messages not stored because their externalId was already there.")


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
    from the retrieved data; no LLM configured).
    """

    answer: str | None
    answer_mode: str
    retrieved_data: str | None
    hits: list[HitType]
    stages: list[str]
    usage: UsageType
