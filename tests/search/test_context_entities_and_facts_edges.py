"""``context`` for an end user with no rows while the embedder is down;
``deleteHistory`` of an entity only a deleted fact names, or only a remaining fact; a slot's
statement said again later in the session that first raised it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.graphql.documents import CREATE_SUMMARIES, DELETE_HISTORY, msg, ok

if TYPE_CHECKING:
    from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

CONTEXT = """
query($input: ContextInput!) {
  context(input: $input) {
    ... on Context { query window { content } memories { content } prompt usage { embeddingTokens } }
  }
}
"""

ENTITIES = """
query Entities($userId: String!) {
  entities(userId: $userId) { results { name firstMentionedAt lastMentionedAt } totalCount }
}
"""


@pytest.fixture
def gql_ok(gql):
    return lambda query, variables=None: ok(gql(query, variables))


@pytest.fixture
def summarize(gql_ok):
    return lambda user_id: gql_ok(CREATE_SUMMARIES, {"userId": user_id})


def test_context_for_an_end_user_with_no_rows_needs_no_embedder(openai_settings, fake_openai: FakeOpenAI, gql):
    # The first turn of a new user: there is no memory to search, so the embedder being down changes nothing.
    fake_openai.fail("embeddings", 500)

    body = gql(CONTEXT, {"input": {"userId": "newcomer", "sessionId": "s1", "query": "Where do I live?"}})

    assert ok(body)["context"] == {
        "query": "Where do I live?",
        "window": [],
        "memories": [],
        "prompt": "",
        "usage": {"embeddingTokens": None},
    }


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
    assert gql_ok(ENTITIES, {"userId": "mei"})["entities"]["results"] == [
        {
            "name": "Google",
            "firstMentionedAt": "2024-05-01T10:00:00+00:00",
            "lastMentionedAt": "2024-05-01T10:00:00+00:00",
        }
    ]

    gql_ok(DELETE_HISTORY, {"userId": "mei"})

    assert gql_ok(ENTITIES, {"userId": "mei"})["entities"] == {"results": [], "totalCount": 0}


def test_delete_history_dates_an_entity_named_only_by_a_remaining_fact_by_that_fact(
    openai_settings, fake_openai: FakeOpenAI, add_messages, summarize, gql_ok
):
    fake_openai.chat_reply = _facts_reply("Googleplex", "Google")
    add_messages("mei", "s1", [msg("I started at the Googleplex.", "2024-04-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("Google has a great canteen.", "2024-06-01T10:00:00Z")])
    summarize("mei")

    gql_ok(DELETE_HISTORY, {"userId": "mei", "sessionId": "s2"})

    # No trace of when the deleted turn was said: the fact that still names Google was said on 1 April.
    assert gql_ok(ENTITIES, {"userId": "mei"})["entities"]["results"] == [
        {
            "name": "Google",
            "firstMentionedAt": "2024-04-01T10:00:00+00:00",
            "lastMentionedAt": "2024-04-01T10:00:00+00:00",
        }
    ]


FACTS = """
query Facts($userId: String!) {
  active: knowledge(userId: $userId, status: ACTIVE) { results { content } }
  superseded: knowledge(userId: $userId, status: SUPERSEDED) { results { content } }
}
"""


def test_moving_back_said_later_in_the_first_session_is_the_active_fact(add_messages, summarize, gql_ok, settings):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("I live in Osaka.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    # Back in the first conversation a month later, Mei has moved back.
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-07-01T10:00:00Z")])
    summarize("mei")

    found = gql_ok(FACTS, {"userId": "mei"})
    assert found["active"]["results"] == [{"content": "The user lives in Tokyo."}]
    assert sorted(f["content"] for f in found["superseded"]["results"]) == [
        "The user lives in Osaka.",
        "The user lives in Tokyo.",  # as said in May, before the move to Osaka
    ]
