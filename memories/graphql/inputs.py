"""GraphQL inputs."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types.arguments import InputContext

from memories.graphql.enums import HitKind

__all__ = ["ContextInput", "MessageInput", "SearchInput"]


@strawberry.input
class MessageInput:
    """A message to store. ``createdAt`` is when it was said (ISO 8601 with offset; now if omitted)."""

    role: str = strawberry.field(description="user, assistant or system.")
    content: str
    created_at: datetime | None = None
    metadata: JSON | None = None
    external_id: str | None = strawberry.field(
        default=None, description="Your id for this message: re-sending it does not store it twice."
    )


def _message_input(cls: type[MessageInput], value: Mapping[str, Any], context: InputContext) -> MessageInput:
    """Strawberry's documented ``StrawberryObjectDefinition.from_input`` hook for ``MessageInput``.

    graphql-core has already checked and parsed every field (the scalars are leaves, so Strawberry
    would pass them on unchanged); building the object directly skips its field-by-field
    conversion of every message of a large addMessages call. Every field is
    present: graphql-core fills in the published defaults. ``@strawberry.input`` takes no hook, so
    it is set on the definition below; ``tests/graphql/test_messages.py`` fails if Strawberry stops
    calling it.
    """
    return cls(
        role=value["role"],
        content=value["content"],
        created_at=value["createdAt"],
        metadata=value["metadata"],
        external_id=value["externalId"],
    )


MessageInput.__strawberry_definition__.from_input = _message_input


@strawberry.input
class SearchInput:
    """A question about one or more end users."""

    query: str
    user_id: str | None = strawberry.field(default=None, description="One end user (or use userIds).")
    user_ids: list[str] | None = strawberry.field(default=None, description="Several end users.")
    top_k: int | None = strawberry.field(
        default=None, description="Hits returned (default SEARCH_DEFAULT_TOP_K, 10; at most SEARCH_MAX_TOP_K)."
    )
    sources: list[HitKind] | None = strawberry.field(
        default=None,
        description="Kinds searched, ranked together (default: all of MESSAGE, SUMMARY, KNOWLEDGE, DIARY).",
    )
    search_content: bool = strawberry.field(
        default=False,
        deprecation_reason="Messages are always searched; narrow with `sources`. Ignored; removed in the next release.",
    )
    include_retrieved_data: bool = strawberry.field(
        default=False, description="Return the hits as the labelled text blocks an answer model reads."
    )
    answer: bool = strawberry.field(default=True, description="false: retrieve only, no answer (answerMode none).")
    include_shared: bool = strawberry.field(default=False, description="Also search system-wide knowledge.")
    channel: str | None = strawberry.field(default=None, description="Only what was said in this channel.")
    since: date | None = strawberry.field(
        default=None, description="Only what was said from 00:00 local time on this day (conversation time)."
    )
    until: date | None = strawberry.field(
        default=None, description="Only what was said before the midnight after this day (local time)."
    )
    utc_offset_hours: float = strawberry.field(
        default=0, description="The local time zone of since/until as hours from UTC (e.g. 9, -5, 5.5)."
    )


@strawberry.input
class ContextInput:
    """What a chatbot needs for its next turn in a session."""

    user_id: str
    session_id: str
    query: str | None = strawberry.field(
        default=None, description="What to find memories for (default: the session's latest user message)."
    )
    window_turns: int | None = strawberry.field(
        default=None, description="The session's last turns returned, oldest first (default CONTEXT_WINDOW_TURNS, 10)."
    )
    max_tokens: int | None = strawberry.field(
        default=None, description="Token budget of the memories (default CONTEXT_MAX_TOKENS, 1000)."
    )
    include_other_sessions: bool = strawberry.field(
        default=True,
        description="Memories from the user's other sessions too (false: this session's turns and summary only; "
        "no knowledge or diaries, which come from every session).",
    )
    include_shared: bool = strawberry.field(default=False, description="Also system-wide knowledge.")
