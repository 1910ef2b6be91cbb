"""Knowledge, diaries, entities and deleting a user's data over HTTP: edge cases of the documented API."""

from __future__ import annotations

import pytest

from memories.services.api_keys import api_key_create
from tests.graphql.documents import (
    ADD_KNOWLEDGE,
    DELETE_HISTORY,
    DELETE_KNOWLEDGE,
    KNOWLEDGE,
    UPDATE_KNOWLEDGE,
    UPSERT_DIARY,
    msg,
)

pytestmark = pytest.mark.django_db

DIARY_ENTRIES = """
query Diaries($userId: String!) { diaries(userId: $userId) { results { content metadata } } }
"""

ENTITIES = """
query Entities($userId: String!) {
  entities(userId: $userId) { results { name mentions firstMentionedAt lastMentionedAt } totalCount }
}
"""


@pytest.mark.parametrize("user_id", ["", "   "])
def test_add_knowledge_with_an_empty_user_id_is_refused_not_made_shared(user_id, gql_ok):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": user_id, "content": "Alice is allergic to peanuts."})["addKnowledge"]
    assert added["__typename"] == "OperationInfo", added
    assert [(m["kind"], m["field"]) for m in added["messages"]] == [("VALIDATION", "userId")]
    assert gql_ok(KNOWLEDGE, {"shared": True})["knowledge"]["totalCount"] == 0


def test_knowledge_of_an_empty_user_id_is_not_the_shared_knowledge(gql_ok):
    gql_ok(ADD_KNOWLEDGE, {"content": "The support desk opens at 9:00 JST."})
    assert gql_ok(KNOWLEDGE, {"userId": ""})["knowledge"] == {"results": [], "totalCount": 0}
    assert gql_ok(KNOWLEDGE, {})["knowledge"]["totalCount"] == 1


def test_upsert_diary_with_an_empty_user_id_is_refused(gql_ok):
    upserted = gql_ok(UPSERT_DIARY, {"userId": " ", "diaryDate": "2024-05-20", "content": "Cooked."})["upsertDiary"]
    assert upserted["__typename"] == "OperationInfo", upserted
    assert [(m["kind"], m["field"]) for m in upserted["messages"]] == [("VALIDATION", "userId")]


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
    assert {e["name"] for e in gql_ok(ENTITIES, {"userId": "mei"})["entities"]["results"]} >= {"Aiko", "Osaka"}
    deleted = gql_ok(DELETE_HISTORY, {"userId": "mei"})["deleteHistory"]
    assert deleted["deletedMessages"] == 2
    assert gql_ok(ENTITIES, {"userId": "mei"})["entities"] == {"results": [], "totalCount": 0}


@pytest.mark.parametrize("knowledge_id", ["99999999999999999999", "-1", "1.5", ""])
def test_knowledge_ids_out_of_range_are_unknown_not_an_internal_error(knowledge_id, gql_ok):
    gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice plays the cello."})
    for document, name, variables in (
        (UPDATE_KNOWLEDGE, "updateKnowledge", {"content": "Alice plays the viola."}),
        (DELETE_KNOWLEDGE, "deleteKnowledge", {}),
    ):
        result = gql_ok(document, {"id": knowledge_id, "userId": "alice", **variables})[name]
        assert result["__typename"] == "OperationInfo", result
        assert result["messages"][0]["kind"] in ("ERROR", "VALIDATION"), result


def test_upsert_diary_refuses_metadata_over_max_metadata_bytes_and_keeps_the_entry(gql_ok, settings):
    gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-20", "content": "Rain.", "metadata": {"m": 1}})
    big = {"notes": "x" * settings.MAX_METADATA_BYTES}
    upserted = gql_ok(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-20", "content": "Sun.", "metadata": big})
    assert upserted["upsertDiary"] == {
        "__typename": "OperationInfo",
        "messages": [
            {
                "kind": "VALIDATION",
                "field": "metadata",
                "message": f"metadata is larger than {settings.MAX_METADATA_BYTES} bytes as JSON (MAX_METADATA_BYTES).",
            }
        ],
    }
    entries = gql_ok(DIARY_ENTRIES, {"userId": "alice"})["diaries"]["results"]
    assert [(e["content"], e["metadata"]) for e in entries] == [("Rain.", {"m": 1})]


def test_delete_history_of_a_session_dates_an_entity_by_its_remaining_turns(add_messages, summarize, gql_ok):
    add_messages("mei", "s1", [msg("My sister Aiko lives in Osaka.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("Aiko visited me yesterday.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    [aiko] = [e for e in gql_ok(ENTITIES, {"userId": "mei"})["entities"]["results"] if e["name"] == "Aiko"]
    assert (aiko["mentions"], aiko["lastMentionedAt"]) == (2, "2024-06-01T10:00:00+00:00")
    gql_ok(DELETE_HISTORY, {"userId": "mei", "sessionId": "s2"})
    entities = {e["name"]: e for e in gql_ok(ENTITIES, {"userId": "mei"})["entities"]["results"]}
    assert entities["Aiko"] == {
        "name": "Aiko",
        "mentions": 1,
        "firstMentionedAt": "2024-05-01T10:00:00+00:00",
        "lastMentionedAt": "2024-05-01T10:00:00+00:00",
    }


def test_an_edited_diary_entry_is_found_by_its_new_text_and_not_its_old(gql_ok, search):
    def diary_hits(query: str) -> list[str]:
        hits = search(userId="alice", query=query, sources=["DIARY"], answer=False)["hits"]
        return [h["content"] for h in hits]

    entry = {"userId": "alice", "diaryDate": "2024-05-02"}
    gql_ok(UPSERT_DIARY, {**entry, "content": "We sailed to the lighthouse on the island."})
    assert diary_hits("sailing to the lighthouse") == ["We sailed to the lighthouse on the island."]
    gql_ok(UPSERT_DIARY, {**entry, "content": "Baked sourdough bread all afternoon."})
    assert diary_hits("sailing to the lighthouse") == []
    assert diary_hits("baking bread") == ["Baked sourdough bread all afternoon."]


def test_a_fact_of_max_knowledge_chars_with_a_trailing_newline_is_stored_stripped(gql_ok, settings):
    content = "y" * settings.MAX_KNOWLEDGE_CHARS
    added = gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": content + "\n"})["addKnowledge"]
    assert (added["__typename"], added.get("content")) == ("Knowledge", content)


ACTIVE_FACTS = """
query Facts($userId: String!) { knowledge(userId: $userId) { results { id content } } }
"""


@pytest.fixture
def moved(add_messages, summarize, gql_ok, settings) -> str:
    """Mei said she lives in Tokyo (session s1), then in Osaka (s2): the Osaka fact is active; returns its id."""
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = False
    add_messages("mei", "s1", [msg("I live in Tokyo.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "s2", [msg("I live in Osaka now.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    [fact] = gql_ok(ACTIVE_FACTS, {"userId": "mei"})["knowledge"]["results"]
    assert fact["content"] == "The user lives in Osaka now."
    return fact["id"]


def test_deleting_the_fact_that_superseded_another_makes_that_one_active_again(moved, gql_ok, search):
    gql_ok(DELETE_KNOWLEDGE, {"id": moved, "userId": "mei"})
    facts = gql_ok(ACTIVE_FACTS, {"userId": "mei"})["knowledge"]["results"]
    assert [f["content"] for f in facts] == ["The user lives in Tokyo."]
    hits = search(userId="mei", query="Where does the user live?", sources=["KNOWLEDGE"], answer=False)["hits"]
    assert [h["content"] for h in hits] == ["The user lives in Tokyo."]


def test_deleting_the_session_of_the_newer_fact_makes_the_older_one_active_again(moved, gql_ok):
    gql_ok(DELETE_HISTORY, {"userId": "mei", "sessionId": "s2"})
    facts = gql_ok(ACTIVE_FACTS, {"userId": "mei"})["knowledge"]["results"]
    assert [f["content"] for f in facts] == ["The user lives in Tokyo."]


def test_a_rejected_candidate_is_not_raised_again_when_its_session_is_summarised_again(
    add_messages, summarize, gql, gql_ok, settings
):
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True
    _, curator = api_key_create(name="curator", all_users=True, may_curate=True)
    add_messages("mei", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    summarize("mei")
    candidates = """query { knowledge(userId: "mei", status: CANDIDATE) { results { id content } } }"""
    [candidate] = gql_ok(candidates)["knowledge"]["results"]
    reject = 'mutation R($id: ID!) { rejectKnowledge(id: $id, userId: "mei") { __typename } }'
    assert gql(reject, {"id": candidate["id"]}, key=curator) == {
        "data": {"rejectKnowledge": {"__typename": "Knowledge"}}
    }
    gql_ok('mutation { createSummaries(userId: "mei", overwrite: true) { __typename } }')
    assert gql_ok(candidates)["knowledge"]["results"] == []


def test_a_superseded_fact_is_not_raised_again_when_its_session_is_summarised_again(moved, gql_ok):
    gql_ok('mutation { createSummaries(userId: "mei", overwrite: true) { __typename } }')
    everything = """query { a: knowledge(userId: "mei", status: ACTIVE) { results { content } }
      s: knowledge(userId: "mei", status: SUPERSEDED) { results { content } } }"""
    assert gql_ok(everything) == {
        "a": {"results": [{"content": "The user lives in Osaka now."}]},
        "s": {"results": [{"content": "The user lives in Tokyo."}]},
    }


def test_a_rejected_fact_never_comes_back_even_said_again_in_a_later_session(add_messages, summarize, gql, gql_ok):
    _, curator = api_key_create(name="curator", all_users=True, may_curate=True)
    facts = """query { knowledge(userId: "mei", status: ACTIVE) { results { id content } } }"""
    add_messages("mei", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    summarize("mei")
    [fact] = gql_ok(facts)["knowledge"]["results"]  # used at once, not reviewed
    gql(f'mutation {{ rejectKnowledge(id: "{fact["id"]}", userId: "mei") {{ __typename }} }}', key=curator)
    add_messages("mei", "s2", [msg("I'm allergic to peanuts.", "2024-06-01T10:00:00Z")])
    summarize("mei")
    assert gql_ok(facts)["knowledge"]["results"] == []
    rejected = gql_ok('query { knowledge(userId: "mei", status: REJECTED) { results { content } } }')
    assert rejected["knowledge"]["results"] == [{"content": "The user is allergic to peanuts."}]
