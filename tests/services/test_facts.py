"""Facts that are facts: third-person statements about the user, with source turns, time, slot and confidence."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import REGISTRY

from memories.llm.base import ModelBackendError
from memories.models import Knowledge, Session
from memories.services.messages import MessageIn, messages_add
from tests.worker import raise_facts

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _extract(turns: list[tuple[str, str, str | None]], *, user: str = "caroline") -> list[Knowledge]:
    """Store ``(role, text, speaker)`` turns a minute apart in one session and extract its facts."""
    messages = [
        MessageIn(
            role=role,
            content=text,
            created_at=T0 + timedelta(minutes=i),
            metadata={"speaker": speaker} if speaker else {},
        )
        for i, (role, text, speaker) in enumerate(turns)
    ]
    messages_add(user_external_id=user, session_external_id="s1", messages=messages)
    return raise_facts(user=user, session="s1")


def test_offline_facts_are_the_users_own_lasting_statements_with_source_time_slot_and_confidence():
    created = _extract(
        [
            ("user", "Hey Mel! I moved to Osaka last spring, it's lovely.", "Caroline"),
            ("assistant", "I live in Paris and I have a dog named Rex.", "Melanie"),
            ("user", "Oh nice. I have a guinea pig named Oscar.", "Caroline"),
            ("user", "If I lived in Rome I would be happy.", "Caroline"),
            ("user", "Do you work as a nurse?", "Caroline"),
            ("user", "My favourite food is tonkotsu ramen.", "Caroline"),
        ]
    )
    assert [(k.slot.rsplit(":", 1)[0] if k.slot.startswith("pet:") else k.slot, k.said_at) for k in created] == [
        ("residence", T0),
        ("pet:oscar", T0 + timedelta(minutes=2)),  # Oscar's facts share a slot by meaning: "pet:oscar:..."
        (created[2].slot, T0 + timedelta(minutes=5)),
    ]
    assert created[0].content.startswith("Caroline moved to Osaka")
    assert created[1].content == "Caroline has a guinea pig named Oscar."
    assert created[2].content == "Caroline's favourite food is tonkotsu ramen."
    assert not any(word in k.content for k in created for word in ("Paris", "Rex", "Rome", "nurse"))
    assert all(0 < k.confidence <= 1 for k in created)
    assert list(created[1].source_messages.values_list("content", flat=True)) == [
        "Oh nice. I have a guinea pig named Oscar."
    ]


def test_a_turn_without_a_speaker_is_attributed_to_the_user():
    created = _extract([("user", "I work as a teacher at a primary school.", None)], user="anon")
    assert [(k.content, k.slot) for k in created] == [("The user works as a teacher at a primary school.", "job")]


def test_llm_facts_come_from_one_json_schema_call_and_a_reply_that_is_not_json_is_retried_once(openai_chat):
    requests = []

    def reply(body):
        requests.append(body)
        if len(requests) == 1:
            return "Sure! Here are the facts: Caroline lives in Osaka."
        message_id = int(
            re.search(r"\[(\d+)\] \[[^]]+ UTC\] Caroline: I live", body["messages"][-1]["content"]).group(1)
        )
        fact = {"text": "Caroline lives in Osaka.", "message_ids": [message_id], "slot": "Residence"}
        return json.dumps({"facts": [{**fact, "confidence": 0.9, "replaces_id": None}]})

    openai_chat.chat_reply = reply
    (fact,) = _extract([("user", "I live in Osaka these days.", "Caroline")])
    assert len(requests) == 2
    assert all(r["response_format"]["type"] == "json_schema" for r in requests)
    assert (fact.content, fact.slot, fact.confidence, fact.said_at) == (
        "Caroline lives in Osaka.",
        "residence",
        0.9,
        T0,
    )


def test_llm_replies_that_are_never_the_json_asked_for_are_a_backend_failure_and_store_nothing(openai_chat):
    openai_chat.chat_reply = "Caroline lives in Osaka."
    with pytest.raises(ModelBackendError) as failure:
        _extract([("user", "I live in Osaka these days.", "Caroline")])
    assert failure.value.code == "MODEL_BACKEND_ERROR"
    assert not Knowledge.objects.exists()


def test_llm_facts_that_do_not_fit_the_schema_are_asked_again_then_left_out_logged_and_counted(openai_chat, caplog):
    requests = []

    def reply(body):
        requests.append(body)
        message_id = int(re.search(r"\[(\d+)\] \[[^]]+ UTC\] Caroline: I live", body["messages"][-1]["content"])[1])
        fitting = {"text": "Caroline lives in Osaka.", "message_ids": [message_id], "slot": "residence"}
        return json.dumps({"facts": [{**fitting, "confidence": 0.9}, {"fact": "Caroline likes tea.", "confidence": 1}]})

    openai_chat.chat_reply = reply
    before = REGISTRY.get_sample_value("memory_facts_left_out_total") or 0
    with caplog.at_level("WARNING", logger="memories.services.knowledge"):
        (fact,) = _extract([("user", "I live in Osaka these days.", "Caroline")])
    assert len(requests) == 2  # asked again once
    assert fact.content == "Caroline lives in Osaka."
    session_id = Session.objects.get(external_id="s1").pk
    assert [r.getMessage() for r in caplog.records] == [
        f"Fact extraction of session {session_id}: 1 facts the model wrote did not fit the schema, even when asked "
        "again, and were left out."
    ]
    assert REGISTRY.get_sample_value("memory_facts_left_out_total") == before + 1
