"""knowledge, addKnowledge, updateKnowledge and deleteKnowledge over HTTP with an all-users key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.models import Knowledge
from tests.factories import EndUserFactory, KnowledgeFactory
from tests.graphql.documents import (
    ADD_KNOWLEDGE,
    DELETE_KNOWLEDGE,
    KNOWLEDGE,
    UPDATE_KNOWLEDGE,
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
