"""Fixtures of the one-file export's tests: alice with a bit of everything, and exporting her.

Registered for every test by ``pytest_plugins`` in ``tests/conftest.py``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest

from memories.models import Entity, Knowledge, KnowledgeStatus, Message
from memories.services.diaries import diary_upsert
from memories.services.knowledge import knowledge_add, knowledge_approve, knowledge_reject, knowledge_update
from memories.services.user_export import export_user
from tests.factories import EntityFactory, KnowledgeFactory
from tests.graphql.documents import CREATE_SUMMARIES, msg, ok

__all__ = ["alice_memory", "exported"]


@pytest.fixture
def exported() -> Callable[..., dict[str, Any]]:
    """``exported("alice")``: ``export_user`` of the user, decoded (``text=True``: as the text it writes)."""

    def run(user_id: str = "alice", *, text: bool = False) -> Any:
        out = io.StringIO()
        export_user(user_external_id=user_id, out=out)
        return out.getvalue() if text else json.loads(out.getvalue())

    return run


@pytest.fixture
def alice_memory(add_messages, gql, hashing_embedder, django_capture_on_commit_callbacks, admin_user) -> None:
    """alice: three sessions of every role on two channels (with metadata and external ids), their
    summaries and the facts and entities raised from them; a fact edited by a curator, a slot whose older
    fact was superseded, a rejected candidate, diaries and an entity with aliases. Everything embedded."""
    add_messages(
        "alice",
        "s1",
        [
            msg("My sister Sarah lives in Lisbon.", "2024-05-01T09:00:00Z", externalId="m1", metadata={"mood": 1.5}),
            msg("How lovely! Do you visit her?", "2024-05-01T09:00:05Z", role="assistant"),
            msg("I play the cello in a small orchestra.", "2024-05-01T09:01:00+02:00", externalId="m3"),
        ],
        channel="web",
    )
    add_messages(
        "alice",
        "s2",
        [
            msg("Answer briefly.", "2024-05-03T18:00:00Z", role="system"),
            msg("My dog Rex loves the beach.", "2024-05-03T18:00:10Z", metadata={"speaker": "Alice", "tags": ["a"]}),
        ],
        channel="slack",
    )  # s1 is summarised, and its facts raised
    add_messages("alice", "s3", [msg("Good morning.", "2024-05-04T08:00:00Z")], channel="")
    ok(gql(CREATE_SUMMARIES, {"userId": "alice"}))
    with django_capture_on_commit_callbacks(execute=True):
        edited = knowledge_add(user_external_id="alice", content="Alice is allergic to nuts.")
        knowledge_update(knowledge_id=edited.pk, user_external_id="alice", content="Alice is allergic to peanuts.")
        first_message = Message.objects.filter(user__external_id="alice", external_id="m1").get()
        older, newer, rejected = (
            KnowledgeFactory(
                user=first_message.user,
                content=content,
                status=status,
                slot=slot,
                confidence=0.8,
                said_at=datetime(2024, 5, day, tzinfo=UTC),
                reviewed=False,
                source_session=first_message.session,
            )
            for content, status, slot, day in [
                ("Alice works as a nurse.", KnowledgeStatus.ACTIVE, "job", 1),
                ("Alice works as a teacher.", KnowledgeStatus.CANDIDATE, "job", 3),
                ("Alice lives on the moon.", KnowledgeStatus.CANDIDATE, "", 3),
            ]
        )
        older.source_messages.set([first_message])
        knowledge_approve(knowledge_ids=[older.pk, newer.pk])
        Knowledge.objects.filter(pk=rejected.pk).update(replaces=older)
        knowledge_reject(knowledge_ids=[rejected.pk])
        Knowledge.history.filter(id=edited.pk).update(history_user=admin_user, history_change_reason="curated")
        diary_upsert(user_external_id="alice", diary_date=date(2024, 5, 1), content="Cello practice.", metadata={})
        diary_upsert(
            user_external_id="alice", diary_date=date(2024, 5, 3), content="Beach day.", metadata={"weather": "sun"}
        )
    sarah = Entity.objects.filter(user=first_message.user, name__iexact="Sarah").first() or EntityFactory(
        user=first_message.user,
        name="Sarah",
        kind="person",
        first_mentioned_at=first_message.created_at,
        last_mentioned_at=first_message.created_at,
    )
    sarah.aliases = ["Sis"]
    sarah.save()
    sarah.messages.add(first_message)
    sarah.knowledge.add(older)
