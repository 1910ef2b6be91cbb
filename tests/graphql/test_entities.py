"""Entity memory through the API: the ``entities`` query, entities on facts, and search preferring a named entity.

``deleteHistory`` leaves no entity named only in what it deleted, and dates the others by what remains.
"""

from __future__ import annotations

import json

import pytest

from memories.models import Entity
from tests.fake_openai import FakeOpenAI
from tests.graphql.documents import (
    DELETE_HISTORY,
    msg,
)
from tests.worker import raise_facts

pytestmark = pytest.mark.django_db

ENTITIES = """
query Entities($userId: String!, $kind: EntityKind) {
  entities(userId: $userId, kind: $kind) {
    totalCount
    results { name kind aliases userId firstMentionedAt lastMentionedAt mentions facts { content status } }
  }
}
"""

KNOWLEDGE = """
query { knowledge(userId: "alice") { results { content entities { name kind } } } }
"""


def _talk(add_messages, user: str, turns: list[str]) -> None:
    """Store ``user``'s turns a minute apart in session s1 (embedded by the worker) and raise facts and entities."""
    add_messages(
        user,
        "s1",
        [
            {
                "role": "user",
                "content": text,
                "createdAt": f"2024-05-01T10:{i:02d}:00Z",
                "metadata": {"speaker": "Alice"},
            }
            for i, text in enumerate(turns)
        ],
    )
    raise_facts(user=user, session="s1")


@pytest.fixture
def alice(add_messages, settings):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    _talk(
        add_messages,
        "alice",
        [
            "My friend Sarah works at Google.",
            "My brother Tom works at a bank downtown.",
            "I have a dog named Rex.",
            *[f"Small talk about the weather, part {i}: it is sunny and warm today." for i in range(8)],
            "Sarah and I went hiking last weekend.",
        ],
    )
    _talk(add_messages, "bob", ["My friend Sarah lives in Paris."])


def test_entities_query_lists_a_users_entities_with_facts_and_mentions(alice, gql):
    body = gql(ENTITIES, {"userId": "alice", "kind": "PERSON"})
    assert "errors" not in body, body
    assert body["data"]["entities"] == {
        "totalCount": 2,
        "results": [
            {
                "name": "Sarah",
                "kind": "PERSON",
                "aliases": [],
                "userId": "alice",
                "firstMentionedAt": "2024-05-01T10:00:00+00:00",
                "lastMentionedAt": "2024-05-01T10:11:00+00:00",
                "mentions": 2,
                "facts": [{"content": "Alice and Sarah went hiking last weekend.", "status": "ACTIVE"}],
            },
            {
                "name": "Tom",
                "kind": "PERSON",
                "aliases": [],
                "userId": "alice",
                "firstMentionedAt": "2024-05-01T10:01:00+00:00",
                "lastMentionedAt": "2024-05-01T10:01:00+00:00",
                "mentions": 1,
                "facts": [
                    {"content": "Alice's brother is named Tom.", "status": "ACTIVE"},
                    {"content": "Alice's brother Tom works at a bank downtown.", "status": "ACTIVE"},
                ],
            },
        ],
    }
    pets = gql(ENTITIES, {"userId": "alice", "kind": "PET"})["data"]["entities"]["results"]
    assert [(p["name"], p["facts"]) for p in pets] == [
        ("Rex", [{"content": "Alice has a dog named Rex.", "status": "ACTIVE"}])
    ]


def test_facts_show_their_entities(alice, gql):
    items = gql(KNOWLEDGE)["data"]["knowledge"]["results"]
    assert {"content": "Alice has a dog named Rex.", "entities": [{"name": "Rex", "kind": "PET"}]} in items


def test_entities_are_scoped_to_the_keys_users(alice, gql, make_api_key):
    key = make_api_key("alice")
    refused = gql(ENTITIES, {"userId": "bob"}, key=key)
    assert refused["data"] is None
    assert refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    own = gql(ENTITIES, {"userId": "alice"}, key=key)["data"]["entities"]["results"]
    assert {e["userId"] for e in own} == {"alice"}


def test_search_prefers_the_turns_of_an_entity_the_query_names_by_alias(alice, search):
    # The hiking turn as the fact raised from it.
    sarah = {"My friend Sarah works at Google.", "Alice and Sarah went hiking last weekend."}

    def top_two() -> set[str]:
        return {h["content"] for h in search(userIds=["alice"], query="Tell me about Sally.", topK=3)["hits"][:2]}

    assert top_two() != sarah
    # A curator records that Sarah also goes by Sally.
    Entity.objects.filter(user__external_id="alice", name="Sarah").update(aliases=["Sally"])
    assert top_two() == sarah
    # Bob's friend Sarah is another entity: his turns never come into Alice's results.
    hits = search(userIds=["alice"], query="Tell me about Sarah.", topK=20)["hits"]
    assert {h["userId"] for h in hits} == {"alice"}


CONTEXT = """
query Context($input: ContextInput!) { context(input: $input) { ... on Context { memories { kind content } } } }
"""


def test_context_prefers_the_turns_of_an_entity_the_query_names(alice, gql):
    def memories() -> set[str]:
        body = gql(CONTEXT, {"input": {"userId": "alice", "sessionId": "new", "query": "Tell me about Sally."}})
        return {m["content"] for m in body["data"]["context"]["memories"]}

    assert "My friend Sarah works at Google." not in memories()
    Entity.objects.filter(user__external_id="alice", name="Sarah").update(aliases=["Sally"])
    assert "My friend Sarah works at Google." in memories()


ENTITY_DATES = """
query Entities($userId: String!) {
  entities(userId: $userId) { results { name firstMentionedAt lastMentionedAt } totalCount }
}
"""


def _facts_reply(fact_in: str, entity: str):
    """A chat reply: to a fact extraction over a turn saying ``fact_in``, one fact naming ``entity`` and
    citing no turn (the model named the employer behind a nickname); no facts otherwise; a summary."""
    fact = {
        "text": f"The user works at {entity}.",
        "message_ids": [],
        "slot": None,
        "confidence": 0.9,
        "replaces_id": None,
        "entities": [{"name": entity, "kind": "organisation"}],
    }

    def reply(body: dict) -> str:
        if "response_format" not in body:
            return "The user talked about work."
        return json.dumps({"facts": [fact] if fact_in in json.dumps(body) else []})

    return reply


def test_delete_history_leaves_no_entity_named_only_in_a_fact_that_cites_no_turn(
    openai_settings, fake_openai: FakeOpenAI, add_messages, summarize, gql_ok
):
    fake_openai.chat_reply = _facts_reply("Googleplex", "Google")
    add_messages("mei", "s1", [msg("I started at the Googleplex last week.", "2024-05-01T10:00:00Z")])
    summarize("mei")
    assert gql_ok(ENTITY_DATES, {"userId": "mei"})["entities"]["results"] == [
        {
            "name": "Google",
            "firstMentionedAt": "2024-05-01T10:00:00+00:00",
            "lastMentionedAt": "2024-05-01T10:00:00+00:00",
        }
    ]

    gql_ok(DELETE_HISTORY, {"userId": "mei"})

    assert gql_ok(ENTITY_DATES, {"userId": "mei"})["entities"] == {"results": [], "totalCount": 0}


def test_delete_history_dates_an_entity_named_only_by_a_remaining_fact_by_that_fact(
    openai_settings, fake_openai: FakeOpenAI, add_messages, summarize, gql_ok
):
    fake_openai.chat_reply = _facts_reply("Googleplex", "Google")
    add_messages("mei", "s1", [msg("I started at the Googleplex.", "2024-04-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("Google has a great canteen.", "2024-06-01T10:00:00Z")])
    summarize("mei")

    gql_ok(DELETE_HISTORY, {"userId": "mei", "sessionId": "s2"})

    # No trace of when the deleted turn was said: the fact that still names Google was said on 1 April.
    assert gql_ok(ENTITY_DATES, {"userId": "mei"})["entities"]["results"] == [
        {
            "name": "Google",
            "firstMentionedAt": "2024-04-01T10:00:00+00:00",
            "lastMentionedAt": "2024-04-01T10:00:00+00:00",
        }
    ]


ENTITY_MENTIONS = """
query Entities($userId: String!) {
  entities(userId: $userId) { results { name mentions firstMentionedAt lastMentionedAt } totalCount }
}
"""


def test_delete_history_leaves_no_entity_named_only_in_the_deleted_turns(add_messages, summarize, gql_ok):
    add_messages(
        "mei",
        "s1",
        [
            msg("My sister Aiko lives in Osaka.", "2024-05-01T10:00:00Z"),
            msg("Hello!", "2024-05-01T10:00:05Z", "assistant"),
        ],
    )
    summarize("mei")
    assert {e["name"] for e in gql_ok(ENTITY_MENTIONS, {"userId": "mei"})["entities"]["results"]} >= {"Aiko", "Osaka"}
    deleted = gql_ok(DELETE_HISTORY, {"userId": "mei"})["deleteHistory"]
    assert deleted["deletedMessages"] == 2
    assert gql_ok(ENTITY_MENTIONS, {"userId": "mei"})["entities"] == {"results": [], "totalCount": 0}


def test_delete_history_of_a_session_dates_an_entity_by_its_remaining_turns(add_messages, summarize, gql_ok):
    add_messages("mei", "s1", [msg("My sister Aiko lives in Osaka.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("Aiko visited me yesterday.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    [aiko] = [e for e in gql_ok(ENTITY_MENTIONS, {"userId": "mei"})["entities"]["results"] if e["name"] == "Aiko"]
    assert (aiko["mentions"], aiko["lastMentionedAt"]) == (2, "2024-06-01T10:00:00+00:00")
    gql_ok(DELETE_HISTORY, {"userId": "mei", "sessionId": "s2"})
    entities = {e["name"]: e for e in gql_ok(ENTITY_MENTIONS, {"userId": "mei"})["entities"]["results"]}
    assert entities["Aiko"] == {
        "name": "Aiko",
        "mentions": 1,
        "firstMentionedAt": "2024-05-01T10:00:00+00:00",
        "lastMentionedAt": "2024-05-01T10:00:00+00:00",
    }
