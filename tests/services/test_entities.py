"""Entity memory: the people, pets, places and organisations raised with the facts, linked to facts and turns."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from memories.llm.entities import find_entities
from memories.models import Entity, Session
from memories.services.entities import entities_merge
from memories.services.knowledge import knowledge_extract
from memories.services.messages import MessageIn, messages_add
from memories.tasks import embed_rows
from tests.factories import EndUserFactory, MessageFactory, SessionFactory
from tests.worker import raise_facts

pytestmark = pytest.mark.django_db

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _extract(turns: list[str], *, user: str = "caroline", session: str = "s1", start: datetime = T0) -> None:
    """Store the user's ``turns`` a minute apart in one session and run the extraction on it."""
    messages = [
        MessageIn(role="user", content=text, created_at=start + timedelta(minutes=i), metadata={"speaker": "Caroline"})
        for i, text in enumerate(turns)
    ]
    messages_add(user_external_id=user, session_external_id=session, messages=messages)
    raise_facts(user=user, session=session)


def _entities(user: str = "caroline") -> list[tuple[str, str]]:
    return sorted(Entity.objects.filter(user__external_id=user).values_list("name", "kind"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My friend Sarah works at Google.", [("Sarah", "person"), ("Google", "organisation")]),
        ("Caroline has a dog named Rex.", [("Rex", "pet")]),
        ("Caroline lives in Osaka now.", [("Osaka", "place")]),
        ("I'm from Sweden and my sister, Ana Lee, moved to New York.", [("Ana Lee", "person"), ("New York", "place")]),
        ("I went to a pottery class with my friend yesterday.", []),
        ("At Christmas my mom visited The Louvre.", []),
    ],
)
def test_offline_rules_find_named_people_pets_places_and_organisations(text, expected):
    found = [(m.name, m.kind) for m in find_entities(text)]
    assert sorted(found) == sorted(expected + ([("Sweden", "place")] if "Sweden" in text else []))


def test_a_turn_that_raises_no_fact_still_records_its_entities_with_the_turn():
    _extract(["Hey! My friend Sarah works at Google."])
    assert _entities() == [("Google", "organisation"), ("Sarah", "person")]
    sarah = Entity.objects.get(name="Sarah")
    assert list(sarah.messages.values_list("content", flat=True)) == ["Hey! My friend Sarah works at Google."]
    assert sarah.first_mentioned_at == sarah.last_mentioned_at == T0


def test_entities_of_a_fact_are_linked_to_the_fact_and_its_source_turn():
    _extract(["Oh nice. I have a dog named Rex.", "I live in Osaka."])
    rex = Entity.objects.get(name="Rex")
    assert rex.kind == "pet"
    assert list(rex.knowledge.values_list("content", flat=True)) == ["Caroline has a dog named Rex."]
    assert list(rex.messages.values_list("content", flat=True)) == ["Oh nice. I have a dog named Rex."]
    osaka = Entity.objects.get(name="Osaka")
    assert list(osaka.knowledge.values_list("content", flat=True)) == ["Caroline lives in Osaka."]


def test_a_later_turn_naming_a_known_entity_is_linked_and_moves_last_mentioned():
    _extract(["My friend Sarah works at Google."])
    later = T0 + timedelta(days=3)
    _extract(["Sarah and I went hiking, it was great."], session="s2", start=later)
    sarah = Entity.objects.get(name="Sarah")
    assert sarah.messages.count() == 2
    assert (sarah.first_mentioned_at, sarah.last_mentioned_at) == (T0, later)
    assert Entity.objects.filter(name__iexact="sarah").count() == 1


def test_entities_are_per_user_and_extraction_is_idempotent():
    _extract(["My friend Sarah works at Google."])
    _extract(["My friend Sarah works at Google."], user="bob")
    raise_facts(user="bob", session="s1")
    assert _entities("bob") == _entities("caroline") == [("Google", "organisation"), ("Sarah", "person")]
    assert Entity.objects.get(user__external_id="bob", name="Sarah").messages.count() == 1


def test_the_llm_lists_each_facts_entities(openai_chat, fake_openai):
    messages_add(
        user_external_id="caroline",
        session_external_id="s1",
        messages=[MessageIn(role="user", content="Bella and I walked by the river.", created_at=T0)],
    )
    message_id = Session.objects.get(external_id="s1").messages.get().pk
    fact = {
        "text": "Caroline walks her dog Bella.",
        "message_ids": [message_id],
        "slot": None,
        "confidence": 0.8,
        "replaces_id": None,
        "entities": [{"name": "Bella", "kind": "pet"}],
    }
    fake_openai.chat_reply = json.dumps({"facts": [fact]})
    knowledge_extract(session_id=Session.objects.get(external_id="s1").pk)
    bella = Entity.objects.get(name="Bella")
    assert bella.kind == "pet"
    assert list(bella.knowledge.values_list("content", flat=True)) == ["Caroline walks her dog Bella."]
    assert list(bella.messages.values_list("pk", flat=True)) == [message_id]
    schema = fake_openai.requests_to("chat")[-1]["response_format"]["json_schema"]["schema"]
    assert "entities" in schema["properties"]["facts"]["items"]["required"]


def test_merge_moves_names_facts_and_turns_into_the_first():
    _extract(["My friend Sarah works at Google.", "My sister, Sally, moved to Paris."])
    sarah, sally = Entity.objects.get(name="Sarah"), Entity.objects.get(name="Sally")
    merged = entities_merge(entity_ids=[sarah.pk, sally.pk])
    assert (merged.name, merged.aliases) == ("Sarah", ["Sally"])
    assert merged.messages.count() == 2
    assert not Entity.objects.filter(name="Sally").exists()
    with pytest.raises(ValueError, match="at least two"):
        entities_merge(entity_ids=[sarah.pk])


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("hashing_embedder")
def test_two_extractions_naming_the_same_new_person_at_once_share_one_entity(settings):
    """The second waits for the first to commit its new entity, then links to it (no unique-name error)."""
    settings.EMBEDDING_BATCH_SIZE = 1  # each worker reads its own turn (no batch topped up with the other's)
    first, second = (
        MessageFactory(session=SessionFactory(user=EndUserFactory(external_id="caroline")), content=text)
        for text in ("My friend Sarah works at Google.", "My friend Sarah plays the violin.")
    )
    first_inserted, first_may_commit = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def extract(message_id: int, *, hold: bool) -> None:
        try:
            with transaction.atomic():
                embed_rows("message", [message_id])  # the worker reads a turn as it embeds it
                if hold:  # the entity is inserted, not yet committed
                    first_inserted.set()
                    first_may_commit.wait(30)
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            connection.close()

    holding = threading.Thread(target=extract, args=(first.pk,), kwargs={"hold": True})
    holding.start()
    assert first_inserted.wait(30)
    waiting = threading.Thread(target=extract, args=(second.pk,), kwargs={"hold": False})
    waiting.start()
    try:
        _wait_until_a_statement_waits_for_a_lock()
    finally:
        first_may_commit.set()
        holding.join(30)
        waiting.join(30)

    assert errors == []
    sarah = Entity.objects.get(user__external_id="caroline", name="Sarah")
    assert set(sarah.messages.values_list("pk", flat=True)) == {first.pk, second.pk}


def _wait_until_a_statement_waits_for_a_lock() -> None:
    for _ in range(300):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
        time.sleep(0.1)
    raise AssertionError("the second extraction never waited for the first")
