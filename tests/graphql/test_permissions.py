"""Who may do what: API keys scoped to end users, all-users keys and user tokens (authentication:
test_authentication; tokens themselves: test_user_tokens).

Every operation is tried with a key scoped to ``bob``, and with a user token for ``bob``, on
``alice``: it gets none of alice's data and changes nothing of hers; the same request with a key
covering alice (or alice's token) succeeds (so the refusal is about the scope, not a broken query).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from strawberry.utils.str_converters import to_camel_case

from memories.graphql.schema import schema
from tests.conftest import ADD_MESSAGES, SEARCH
from tests.graphql.documents import SCOPED_HISTORY as HISTORY
from tests.graphql.documents import alice_state, only_forbidden

pytestmark = pytest.mark.django_db

ALICE_WORDS = ("Miso", "cello", "peanuts", "Osaka")

# Top-level fields that read: having no OperationInfo member, a refusal is a FORBIDDEN error at their path.
READ_FIELDS = frozenset(
    {"history", "sessions", "summaries", "knowledge", "diaries", "entities", "exportUser", "backlog"}
)


def denial(body: dict[str, Any], field: str) -> tuple[str | None, str]:
    """(argument to fix, message) of a refusal for want of permission, as the error contract says: a
    mutation, ``search`` or ``context`` answers with an OperationInfo of one PERMISSION message; a read
    field with one FORBIDDEN error at its path, and no data."""
    if field in READ_FIELDS:
        return None, only_forbidden(body, field)
    assert "errors" not in body, body
    result = body["data"][field]
    assert result["__typename"] == "OperationInfo", result
    [message] = result["messages"]
    assert message["kind"] == "PERMISSION", message
    return message.get("field"), message["message"]


@pytest.fixture
def bob_key(make_api_key) -> str:
    return make_api_key("bob")


MINT = "mutation M($u: String!) { createUserToken(userId: $u) { ... on UserToken { token } } }"


@pytest.fixture
def credential(make_api_key, gql) -> Callable[..., str]:
    """``credential(kind, *users)``: an API key scoped to ``users``, or a user token for the one user
    (minted by the all-users key, as a backend would)."""

    def make(kind: str, *users: str) -> str:
        if kind == "API key":
            return make_api_key(*users)
        (user,) = users
        return gql(MINT, {"u": user})["data"]["createUserToken"]["token"]

    return make


def _search(**input_fields: Any) -> tuple[str, Callable[[dict[str, str]], dict[str, Any]]]:
    return SEARCH, lambda ids: {"input": {"query": "What do you know about me?", **input_fields}}


REFUSED = "... on OperationInfo { messages { kind field message } }"
# (field, document, variables from alice's ids): each names alice, and bob's key may not act on her.
ON_ALICE: dict[str, tuple[str, str, Callable[[dict[str, str]], dict[str, Any]]]] = {
    "history": ("history", HISTORY, lambda ids: {"userId": "alice"}),
    "sessions": (
        "sessions",
        'query { sessions(userId: "alice") { results { sessionId } } }',
        lambda ids: {},
    ),
    "summaries": (
        "summaries",
        'query { summaries(userId: "alice") { results { content } } }',
        lambda ids: {},
    ),
    "knowledge": (
        "knowledge",
        'query { knowledge(userId: "alice") { results { content } } }',
        lambda ids: {},
    ),
    "knowledge-and-shared": (
        "knowledge",
        'query { knowledge(userId: "alice", shared: true) { results { content } } }',
        lambda ids: {},
    ),
    "diaries": (
        "diaries",
        'query { diaries(userId: "alice") { results { content } } }',
        lambda ids: {},
    ),
    "search-userId": ("search", *_search(userId="alice")),
    "search-userIds": ("search", *_search(userIds=["bob", "alice"])),
    "search-userId-and-userIds": ("search", *_search(userId="bob", userIds=["alice"])),
    "addMessages": (
        "addMessages",
        ADD_MESSAGES,
        lambda ids: {
            "userId": "alice",
            "sessionId": "s1",
            "channel": "web",
            "messages": [{"role": "user", "content": "Bob writing as alice."}],
        },
    ),
    "deleteHistory": (
        "deleteHistory",
        'mutation { deleteHistory(userId: "alice") { __typename ' + REFUSED + " } }",
        lambda ids: {},
    ),
    "createSummaries": (
        "createSummaries",
        'mutation { createSummaries(userId: "alice", overwrite: true) '
        "{ __typename ... on QueuedSummariesResult { queuedSessionIds } " + REFUSED + " } }",
        lambda ids: {},
    ),
    "deleteSummaries": (
        "deleteSummaries",
        'mutation { deleteSummaries(userId: "alice") { __typename ' + REFUSED + " } }",
        lambda ids: {},
    ),
    "addKnowledge": (
        "addKnowledge",
        'mutation { addKnowledge(userId: "alice", content: "Planted by bob.") '
        "{ __typename ... on Knowledge { content } " + REFUSED + " } }",
        lambda ids: {},
    ),
    "updateKnowledge": (
        "updateKnowledge",
        'mutation U($id: ID!) { updateKnowledge(id: $id, userId: "alice", content: "Changed by bob.") '
        "{ __typename ... on Knowledge { content } " + REFUSED + " } }",
        lambda ids: {"id": ids["knowledge"]},
    ),
    "deleteKnowledge": (
        "deleteKnowledge",
        'mutation D($id: ID!) { deleteKnowledge(id: $id, userId: "alice") { __typename ' + REFUSED + " } }",
        lambda ids: {"id": ids["knowledge"]},
    ),
    "upsertDiary": (
        "upsertDiary",
        'mutation { upsertDiary(userId: "alice", diaryDate: "2024-05-01", content: "Changed by bob.") '
        "{ __typename ... on Diary { content } " + REFUSED + " } }",
        lambda ids: {},
    ),
    "deleteDiary": (
        "deleteDiary",
        'mutation { deleteDiary(userId: "alice", diaryDate: "2024-05-01") { __typename ' + REFUSED + " } }",
        lambda ids: {},
    ),
    "exportUser": ("exportUser", 'query { exportUser(userId: "alice") }', lambda ids: {}),
    "entities": ("entities", 'query { entities(userId: "alice") { results { name } } }', lambda ids: {}),
    "backlog": ("backlog", 'query { backlog(userId: "alice") { messagesWaitingForVector } }', lambda ids: {}),
    "context": (
        "context",
        'query { context(input: {userId: "alice", sessionId: "s1"}) { __typename ... on Context { prompt } '
        + REFUSED
        + " } }",
        lambda ids: {},
    ),
    "deleteAllKnowledge": (
        "deleteAllKnowledge",
        'mutation { deleteAllKnowledge(userId: "alice") { __typename ' + REFUSED + " } }",
        lambda ids: {},
    ),
    "deleteAllDiaries": (
        "deleteAllDiaries",
        'mutation { deleteAllDiaries(userId: "alice") { __typename ' + REFUSED + " } }",
        lambda ids: {},
    ),
    "forgetUser": (
        "forgetUser",
        'mutation { forgetUser(userId: "alice") { __typename ' + REFUSED + " } }",
        lambda ids: {},
    ),
    "createUserToken": (
        "createUserToken",
        'mutation { createUserToken(userId: "alice") { __typename ... on UserToken { token } ' + REFUSED + " } }",
        lambda ids: {},
    ),
}


@pytest.mark.parametrize("kind", ["API key", "user token"])
@pytest.mark.parametrize("operation", list(ON_ALICE))
def test_a_credential_for_bob_cannot_act_on_alice(operation, kind, alice, credential, gql):
    field, document, variables = ON_ALICE[operation]
    before = alice_state()

    body = gql(document, variables(alice), key=credential(kind, "bob"))
    assert denial(body, field)[1] == f"This {kind} may not act on user 'alice'."
    assert not any(word in json.dumps(body) for word in ALICE_WORDS), body
    assert alice_state() == before

    # The same request with a key that covers alice too, or with alice's own token, is allowed (a token
    # acts on one user, and mints nothing: test_user_tokens).
    if kind == "user token" and ("bob" in json.dumps(variables(alice)) + document or field == "createUserToken"):
        return
    allowed = gql(
        document, variables(alice), key=credential(kind, *(["alice"] if kind == "user token" else ["alice", "bob"]))
    )
    assert "errors" not in allowed, allowed
    assert allowed["data"][field].get("__typename") != "OperationInfo", allowed


def test_every_top_level_field_checks_the_scope():
    """Each field is tried above, on alice with bob's key (curation: tests/graphql/test_curation.py)."""
    fields = {to_camel_case(f.name) for name in ("Query", "Mutation") for f in schema.get_type_by_name(name).fields}
    tried = {field for field, _, _ in ON_ALICE.values()} | {"approveKnowledge", "rejectKnowledge"}
    assert fields == tried


SHARED_WRITES = {
    "addKnowledge": (
        "addKnowledge",
        'mutation { addKnowledge(content: "Planted by bob.") { __typename ' + REFUSED + " } }",
    ),
    "updateKnowledge": (
        "updateKnowledge",
        'mutation U($id: ID!) { updateKnowledge(id: $id, content: "Changed by bob.") { __typename ' + REFUSED + " } }",
    ),
    "deleteKnowledge": (
        "deleteKnowledge",
        "mutation D($id: ID!) { deleteKnowledge(id: $id) { __typename " + REFUSED + " } }",
    ),
    "knowledge": ("knowledge", "query { knowledge(shared: true) { results { content } } }"),
}


@pytest.mark.parametrize("operation", list(SHARED_WRITES))
def test_shared_knowledge_without_a_user_needs_an_all_users_key(operation, alice, bob_key, gql):
    field, document = SHARED_WRITES[operation]
    before = alice_state()
    body = gql(document, {"id": alice["shared"]} if "$id" in document else {}, key=bob_key)
    assert denial(body, field) == (
        None,
        f"{field} names no end user, so it acts on shared data: it needs an all-users API key. "
        "This key must name its end users (userId or userIds).",
    )
    assert alice_state() == before
    # The all-users key (gql's default) may.
    allowed = gql(document, {"id": alice["shared"]} if "$id" in document else {})
    assert "errors" not in allowed, allowed
    assert allowed["data"][field].get("__typename") != "OperationInfo", allowed


@pytest.mark.parametrize("mutation", ["updateKnowledge", "deleteKnowledge"])
@pytest.mark.parametrize("target", ["knowledge", "shared"])
def test_naming_itself_does_not_let_a_key_reach_other_rows_by_id(mutation, target, alice, bob_key, gql):
    content = ', content: "Changed by bob."' if mutation == "updateKnowledge" else ""
    document = (
        f'mutation M($id: ID!) {{ {mutation}(id: $id, userId: "bob"{content}) '
        "{ __typename ... on OperationInfo { messages { kind message } } } }"
    )
    before = alice_state()
    body = gql(document, {"id": alice[target]}, key=bob_key)
    assert body == {
        "data": {
            mutation: {
                "__typename": "OperationInfo",
                "messages": [{"kind": "ERROR", "message": f"No knowledge of user 'bob' with id {alice[target]}."}],
            }
        }
    }
    assert alice_state() == before


def test_a_user_scoped_key_reads_shared_knowledge_with_its_own(alice, bob_key, gql):
    gql('mutation { addKnowledge(userId: "bob", content: "Bob is vegetarian.") { __typename } }')
    body = gql(
        'query { knowledge(userId: "bob", shared: true) { results { content userId } } }',
        key=bob_key,
    )
    assert body == {
        "data": {
            "knowledge": {
                "results": [
                    {"content": "Bob is vegetarian.", "userId": "bob"},
                    {"content": "The support desk opens at 9am.", "userId": None},
                    # Read from bob's own turn as it arrived ("Bob adopted a dog named Rex.").
                    {"content": "The user said: \u201cBob adopted a dog named Rex.\u201d", "userId": "bob"},
                ]
            }
        }
    }


def test_a_user_scoped_key_searches_shared_knowledge(alice, bob_key, gql):
    body = gql(
        SEARCH,
        {"input": {"userId": "bob", "query": "When does the support desk open?", "includeShared": True}},
        key=bob_key,
    )
    assert "errors" not in body, body
    hits = body["data"]["search"]["hits"]
    assert ("KNOWLEDGE", "", "The support desk opens at 9am.") in [(h["kind"], h["userId"], h["content"]) for h in hits]
    assert {h["userId"] for h in hits} <= {"bob", ""}
    assert not any(word in json.dumps(body) for word in ALICE_WORDS)


def test_a_key_for_several_users_may_search_them_together(alice, make_api_key, gql):
    search_both = {"input": {"userIds": ["alice", "bob"], "query": "Which pet was adopted?"}}
    body = gql(SEARCH, search_both, key=make_api_key("alice", "bob"))
    assert "errors" not in body, body
    assert {h["userId"] for h in body["data"]["search"]["hits"]} <= {"alice", "bob"}
    assert body["data"]["search"]["hits"]


def test_nested_results_hold_only_the_callers_rows(alice, bob_key, gql):
    # bob's session "s1" shares its id with alice's: the result is bob's session and messages only.
    body = gql(
        ADD_MESSAGES,
        {
            "userId": "bob",
            "sessionId": "s1",
            "channel": "web",
            "messages": [{"role": "user", "content": "Rex chewed my shoe.", "createdAt": "2024-05-03T10:00:00Z"}],
        },
        key=bob_key,
    )
    result = body["data"]["addMessages"]
    assert result["session"] == {
        "sessionId": "s1",
        "userId": "bob",
        "channel": "web",
        "firstMessageAt": "2024-05-01T10:00:00+00:00",
        "lastMessageAt": "2024-05-03T10:00:00+00:00",
    }
    assert [(m["content"], m["sessionId"]) for m in result["messages"]] == [("Rex chewed my shoe.", "s1")]
    history = gql(HISTORY, {"userId": "bob"}, key=bob_key)["data"]["history"]
    assert history == {
        "results": [
            {"content": "Bob adopted a dog named Rex.", "sessionId": "s1"},
            {"content": "Rex chewed my shoe.", "sessionId": "s1"},
        ],
        "totalCount": 2,
    }
    sessions = gql('query { sessions(userId: "bob") { results { userId sessionId } totalCount } }', key=bob_key)
    assert sessions["data"]["sessions"] == {"results": [{"userId": "bob", "sessionId": "s1"}], "totalCount": 1}


def test_forgetting_a_user_keeps_the_keys_scoped_to_them(add_messages, make_api_key, gql):
    key = make_api_key("alice")
    add_messages("alice", "s1", [{"role": "user", "content": "hello there"}])
    forgotten = gql('mutation { forgetUser(userId: "alice") { __typename } }', key=key)
    assert forgotten == {"data": {"forgetUser": {"__typename": "ForgetUserResult"}}}
    # alice comes back: the chatbot's key for her still works.
    body = gql(HISTORY, {"userId": "alice"}, key=key)
    assert body == {"data": {"history": {"results": [], "totalCount": 0}}}
