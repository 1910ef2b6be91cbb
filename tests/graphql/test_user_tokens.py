"""User tokens for browsers (createUserToken) and the CORS allow-list: what a frontend relies on.

Every operation's scope with a token is tried in test_permissions (a token for bob on alice).
"""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest
from django.core import signing
from django.utils import timezone

from memories.models import ApiKey
from memories.services import user_tokens
from memories.services.api_keys import api_key_assign_secret, api_key_create, api_key_revoke
from tests.graphql.documents import HISTORY

pytestmark = pytest.mark.django_db

MINT = """
mutation Mint($userId: String!, $ttl: Int) {
  createUserToken(userId: $userId, ttlSeconds: $ttl) {
    __typename
    ... on UserToken { token userId expiresAt }
    ... on OperationInfo { messages { kind field message code } }
  }
}
"""
ALICE_HISTORY = {"userId": "alice"}
INVALID = {
    "data": None,
    "errors": [
        {
            "message": "Invalid, expired or revoked user token: ask your backend for a new one (createUserToken).",
            "extensions": {"code": "UNAUTHENTICATED"},
        }
    ],
}


@pytest.fixture
def alice_key(make_api_key) -> str:
    """The key of alice's chatbot backend."""
    return make_api_key("alice")


@pytest.fixture
def mint(gql, alice_key):
    """``mint(user, ttl=None, key=alice_key)``: createUserToken's result."""

    def run(user: str = "alice", ttl: int | None = None, key: str | None = None) -> dict:
        return gql(MINT, {"userId": user, "ttl": ttl}, key=key or alice_key)["data"]["createUserToken"]

    return run


@pytest.fixture
def alice_said(add_messages) -> None:
    add_messages("alice", "s1", [{"role": "user", "content": "I adopted a cat named Miso."}])


def test_a_backend_mints_a_token_that_reads_and_writes_its_user_only(mint, gql, alice_said):
    minted = mint(ttl=600)
    assert minted["__typename"] == "UserToken"
    assert minted["token"].startswith("memu_")
    assert "mem_" not in minted["token"]
    assert minted["userId"] == "alice"
    seconds_left = (datetime.fromisoformat(minted["expiresAt"]) - timezone.now()).total_seconds()
    assert 590 <= seconds_left <= 600

    token = minted["token"]
    assert gql(HISTORY, ALICE_HISTORY, key=token)["data"]["history"]["results"] == [
        {"content": "I adopted a cat named Miso."}
    ]
    added = gql(
        'mutation { addKnowledge(userId: "alice", content: "Alice has a cat named Miso.") { __typename } }', key=token
    )
    assert added == {"data": {"addKnowledge": {"__typename": "Knowledge"}}}


def test_the_default_lifetime_and_its_bounds_come_from_the_settings(mint, settings):
    settings.USER_TOKEN_SECONDS, settings.USER_TOKEN_MAX_SECONDS = 120, 3600
    seconds_left = (datetime.fromisoformat(mint()["expiresAt"]) - timezone.now()).total_seconds()
    assert 110 <= seconds_left <= 120
    for ttl in (0, 3601):
        assert mint(ttl=ttl) == {
            "__typename": "OperationInfo",
            "messages": [
                {
                    "kind": "VALIDATION",
                    "field": "ttlSeconds",
                    "message": "ttlSeconds must be between 1 and 3600 (USER_TOKEN_MAX_SECONDS).",
                    "code": None,
                }
            ],
        }


def test_an_expired_token_is_refused(mint, gql, monkeypatch):
    token = mint(ttl=60)["token"]
    assert "errors" not in gql(HISTORY, ALICE_HISTORY, key=token)
    now = time.time()
    monkeypatch.setattr(user_tokens.time, "time", lambda: now + 61)
    assert gql(HISTORY, ALICE_HISTORY, key=token, status=401) == INVALID


def test_revoking_the_key_or_giving_it_a_new_secret_revokes_its_tokens(mint, gql, alice_key, make_api_key):
    token = mint()["token"]
    key = ApiKey.objects.get(prefix=alice_key[:12])
    api_key_assign_secret(key=key)
    key.save()
    assert gql(HISTORY, ALICE_HISTORY, key=token, status=401) == INVALID

    other_key = make_api_key("alice")
    other = mint(key=other_key)["token"]
    api_key_revoke(key_id=ApiKey.objects.get(prefix=other_key[:12]).pk)
    assert gql(HISTORY, ALICE_HISTORY, key=other, status=401) == INVALID


def test_a_token_dies_when_its_user_leaves_the_keys_scope(mint, gql, alice_key):
    token = mint()["token"]
    ApiKey.objects.filter(prefix=alice_key[:12]).update(user_external_ids=["bob"])
    assert gql(HISTORY, ALICE_HISTORY, key=token, status=401) == INVALID


def test_changing_the_secret_revokes_every_token(mint, gql, settings):
    settings.USER_TOKEN_SECRET = "first secret"
    token = mint()["token"]
    assert "errors" not in gql(HISTORY, ALICE_HISTORY, key=token)
    settings.USER_TOKEN_SECRET = "second secret"
    assert gql(HISTORY, ALICE_HISTORY, key=token, status=401) == INVALID


def test_a_token_changed_by_hand_is_refused(mint, gql):
    token = mint()["token"]
    payload, _, signature = token.removeprefix("memu_").rpartition(":")
    claims = signing.b64_decode(payload.encode()).replace(b'"alice"', b'"bob"')
    assert b'"bob"' in claims
    forged = "memu_" + signing.b64_encode(claims).decode() + ":" + signature
    assert gql(HISTORY, {"userId": "bob"}, key=forged, status=401) == INVALID
    assert gql(HISTORY, ALICE_HISTORY, key="memu_nonsense", status=401) == INVALID


def test_a_token_mints_no_token_and_curates_nothing(mint, gql):
    token = mint()["token"]
    assert gql(MINT, {"userId": "alice"}, key=token)["data"]["createUserToken"] == {
        "__typename": "OperationInfo",
        "messages": [
            {
                "kind": "PERMISSION",
                "field": None,
                "message": "createUserToken needs an API key: a user token cannot mint tokens.",
                "code": "FORBIDDEN",
            }
        ],
    }
    # Even minted by a key that may curate, a token may not.
    _, curator = api_key_create(name="curator", user_external_ids=["alice"], may_curate=True)
    curator_token = mint(key=curator)["token"]
    fact = gql('mutation { addKnowledge(userId: "alice", content: "Alice sings.") { ... on Knowledge { id } } }')
    approve = gql(
        'mutation A($id: ID!) { approveKnowledge(id: $id, userId: "alice") '
        "{ __typename ... on OperationInfo { messages { code } } } }",
        {"id": fact["data"]["addKnowledge"]["id"]},
        key=curator_token,
    )
    assert approve["data"]["approveKnowledge"] == {"__typename": "OperationInfo", "messages": [{"code": "FORBIDDEN"}]}


def test_a_staff_session_mints_no_token(staff_client):
    response = staff_client.post(
        "/graphql/",
        data=json.dumps({"query": MINT, "variables": {"userId": "alice"}}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=staff_client.get("/graphql/").cookies["csrftoken"].value,
    )
    assert response.json()["data"]["createUserToken"]["messages"][0]["message"] == (
        "createUserToken needs an API key: a token lives no longer than the key it came from."
    )


def _preflight(client, origin: str):
    return client.options(
        "/graphql/",
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type",
    )


def test_no_browser_origin_is_allowed_by_default(client):
    response = _preflight(client, "http://127.0.0.1:8080")
    assert "access-control-allow-origin" not in response.headers


def test_the_allowed_origins_may_call_the_api_from_a_browser(client, settings, mint):
    settings.CORS_ALLOWED_ORIGINS = ["http://127.0.0.1:8080"]
    allowed = _preflight(client, "http://127.0.0.1:8080")
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://127.0.0.1:8080"
    assert {"authorization", "content-type"} <= set(allowed.headers["access-control-allow-headers"].split(", "))
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in allowed.headers  # no cookies: the token is the credential

    token = mint()["token"]
    answer = client.post(
        "/graphql/",
        data=json.dumps({"query": HISTORY, "variables": ALICE_HISTORY}),
        content_type="application/json",
        HTTP_ORIGIN="http://127.0.0.1:8080",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert answer.headers["access-control-allow-origin"] == "http://127.0.0.1:8080"
    # A refusal carries the header too, so the page can read why.
    refused = client.post("/graphql/", data="{}", content_type="application/json", HTTP_ORIGIN="http://127.0.0.1:8080")
    assert (refused.status_code, refused.headers["access-control-allow-origin"]) == (401, "http://127.0.0.1:8080")

    other = _preflight(client, "http://evil.example")
    assert "access-control-allow-origin" not in other.headers
    assert "access-control-allow-origin" not in client.get("/admin/login/", HTTP_ORIGIN="http://127.0.0.1:8080").headers
