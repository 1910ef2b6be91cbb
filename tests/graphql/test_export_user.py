"""``exportUser``: the one-file export over GraphQL, scoped like every other operation."""

from __future__ import annotations

import io
import json

import pytest

from memories.services.user_import import import_user
from tests.graphql.documents import FORGET_USER, ok

pytestmark = pytest.mark.django_db

EXPORT = "query E($userId: String!) { exportUser(userId: $userId) }"


def without_export_time(document: dict) -> dict:
    return {key: value for key, value in document.items() if key != "exported_at"}


def test_export_user_returns_the_document_export_user_writes(alice_memory, gql, exported):
    document = ok(gql(EXPORT, {"userId": "alice"}))["exportUser"]

    assert without_export_time(document) == without_export_time(exported())
    assert document["version"] == 1


def test_round_trip_through_graphql(alice_memory, gql):
    first = ok(gql(EXPORT, {"userId": "alice"}))["exportUser"]
    ok(gql(FORGET_USER, {"userId": "alice"}))

    import_user(stream=io.BytesIO(json.dumps(first).encode()))

    assert without_export_time(ok(gql(EXPORT, {"userId": "alice"}))["exportUser"]) == without_export_time(first)


def test_a_key_scoped_to_another_user_is_refused_as_for_every_operation(alice_memory, gql, make_api_key):
    body = gql(EXPORT, {"userId": "alice"}, key=make_api_key("bob"))
    history = gql('query { history(userId: "alice") { totalCount } }', key=make_api_key("bob"))

    assert body["data"] is None
    assert [(e["message"], e["extensions"]["code"]) for e in body["errors"]] == [
        ("This API key may not act on user 'alice'.", "FORBIDDEN")
    ]
    assert [e["extensions"]["code"] for e in history["errors"]] == ["FORBIDDEN"]
    assert "Sarah" not in json.dumps(body)
    assert "Sarah" in json.dumps(gql(EXPORT, {"userId": "alice"}, key=make_api_key("alice")))


def test_an_unknown_user_is_not_found(gql):
    body = gql(EXPORT, {"userId": "nobody"})

    assert [e["extensions"]["code"] for e in body["errors"]] == ["NOT_FOUND"]
