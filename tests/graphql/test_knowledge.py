"""knowledge, addKnowledge, updateKnowledge and deleteKnowledge over HTTP with an all-users key.

And a fact's life: deleting the newer fact (or its session) makes the older one active again; a
rejected or superseded fact is not raised again; a move back said later is the active fact.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.models import Knowledge
from memories.services.api_keys import api_key_create
from tests.factories import EndUserFactory, KnowledgeFactory
from tests.graphql.documents import (
    ADD_KNOWLEDGE,
    DELETE_HISTORY,
    DELETE_KNOWLEDGE,
    KNOWLEDGE,
    UPDATE_KNOWLEDGE,
    msg,
)

pytestmark = pytest.mark.django_db


def test_knowledge_of_a_user_shared_or_both(gql_ok):
    alice = EndUserFactory(external_id="alice")
    bob = EndUserFactory(external_id="bob")
    # Created oldest first: lists are newest change first.
    KnowledgeFactory(user=alice, content="Alice is allergic to peanuts.")
    KnowledgeFactory(user=None, content="The support desk opens at 9am.")
    KnowledgeFactory(user=bob, content="Bob is vegetarian.")
    KnowledgeFactory(user=alice, content="Alice plays the cello.")

    def knowledge(**variables: Any) -> list[tuple[str, str | None]]:
        page = gql_ok(KNOWLEDGE, variables)["knowledge"]
        assert page["totalCount"] == len(page["results"])
        return [(k["content"], k["userId"]) for k in page["results"]]

    assert knowledge(userId="alice") == [
        ("Alice plays the cello.", "alice"),
        ("Alice is allergic to peanuts.", "alice"),
    ]
    assert knowledge(shared=True) == [("The support desk opens at 9am.", None)]
    assert knowledge() == [("The support desk opens at 9am.", None)]  # no user: shared
    assert knowledge(userId="alice", shared=True) == [
        ("Alice plays the cello.", "alice"),
        ("The support desk opens at 9am.", None),
        ("Alice is allergic to peanuts.", "alice"),
    ]
    assert knowledge(userId="nobody") == []


@pytest.mark.parametrize("user_id", ["alice", None])
def test_add_knowledge_for_a_user_or_shared(user_id, gql_ok):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": user_id, "content": "  Allergic to peanuts.  "})["addKnowledge"]
    knowledge = Knowledge.objects.get()
    # Stored trimmed; embedded by the worker after the request.
    assert added == {
        "__typename": "Knowledge",
        "id": str(knowledge.pk),
        "content": "Allergic to peanuts.",
        "userId": user_id,
        "embeddingIsCurrent": False,
    }
    assert knowledge.embedding is not None
    listed = gql_ok(KNOWLEDGE, {"userId": user_id, "shared": user_id is None})["knowledge"]["results"]
    assert listed == [{"content": "Allergic to peanuts.", "userId": user_id, "embeddingIsCurrent": True}]


def test_add_knowledge_refuses_empty_content(gql_ok):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "   "})["addKnowledge"]
    assert added == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "content", "message": "content must not be empty."}],
    }
    assert not Knowledge.objects.exists()


def test_update_knowledge_embeds_the_new_text(gql_ok, search):
    added = gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": "Alice is allergic to peanuts."})["addKnowledge"]
    old_vector = list(Knowledge.objects.get().embedding)
    assert search(userId="alice", query="What is Alice allergic to?")["hits"][0]["content"] == (
        "Alice is allergic to peanuts."
    )

    updated = gql_ok(
        UPDATE_KNOWLEDGE, {"id": added["id"], "userId": "alice", "content": "Alice plays the cello in an orchestra."}
    )["updateKnowledge"]
    assert updated == {
        "__typename": "Knowledge",
        "id": added["id"],
        "content": "Alice plays the cello in an orchestra.",
        "userId": "alice",
        "embeddingIsCurrent": False,
    }
    knowledge = Knowledge.objects.get()
    assert list(knowledge.embedding) != old_vector
    assert gql_ok(KNOWLEDGE, {"userId": "alice"})["knowledge"]["results"] == [
        {"content": "Alice plays the cello in an orchestra.", "userId": "alice", "embeddingIsCurrent": True}
    ]
    for query in ("Which instrument does Alice play?", "What is Alice allergic to?"):
        hits = search(userId="alice", query=query, includeRetrievedData=True)
        assert [(h["kind"], h["content"]) for h in hits["hits"]] == [
            ("KNOWLEDGE", "Alice plays the cello in an orchestra.")
        ]
        assert "peanuts" not in json.dumps(hits)


def test_update_knowledge_of_another_owner_or_unknown_id_is_not_found(gql_ok):
    alice = KnowledgeFactory(user=EndUserFactory(external_id="alice"), content="Alice fact.")
    shared = KnowledgeFactory(user=None, content="Shared fact.")
    for knowledge_id, user_id in [(alice.pk, "bob"), (alice.pk, None), (shared.pk, "alice"), (999_999, "alice")]:
        result = gql_ok(UPDATE_KNOWLEDGE, {"id": str(knowledge_id), "userId": user_id, "content": "Changed."})
        what = "shared knowledge" if user_id is None else f"knowledge of user {user_id!r}"
        assert result["updateKnowledge"] == {
            "__typename": "OperationInfo",
            "messages": [{"kind": "ERROR", "field": None, "message": f"No {what} with id {knowledge_id}."}],
        }
    assert sorted(Knowledge.objects.values_list("content", flat=True)) == ["Alice fact.", "Shared fact."]


def test_delete_knowledge(gql_ok):
    alice = KnowledgeFactory(user=EndUserFactory(external_id="alice"), content="Alice fact.")
    shared = KnowledgeFactory(user=None, content="Shared fact.")

    def not_found(knowledge_id: int, user_id: str | None) -> dict[str, Any]:
        what = "shared knowledge" if user_id is None else f"knowledge of user {user_id!r}"
        message = f"No {what} with id {knowledge_id}."
        return {"__typename": "OperationInfo", "messages": [{"kind": "ERROR", "field": None, "message": message}]}

    def delete(knowledge_id: object, user_id: str | None) -> dict[str, Any]:
        return gql_ok(DELETE_KNOWLEDGE, {"id": str(knowledge_id), "userId": user_id})["deleteKnowledge"]

    # Another owner's id, or a shared one named as a user's: not found, and nothing deleted.
    assert delete(alice.pk, "bob") == not_found(alice.pk, "bob")
    assert delete(alice.pk, None) == not_found(alice.pk, None)
    assert delete(shared.pk, "alice") == not_found(shared.pk, "alice")
    assert delete("not-a-number", "alice") == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": "id", "message": "'not-a-number' is not a knowledge id."}],
    }
    assert Knowledge.objects.count() == 2

    assert delete(alice.pk, "alice") == {"__typename": "DeleteKnowledgeResult", "deletedId": str(alice.pk)}
    assert delete(alice.pk, "alice") == not_found(alice.pk, "alice")
    assert delete(shared.pk, None) == {"__typename": "DeleteKnowledgeResult", "deletedId": str(shared.pk)}
    assert not Knowledge.objects.exists()


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


def test_a_fact_of_max_knowledge_chars_with_a_trailing_newline_is_stored_stripped(gql_ok, settings):
    content = "y" * settings.MAX_KNOWLEDGE_CHARS
    added = gql_ok(ADD_KNOWLEDGE, {"userId": "alice", "content": content + "\n"})["addKnowledge"]
    assert (added["__typename"], added.get("content")) == ("Knowledge", content)


DELETE_ALL = """
mutation($userId: String!) {
  deleteAllKnowledge(userId: $userId) { ... on DeleteAllResult { deleted } }
  deleteAllDiaries(userId: $userId) { ... on DeleteAllResult { deleted } }
}
"""


ADD_KNOWLEDGE_FOR = """
mutation($c: String!, $u: String) { addKnowledge(content: $c, userId: $u) { ... on Knowledge { id } } }
"""


UPSERT_DIARY_DAY = """
mutation($u: String!, $d: Date!, $c: String!) {
  upsertDiary(userId: $u, diaryDate: $d, content: $c) { ... on Diary { id } }
}
"""


def test_delete_all_knowledge_and_diaries_touch_only_that_user(gql):
    for user in ("mia", "leo"):
        gql(ADD_KNOWLEDGE_FOR, {"c": f"{user} likes tea.", "u": user})
        gql(UPSERT_DIARY_DAY, {"u": user, "d": "2024-05-01", "c": f"{user} drank tea."})
    gql(ADD_KNOWLEDGE_FOR, {"c": "The desk opens at nine."})

    body = gql(DELETE_ALL, {"userId": "mia"})

    assert body["data"] == {"deleteAllKnowledge": {"deleted": 1}, "deleteAllDiaries": {"deleted": 1}}
    left = gql(
        '{ knowledge(userId: "leo", shared: true) { results { content } } '
        'mia: knowledge(userId: "mia", shared: true) { results { content } } '
        'diaries(userId: "leo") { results { content } } }'
    )["data"]
    assert {k["content"] for k in left["knowledge"]["results"]} == {"leo likes tea.", "The desk opens at nine."}
    assert [k["content"] for k in left["mia"]["results"]] == ["The desk opens at nine."]
    assert left["diaries"]["results"] == [{"content": "leo drank tea."}]


@pytest.mark.usefixtures("hashing_embedder")
def test_delete_all_knowledge_and_diaries_of_a_user(add_messages, gql):
    for text in ("Alice likes tea.", "Alice lives in Porto."):
        gql(
            'mutation($c: String!) { addKnowledge(userId: "alice", content: $c) { ... on Knowledge { id } } }',
            {"c": text},
        )
    gql('mutation { addKnowledge(userId: "bob", content: "Bob likes coffee.") { ... on Knowledge { id } } }')
    for day in ("2024-01-01", "2024-01-02"):
        gql(
            'mutation($d: Date!) { upsertDiary(userId: "alice", diaryDate: $d, content: "A day.") { __typename } }',
            {"d": day},
        )
    deleted = gql('mutation { deleteAllKnowledge(userId: "alice") { ... on DeleteAllResult { deleted } } }')
    assert deleted["data"]["deleteAllKnowledge"]["deleted"] == 2
    diaries = gql('mutation { deleteAllDiaries(userId: "alice") { ... on DeleteAllResult { deleted } } }')
    assert diaries["data"]["deleteAllDiaries"]["deleted"] == 2
    left = gql('{ knowledge(userId: "bob") { results { content } } }')
    assert [k["content"] for k in left["data"]["knowledge"]["results"]] == ["Bob likes coffee."]
    assert gql('{ knowledge(userId: "alice") { totalCount } }')["data"]["knowledge"]["totalCount"] == 0


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
