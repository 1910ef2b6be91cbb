"""The flow of chatmemory's README client, over GraphQL with an API key.

Add a session, switch to a new session (which summarises the first), read the summary,
then ask "What is the favorite food?".
"""

from __future__ import annotations

import pytest

from tests.conftest import ADD_MESSAGES, SEARCH

pytestmark = pytest.mark.django_db

SUMMARIES = "query($userId: String!) { summaries(userId: $userId) { results { sessionId content mode } } }"


def test_chatmemory_client_flow(gql, make_api_key):
    key = make_api_key("user1234567890")
    first = gql(
        ADD_MESSAGES,
        {
            "userId": "user1234567890",
            "sessionId": "session1234567890",
            "channel": "web",
            "messages": [
                {"role": "user", "content": "I like Japanese food, especially ramen and sushi."},
                {"role": "assistant", "content": "Great! What is your favorite Japanese dish?"},
                {"role": "user", "content": "My favorite food is tonkotsu ramen from a small shop in Fukuoka."},
                {"role": "assistant", "content": "Tonkotsu ramen from Fukuoka is a classic."},
            ],
        },
        key=key,
    )
    assert first["data"]["addMessages"]["__typename"] == "AddMessagesResult"

    # Switching sessions summarises the previous one in the background.
    second = gql(
        ADD_MESSAGES,
        {
            "userId": "user1234567890",
            "sessionId": "session1234567891",
            "channel": "web",
            "messages": [{"role": "user", "content": "Hello again!"}],
        },
        key=key,
    )
    assert second["data"]["addMessages"]["session"]["sessionId"] == "session1234567891"

    summaries = gql(SUMMARIES, {"userId": "user1234567890"}, key=key)["data"]["summaries"]["results"]
    assert [s["sessionId"] for s in summaries] == ["session1234567890"]
    assert "tonkotsu ramen" in summaries[0]["content"]

    result = gql(
        SEARCH,
        {"input": {"userId": "user1234567890", "query": "What is the favorite food?", "includeRetrievedData": True}},
        key=key,
    )["data"]["search"]
    assert result["__typename"] == "SearchResult"
    assert result["found"] is True
    assert result["hits"][0]["sessionId"] == "session1234567890"
    # A message hit carries the turns around it: the answer is there for the bot to read.
    assert "tonkotsu ramen" in result["hits"][0]["text"]
    assert "tonkotsu ramen" in result["retrievedData"]

    # Another tenant's key sees nothing of it.
    other = make_api_key("someone-else")
    denied = gql(SEARCH, {"input": {"userId": "user1234567890", "query": "What is the favorite food?"}}, key=other)
    assert denied["data"]["search"] == {
        "__typename": "OperationInfo",
        "messages": [
            {"kind": "PERMISSION", "field": "userId", "message": "This API key may not act on user 'user1234567890'."}
        ],
    }
    assert "ramen" not in str(denied)


def test_offline_answer_quotes_the_turn_that_answers(gql):
    gql(
        ADD_MESSAGES,
        {
            "userId": "user1234567890",
            "sessionId": "session1234567890",
            "channel": "web",
            "messages": [
                {"role": "user", "content": "I like Japanese food, especially ramen and sushi."},
                {"role": "assistant", "content": "Great! What is your favorite Japanese dish?"},
                {"role": "user", "content": "My favorite food is tonkotsu ramen from a small shop in Fukuoka."},
                {"role": "assistant", "content": "Tonkotsu ramen from Fukuoka is a classic."},
            ],
        },
    )
    hello = [{"role": "user", "content": "Hello again!"}]
    gql(
        ADD_MESSAGES,
        {"userId": "user1234567890", "sessionId": "session1234567891", "channel": "web", "messages": hello},
    )
    result = gql(SEARCH, {"input": {"userId": "user1234567890", "query": "What is the favorite food?"}})
    assert "tonkotsu ramen" in result["data"]["search"]["answer"]
