"""What each tool answers, through the SDK's client over streamable HTTP (the tools are the same over stdio)."""

from __future__ import annotations

import pytest

from memories.models import Knowledge
from memories.services.api_keys import api_key_create
from tests.mcp.conftest import calls, error_codes, http_client

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def alice_key() -> tuple[int, str]:
    """A key scoped to alice: its id and its secret."""
    key, raw_key = api_key_create(name="agent", user_external_ids=["alice"])
    return key.pk, raw_key


def test_facts_are_added_listed_corrected_and_forgotten(http_url, alice_key):
    key_id, raw_key = alice_key
    (added,) = calls(http_client(http_url, raw_key), ("add_fact", {"user_id": "alice", "content": "Alice is vegan."}))
    assert not added.is_error, added.content
    fact_id = added.structured_content["id"]
    assert added.structured_content["content"] == "Alice is vegan."

    corrected, listed = calls(
        http_client(http_url, raw_key),
        ("correct_fact", {"user_id": "alice", "fact_id": fact_id, "content": "Alice is vegetarian."}),
        ("list_facts", {"user_id": "alice"}),
    )

    assert corrected.structured_content["content"] == "Alice is vegetarian."
    assert listed.structured_content["totalCount"] == 1
    assert [f["content"] for f in listed.structured_content["results"]] == ["Alice is vegetarian."]
    # The audit history names the key, as over GraphQL.
    reasons = set(Knowledge.history.filter(id=int(fact_id)).values_list("history_change_reason", flat=True))
    assert reasons == {f"api key agent (#{key_id})"}

    forgotten, after = calls(
        http_client(http_url, raw_key),
        ("forget_fact", {"user_id": "alice", "fact_id": fact_id}),
        ("list_facts", {"user_id": "alice"}),
    )

    assert forgotten.structured_content == {"deletedId": fact_id}
    assert after.structured_content == {"totalCount": 0, "results": []}
    assert not Knowledge.objects.exists()


def test_search_answers_from_what_was_stored(http_url, alice_key):
    turns = [
        {"role": "user", "content": "I adopted a cat called Miso last spring.", "created_at": "2024-04-02T10:00:00Z"},
        {"role": "assistant", "content": "Miso is a lovely name!", "created_at": "2024-04-02T10:00:05Z"},
        {"role": "user", "content": "I work as a nurse in Leeds.", "created_at": "2024-04-03T10:00:00Z"},
    ]
    stored, found = calls(
        http_client(http_url, alice_key[1]),
        ("add_messages", {"user_id": "alice", "session_id": "s1", "messages": turns}),
        # The server embeds with HashingEmbedder: the question shares the turn's words.
        ("search_memory", {"user_id": "alice", "query": "What is the cat I adopted called?", "top_k": 3}),
    )

    assert not stored.is_error, stored.content
    assert not found.is_error, found.content
    result = found.structured_content
    assert result["found"] is True
    assert "Miso" in result["answer"]
    assert any(hit["cited"] and "Miso" in hit["content"] for hit in result["hits"]), result["hits"]


def test_refused_input_is_a_tool_error_with_the_apis_code_and_field(http_url, alice_key):
    bad_role, too_many, unknown_fact = calls(
        http_client(http_url, alice_key[1]),
        ("add_messages", {"user_id": "alice", "session_id": "s1", "messages": [{"role": "robot", "content": "hi"}]}),
        ("list_facts", {"user_id": "alice", "limit": 100_000}),
        ("forget_fact", {"user_id": "alice", "fact_id": "999999"}),
    )

    assert bad_role.is_error
    (error,) = bad_role.structured_content["errors"]
    assert (error["code"], error["field"]) == ("VALIDATION", "messages.0.role")
    assert bad_role.content[0].text.startswith("VALIDATION: role must be one of")
    assert error_codes(too_many) == ["BAD_USER_INPUT"]
    assert unknown_fact.content[0].text == "ERROR: No knowledge of user 'alice' with id 999999."


def test_ids_given_as_numbers_are_taken_and_the_backlog_says_what_waits(http_url, alice_key):
    added, waiting = calls(
        http_client(http_url, alice_key[1]),
        ("add_fact", {"user_id": "alice", "content": "Alice is vegan."}),
        ("get_backlog", {"user_id": "alice"}),
    )
    fact_id = int(added.structured_content["id"])
    assert waiting.structured_content == {
        "allProcessed": True,
        "messagesWaitingForVector": 0,
        "messagesWaitingForFacts": 0,
        "sessionsWaitingForSummary": [],
    }
    stored, corrected, forgotten = calls(
        http_client(http_url, alice_key[1]),
        ("add_messages", {"user_id": "alice", "session_id": 7, "messages": [{"role": "user", "content": "Hi!"}]}),
        ("correct_fact", {"user_id": "alice", "fact_id": fact_id, "content": "Alice is vegetarian."}),
        ("forget_fact", {"user_id": "alice", "fact_id": fact_id}),
    )
    assert stored.structured_content["session"]["sessionId"] == "7"
    assert corrected.structured_content["content"] == "Alice is vegetarian."
    assert forgotten.structured_content == {"deletedId": str(fact_id)}


def test_arguments_of_the_wrong_type_are_refused_with_the_apis_code_and_field(http_url, alice_key):
    missing, wrong = calls(
        http_client(http_url, alice_key[1]),
        ("add_messages", {"user_id": "alice", "session_id": "s1", "messages": [{"role": "user"}]}),
        ("list_facts", {"user_id": "alice", "status": "NOPE", "limit": "many"}),
    )
    assert missing.is_error
    assert missing.structured_content == {
        "errors": [{"code": "BAD_USER_INPUT", "message": "content must be given.", "field": "messages.0.content"}]
    }
    assert wrong.content[0].text.splitlines() == [
        "BAD_USER_INPUT: status must be one of 'CANDIDATE', 'ACTIVE', 'REJECTED' or 'SUPERSEDED', not \"NOPE\". "
        "(field status)",
        'BAD_USER_INPUT: limit must be an integer, not "many". (field limit)',
    ]
    assert "pydantic" not in missing.content[0].text + wrong.content[0].text
