"""factory_boy factories for rows a test needs as a precondition (not what it tests).

Rows made here skip the services (no embedding, no summary queued); tests of those go through
the API instead.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import factory
from factory.django import DjangoModelFactory

from memories.models import Diary, EndUser, Knowledge, KnowledgeStatus, Message, Session

__all__ = ["DiaryFactory", "EndUserFactory", "KnowledgeFactory", "MessageFactory", "SessionFactory"]

_START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


class EndUserFactory(DjangoModelFactory):
    class Meta:
        model = EndUser
        django_get_or_create = ("external_id",)

    external_id = factory.Sequence(lambda n: f"user-{n}")


class SessionFactory(DjangoModelFactory):
    class Meta:
        model = Session
        django_get_or_create = ("user", "external_id")

    user = factory.SubFactory(EndUserFactory)
    external_id = factory.Sequence(lambda n: f"session-{n}")
    first_message_at = _START
    last_message_at = _START


class MessageFactory(DjangoModelFactory):
    class Meta:
        model = Message

    session = factory.SubFactory(SessionFactory)
    user = factory.SelfAttribute("session.user")
    role = "user"
    content = factory.Sequence(lambda n: f"Message number {n}.")
    created_at = factory.Sequence(lambda n: _START + timedelta(minutes=n))


class KnowledgeFactory(DjangoModelFactory):
    class Meta:
        model = Knowledge

    user = factory.SubFactory(EndUserFactory)
    content = factory.Sequence(lambda n: f"Fact number {n}.")
    status = KnowledgeStatus.ACTIVE


class DiaryFactory(DjangoModelFactory):
    class Meta:
        model = Diary

    user = factory.SubFactory(EndUserFactory)
    diary_date = factory.Sequence(lambda n: (_START + timedelta(days=n)).date())
    content = factory.Sequence(lambda n: f"Diary entry {n}.")
