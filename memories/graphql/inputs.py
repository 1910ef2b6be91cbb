"""GraphQL inputs."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types.arguments import InputContext

__all__ = ["MessageInput", "SearchInput"]


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
    # graphql-core has already checked and parsed every field (the scalars are leaves, so
    # Strawberry would pass them on unchanged); building the object directly skips its
    # field-by-field conversion, 5 ms of the 100 messages an addMessages call may carry.
    # Every field is present: graphql-core fills in the published defaults.
    return cls(
        role=value["role"],
        content=value["content"],
        created_at=value["createdAt"],
        metadata=value["metadata"],
        external_id=value["externalId"],
    )


# Strawberry's hook for input types that build their own value (StrawberryObjectDefinition.from_input).
MessageInput.__strawberry_definition__.from_input = _message_input


@strawberry.input
class SearchInput:
    """A question about one or more end users."""

    query: str
    user_id: str | None = strawberry.field(default=None, description="One end user (or use userIds).")
    user_ids: list[str] | None = strawberry.field(default=None, description="Several end users.")
    top_k: int | None = strawberry.field(default=None, description="Rows retrieved per stage (default 5).")
    search_content: bool = strawberry.field(
        default=False, description="Also search raw messages when the summaries are not enough."
    )
    include_retrieved_data: bool = strawberry.field(default=False, description="Return the data given to the model.")
    answer: bool = strawberry.field(
        default=True,
        description="false: retrieve only, no answer model (answerMode none); messages are searched when "
        "searchContent is set or the summaries found nothing.",
    )
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
