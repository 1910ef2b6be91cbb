"""Who may do what: API keys scoped to end users, all-users keys, the admin session, and 401s.

Every operation is tried with a key scoped to ``bob`` on ``alice``: it gets none of alice's
data and changes nothing of hers; the same request with a key covering alice succeeds (so the
refusal is about the scope, not a broken query).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Q
from django.http import HttpResponse
from django.test import Client
from strawberry.utils.str_converters import to_camel_case

from memories.graphql.schema import schema
from memories.models import ApiKey, Diary, Knowledge, Message, Session, Summary
from memories.services.api_keys import api_key_hash, api_key_revoke
from tests.conftest import ADD_MESSAGES, SEARCH

pytestmark = pytest.mark.django_db

# What alice said, wrote and was told: none of it may reach bob's key.
ALICE_WORDS = ("Miso", "cello", "peanuts", "Osaka")

HISTORY = "query H($userId: String!) { history(userId: $userId) { results { content sessionId } totalCount } }"


def post(client: Client, query: str, variables: dict[str, Any] | None = None, **headers: Any) -> HttpResponse:
    return client.post(
        "/graphql/",
        data=json.dumps({"query": query, "variables": variables or {}}),
        content_type="application/json",
        **headers,
    )


def bearer(key: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


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


def alice_state() -> dict[str, list[tuple]]:
    """Every row of alice's (and the shared knowledge), to compare before and after a request."""
    alice = Q(user__external_id="alice")
    return {
        "messages": list(Message.objects.filter(alice).order_by("pk").values_list("pk", "content", "created_at")),
        "sessions": list(
            Session.objects.filter(alice).order_by("pk").values_list("pk", "external_id", "last_message_at")
        ),
        "summaries": list(Summary.objects.filter(alice).order_by("pk").values_list("pk", "content", "updated_at")),
        "knowledge": list(
            Knowledge.objects.filter(alice | Q(user__isnull=True))
            .order_by("pk")
            .values_list("pk", "content", "updated_at", "embedding_model")
        ),
        "diaries": list(Diary.objects.filter(alice).order_by("pk").values_list("pk", "content", "updated_at")),
    }


@pytest.fixture
def alice(add_messages, gql) -> dict[str, str]:
    """alice: two sessions (s1 summarised), a fact and a diary entry; plus shared knowledge and bob's s1.

    Returns the ids of alice's fact and of the shared one.
    """
    for user_id, session_id, content, at in [
        ("alice", "s1", "I adopted a cat named Miso.", "2024-05-01T10:00:00Z"),
        ("alice", "s2", "I play the cello.", "2024-05-02T10:00:00Z"),  # s1 is summarised now
        ("bob", "s1", "Bob adopted a dog named Rex.", "2024-05-01T10:00:00Z"),
    ]:
        add_messages(user_id, session_id, [{"role": "user", "content": content, "createdAt": at}])
    add_knowledge = (
        "mutation A($userId: String, $content: String!) "
        "{ addKnowledge(userId: $userId, content: $content) { ... on Knowledge { id } } }"
    )
    fact = gql(add_knowledge, {"userId": "alice", "content": "Alice is allergic to peanuts."})
    shared = gql(add_knowledge, {"content": "The support desk opens at 9am."})
    diary = gql(
        'mutation { upsertDiary(userId: "alice", diaryDate: "2024-05-01", content: "Went to Osaka.") { __typename } }'
    )
    for body in (fact, shared, diary):
        assert "errors" not in body, body
    assert Summary.objects.filter(user__external_id="alice").count() == 1
    return {"knowledge": fact["data"]["addKnowledge"]["id"], "shared": shared["data"]["addKnowledge"]["id"]}


@pytest.fixture
def bob_key(make_api_key) -> str:
    return make_api_key("bob")


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
}


@pytest.mark.parametrize("operation", list(ON_ALICE))
def test_a_key_scoped_to_bob_cannot_act_on_alice(operation, alice, bob_key, make_api_key, gql):
    field, document, variables = ON_ALICE[operation]
    before = alice_state()

    body = gql(document, variables(alice), key=bob_key)
    assert denial(body, field)[1] == "This API key may not act on user 'alice'."
    assert not any(word in json.dumps(body) for word in ALICE_WORDS), body
    assert alice_state() == before

    # The same request with a key that covers alice too is allowed.
    allowed = gql(document, variables(alice), key=make_api_key("alice", "bob"))
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


def only_forbidden(body: dict[str, Any], field: str) -> str:
    """The message of the single FORBIDDEN error of a response without data."""
    assert body["data"] is None, body
    [error] = body["errors"]
    assert (error["path"], error["extensions"]) == ([field], {"code": "FORBIDDEN"})
    return error["message"]


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


# --- authentication --------------------------------------------------------------------

UNAUTHENTICATED_MESSAGE = (
    "Authentication required: send `Authorization: Bearer <API key>` "
    "(create one with `manage.py create_api_key`), or log into the admin to use GraphiQL."
)


def test_no_credentials_get_401_and_no_data(alice, client):
    response = post(client, HISTORY, {"userId": "alice"})
    assert response.status_code == 401
    assert response.json() == {
        "data": None,
        "errors": [{"message": UNAUTHENTICATED_MESSAGE, "extensions": {"code": "UNAUTHENTICATED"}}],
    }


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Bearer nonsense",
        "Bearer mem_" + "x" * 43,  # well-formed, unknown
        "Basic {key}",  # a valid key, wrong scheme
        "{key}",  # no scheme
        "Bearer {key}x",
    ],
)
def test_bad_keys_get_401(header, alice, client, trusted_key):
    response = post(client, HISTORY, {"userId": "alice"}, HTTP_AUTHORIZATION=header.format(key=trusted_key))
    assert response.status_code == 401
    assert response.json() == {
        "data": None,
        "errors": [{"message": "Invalid or revoked API key.", "extensions": {"code": "UNAUTHENTICATED"}}],
    }


def test_the_bearer_scheme_is_case_insensitive(alice, client, trusted_key):
    response = post(client, HISTORY, {"userId": "alice"}, HTTP_AUTHORIZATION=f"bearer {trusted_key}")
    assert response.status_code == 200
    assert response.json()["data"]["history"]["totalCount"] == 2


def test_a_revoked_key_gets_401(alice, client, make_api_key):
    key = make_api_key("alice")
    assert post(client, HISTORY, {"userId": "alice"}, **bearer(key)).status_code == 200
    api_key_revoke(key_id=ApiKey.objects.get(key_hash=api_key_hash(key)).pk)
    response = post(client, HISTORY, {"userId": "alice"}, **bearer(key))
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"] == {"code": "UNAUTHENTICATED"}
    assert response.json()["data"] is None


def test_a_key_records_when_it_was_last_used(client, make_api_key):
    key = make_api_key("alice")
    assert ApiKey.objects.get().last_used_at is None
    assert post(client, HISTORY, {"userId": "alice"}, **bearer(key)).status_code == 200
    assert ApiKey.objects.get().last_used_at is not None


def test_api_responses_set_no_cookie(alice, client, make_api_key):
    response = post(client, HISTORY, {"userId": "alice"}, **bearer(make_api_key("alice")))
    assert response.status_code == 200
    assert not response.cookies
    assert "Set-Cookie" not in response


def test_graphiql_page_is_served_to_everyone(client):
    response = client.get("/graphql/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert "graphiql" in response.content.decode().lower()
    assert "csrftoken" in response.cookies


@pytest.fixture
def staff_client(django_user_model) -> Client:
    """A staff member logged into the admin, with CSRF checks on (as in a browser)."""
    staff = django_user_model.objects.create_user("staff", password="secret", is_staff=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    return client


def test_staff_session_may_query_every_user_with_the_csrf_token(alice, staff_client):
    refused = post(staff_client, HISTORY, {"userId": "alice"})
    assert refused.status_code == 403
    assert refused.json() == {
        "data": None,
        "errors": [{"message": "CSRF check failed: reload GraphiQL.", "extensions": {"code": "FORBIDDEN"}}],
    }
    wrong = post(staff_client, HISTORY, {"userId": "alice"}, HTTP_X_CSRFTOKEN="x" * 32)
    assert wrong.status_code == 403

    staff_client.get("/graphql/", HTTP_ACCEPT="text/html")  # GraphiQL sets the CSRF cookie
    token = staff_client.cookies["csrftoken"].value
    response = post(staff_client, HISTORY, {"userId": "alice"}, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    assert response.json()["data"]["history"]["totalCount"] == 2
    shared = post(staff_client, "query { knowledge { results { content } } }", HTTP_X_CSRFTOKEN=token)
    assert shared.json() == {"data": {"knowledge": {"results": [{"content": "The support desk opens at 9am."}]}}}


def test_staff_session_cannot_run_mutations_over_get(alice, staff_client):
    before = alice_state()
    response = staff_client.get("/graphql/", {"query": 'mutation { forgetUser(userId: "alice") { __typename } }'})
    assert response.status_code in (400, 405)
    assert alice_state() == before


def test_a_logged_in_user_who_is_not_staff_gets_401(alice, django_user_model):
    user = django_user_model.objects.create_user("someone", password="secret")
    client = Client()
    client.force_login(user)
    response = post(client, HISTORY, {"userId": "alice"})
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"] == {"code": "UNAUTHENTICATED"}
    assert response.json()["data"] is None


# --- manage.py create_api_key ----------------------------------------------------------


def create_api_key(*args: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("create_api_key", *args, stdout=out, stderr=err)
    assert "shown only now" in err.getvalue()
    return out.getvalue().strip()


def test_create_api_key_prints_a_key_scoped_to_its_users(alice, gql):
    key = create_api_key("slack-bot", "--user", "alice")
    assert key.startswith("mem_")
    assert gql(HISTORY, {"userId": "alice"}, key=key)["data"]["history"]["totalCount"] == 2
    assert only_forbidden(gql(HISTORY, {"userId": "bob"}, key=key), "history") == (
        "This API key may not act on user 'bob'."
    )


def test_create_api_key_for_all_users(alice, gql):
    key = create_api_key("backend", "--all-users")
    for user_id, count in (("alice", 2), ("bob", 1)):
        assert gql(HISTORY, {"userId": user_id}, key=key)["data"]["history"]["totalCount"] == count


def test_create_api_key_needs_users_or_all_users(db):
    with pytest.raises(CommandError, match="Scope the key to at least one end user, or to all users."):
        call_command("create_api_key", "unscoped", stdout=StringIO(), stderr=StringIO())
    assert not ApiKey.objects.exists()


def test_a_body_over_max_request_bytes_gets_413_through_the_wsgi_handler(alice, client, make_api_key, settings):
    settings.MAX_REQUEST_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    key = make_api_key("alice")
    body = {"query": HISTORY, "variables": {"userId": "alice", "padding": "x" * 3000}}
    for _ in range(2):  # the second time the key has authenticated lately: the view reads the body first
        response = client.post("/graphql/", data=json.dumps(body), content_type="application/json", **bearer(key))
        assert response.status_code == 413
        assert response.json()["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
