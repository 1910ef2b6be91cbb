"""Limits on what one document may ask: messages per call, sizes, depth and aliases."""

from __future__ import annotations

import pytest

from memories.models import Message
from tests.graphql.documents import (
    msg,
    ok,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("setting", "limit", "at_limit", "over_limit", "field", "message"),
    [
        (
            "MAX_MESSAGES_PER_CALL",
            2,
            [msg("one", "2024-05-01T10:00:00Z")] * 2,
            [msg("one", "2024-05-01T10:00:00Z")] * 3,
            "messages",
            "At most 2 messages per call (MAX_MESSAGES_PER_CALL).",
        ),
        (
            "MAX_MESSAGE_CHARS",
            10,
            [msg("x" * 10, "2024-05-01T10:00:00Z")],
            [msg("x" * 11, "2024-05-01T10:00:00Z")],
            "messages.0.content",
            "content is longer than 10 characters (MAX_MESSAGE_CHARS).",
        ),
        (
            "MAX_METADATA_BYTES",
            20,
            [msg("hi", "2024-05-01T10:00:00Z", metadata={"k": "x" * 11})],  # {"k": "xxxxxxxxxxx"}: 20 bytes
            [msg("hi", "2024-05-01T10:00:00Z", metadata={"k": "x" * 12})],
            "messages.0.metadata",
            "metadata is larger than 20 bytes as JSON (MAX_METADATA_BYTES).",
        ),
        (
            "MAX_METADATA_BYTES",
            20,
            # Bytes as stored (UTF-8): each "é" is 2, not the 6 of its escaped "\u00e9".
            [msg("hi", "2024-05-01T10:00:00Z", metadata={"k": "é" * 5 + "x"})],
            [msg("hi", "2024-05-01T10:00:00Z", metadata={"k": "é" * 6})],
            "messages.0.metadata",
            "metadata is larger than 20 bytes as JSON (MAX_METADATA_BYTES).",
        ),
    ],
)
def test_add_messages_limits_are_refused_naming_the_limit(
    setting, limit, at_limit, over_limit, field, message, add_messages, settings
):
    setattr(settings, setting, limit)
    refused = add_messages("alice", "s1", over_limit)
    assert refused == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": field, "message": message}],
    }
    assert not Message.objects.exists()
    accepted = add_messages("alice", "s1", at_limit)
    assert accepted["__typename"] == "AddMessagesResult"
    assert Message.objects.count() == len(at_limit)


def test_query_depth_is_limited(gql, settings):
    settings.MAX_QUERY_DEPTH = 1
    assert ok(gql('{ history(userId: "alice") { totalCount } }')) == {"history": {"totalCount": 0}}
    body = gql('query Deep { history(userId: "alice") { results { content } } }')
    assert body["data"] is None
    assert [e["message"] for e in body["errors"]] == ["'Deep' exceeds maximum operation depth of 1"]


def test_aliases_are_limited(gql, settings):
    allowed = " ".join(f"a{i}: __typename" for i in range(settings.MAX_ALIASES))
    assert ok(gql(f"{{ {allowed} }}")) == {f"a{i}": "Query" for i in range(settings.MAX_ALIASES)}
    body = gql(f"{{ {allowed} extra: __typename }}")
    assert body["data"] is None
    assert [e["message"] for e in body["errors"]] == [f"{settings.MAX_ALIASES + 1} aliases found. Allowed: 15"]
