"""A user's memory in one file: export, forget, import, and the same document again."""

from __future__ import annotations

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Diary, EndUser, Entity, Knowledge, Message, Session, Summary
from memories.services import history
from memories.services.user_document import document_read
from memories.services.user_import import import_user
from tests.graphql.documents import FORGET_USER, ok

pytestmark = pytest.mark.django_db

MODELS = (EndUser, Session, Message, Summary, Knowledge, Diary, Entity)


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS} | {"history": Knowledge.history.count()}


def without_export_time(document: dict) -> dict:
    return {key: value for key, value in document.items() if key != "exported_at"}


def as_stream(document: dict | str) -> io.BytesIO:
    return io.BytesIO((document if isinstance(document, str) else json.dumps(document)).encode())


def test_the_document_holds_everything_with_references_as_positions(alice_memory, exported):
    document = exported()

    assert (document["format"], document["version"], document["user"]["id"]) == ("memory-export", 1, "alice")
    assert [s["id"] for s in document["sessions"]] == ["s1", "s2", "s3"]
    messages = document["messages"]
    assert {m["role"] for m in messages} == {"user", "assistant", "system"}
    assert {m["channel"] for m in messages} == {"web", "slack", ""}
    assert messages[0] | {"received_at": None} == {
        "session": "s1",
        "external_id": "m1",
        "role": "user",
        "content": "My sister Sarah lives in Lisbon.",
        "channel": "web",
        "metadata": {"mood": 1.5},
        "created_at": "2024-05-01T09:00:00+00:00",
        "received_at": None,
        "dialogue_act": "statement",
    }
    assert messages[2]["created_at"] == "2024-05-01T07:01:00+00:00"  # in UTC
    assert {s["session"] for s in document["summaries"]} == {"s1", "s2", "s3"}
    assert all(messages[s["last_message"]]["session"] == s["session"] for s in document["summaries"])
    facts = {k["content"]: k for k in document["knowledge"]}
    nurse, teacher = facts["Alice works as a nurse."], facts["Alice works as a teacher."]
    assert (nurse["status"], nurse["slot"], nurse["reviewed"]) == ("superseded", "job", True)
    assert document["knowledge"][nurse["superseded_by"]] is teacher
    assert [messages[i]["external_id"] for i in nurse["source_messages"]] == ["m1"]
    assert nurse["source_session"] == "s1"
    assert [(h["type"], h["status"]) for h in nurse["history"]] == [
        ("+", "active"),
        ("~", "active"),
        ("~", "superseded"),
    ]
    moon = facts["Alice lives on the moon."]
    assert moon["status"] == "rejected"
    assert document["knowledge"][moon["replaces"]] is nurse
    peanuts = facts["Alice is allergic to peanuts."]
    assert [(h["content"], h["by"], h["reason"]) for h in peanuts["history"]] == [
        ("Alice is allergic to nuts.", "admin", "curated"),
        ("Alice is allergic to peanuts.", "admin", "curated"),
    ]
    assert [d["date"] for d in document["diaries"]] == ["2024-05-01", "2024-05-03"]
    sarah = next(e for e in document["entities"] if e["name"] == "Sarah")
    assert sarah["aliases"] == ["Sis"]
    assert 0 in sarah["messages"]
    assert document["knowledge"].index(nurse) in sarah["knowledge"]
    assert "embedding" not in json.dumps(document)


def test_round_trip_export_forget_import_export_gives_the_same_document(
    alice_memory, gql, django_capture_on_commit_callbacks, exported
):
    first = exported()
    before = counts()
    ok(gql(FORGET_USER, {"userId": "alice"}))
    assert not EndUser.objects.filter(external_id="alice").exists()

    with django_capture_on_commit_callbacks(execute=True):  # the worker embeds what was imported
        result = import_user(stream=as_stream(first))

    assert result.created == {
        "sessions": 3,
        "messages": 6,
        "summaries": 3,
        "knowledge": len(first["knowledge"]),
        "diaries": 2,
        "entities": len(first["entities"]),
    }
    assert counts() == before
    assert without_export_time(exported()) == without_export_time(first)
    for model in (Message, Summary, Knowledge, Diary):
        assert not model.objects.filter(embedding__isnull=True).exists(), model
    # Imported with its summaries and the facts raised from them: nothing waits for the worker.
    assert ok(gql('{ backlog(userId: "alice") { allProcessed } }'))["backlog"]["allProcessed"] is True


def test_forget_user_deletes_messages_in_chunks(alice_memory, monkeypatch):
    # A user of 100k messages: one DELETE of all their ids would pass PostgreSQL's 65,535 parameters.
    monkeypatch.setattr(history, "DELETE_CHUNK", 4)

    forgotten = history.user_forget(user_external_id="alice")

    assert (forgotten.messages, forgotten.sessions, forgotten.summaries) == (6, 3, 3)
    assert not Message.objects.exists()
    assert not Knowledge.history.exists()


def test_delete_history_deletes_messages_in_chunks(alice_memory, monkeypatch):
    monkeypatch.setattr(history, "DELETE_CHUNK", 4)

    with CaptureQueriesContext(connection) as queries:
        deleted = history.history_delete(user_external_id="alice")

    assert deleted.messages == 6
    assert not Message.objects.exists()
    deletes = [q["sql"] for q in queries if q["sql"].startswith('DELETE FROM "memories_message"')]
    assert len(deletes) == 2  # 4 + 2: no statement names every id


def test_an_existing_user_is_refused_unless_merging(alice_memory, exported):
    text = exported(text=True)
    before = counts()

    with pytest.raises(ValidationError, match="already exists here"):
        import_user(stream=as_stream(text))
    assert counts() == before

    merged = import_user(stream=as_stream(text), merge=True)
    # Messages with an external id are there already; the others, the facts and the entities' links come again.
    assert merged.kept["sessions"] == 3
    assert merged.kept["messages"] == 2
    assert merged.created["messages"] == 4
    assert merged.kept["summaries"] == 3
    assert merged.kept["diaries"] == 2
    assert Message.objects.count() == before["Message"] + 4
    assert Session.objects.count() == before["Session"]


def test_import_under_another_user_id(alice_memory, exported):
    first = exported()

    import_user(stream=as_stream(exported(text=True)), user_external_id="alice-copy")

    copy = exported("alice-copy")
    assert copy["user"]["id"] == "alice-copy"
    assert {k: v for k, v in copy.items() if k not in ("user", "exported_at")} == {
        k: v for k, v in first.items() if k not in ("user", "exported_at")
    }


def test_a_version_this_service_does_not_read_is_refused_with_nothing_written(alice_memory, exported):
    document = exported()
    document["version"] = 2
    document["user"]["id"] = "newcomer"
    before = counts()

    with pytest.raises(ValidationError, match="Version 2 cannot be read here"):
        import_user(stream=as_stream(document))

    assert counts() == before


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda d: d["messages"][4].update(role="robot"), "messages.4.role"),
        (lambda d: d["summaries"][1].update(last_message=99), "summaries.1.last_message"),
        (lambda d: d["knowledge"][0].update(superseded_by=99), "refers to fact 99"),
        (lambda d: d["entities"][0].update(messages=[0, -1]), "entities.0.messages"),
        (lambda d: d["messages"][1].update(session="nowhere"), "names session 'nowhere'"),
        (lambda d: d["sessions"].append(dict(d["sessions"][0])), "two rows with one key"),
        (lambda d: d.update(format="something-else"), "not a memory-export document"),
        (lambda d: d.update(extra=1), "'extra' is not a part"),
        (lambda d: d.update(diaries={}), '"diaries" must be a list'),
        (lambda d: d.update(version=True), "Version True cannot be read"),
    ],
)
def test_a_bad_row_anywhere_stores_nothing(alice_memory, exported, change, error):
    document = exported()
    document["user"]["id"] = "newcomer"
    change(document)
    before = counts()

    with pytest.raises(ValidationError, match=error):
        import_user(stream=as_stream(document))

    assert counts() == before


def test_lists_out_of_order_are_refused():
    text = '{"format": "memory-export", "version": 1, "user": {"id": "x", "created_at": "2024-01-01T00:00:00Z"}, '
    with pytest.raises(ValidationError, match='"sessions" comes once'):
        import_user(stream=as_stream(text + '"messages": [], "sessions": []}'))
    with pytest.raises(ValidationError, match="must come first"):
        import_user(stream=as_stream('{"user": {"id": "x"}, "format": "memory-export", "version": 1}'))
    with pytest.raises(ValidationError, match="not valid JSON"):
        import_user(stream=as_stream(text + '"sessions": [{"id": '))
    assert not EndUser.objects.exists()


def test_the_reader_yields_one_list_item_at_a_time():
    text = '{"format": "f", "user": {"id": "x", "n": [1, {"a": null}]}, "messages": [{"m": [1, 2.5]}, 3, []], "e": []}'
    assert list(document_read(as_stream(text))) == [
        ("format", "value", "f"),
        ("user", "value", {"id": "x", "n": [1, {"a": None}]}),
        ("messages", "list", None),
        ("messages", "item", {"m": [1, 2.5]}),
        ("messages", "item", 3),
        ("messages", "item", []),
        ("e", "list", None),
    ]
