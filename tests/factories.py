"""factory_boy factories for rows a test needs as a precondition (not what it tests).

Rows made here skip the services (no embedding, no summary queued); tests of those go through
the API instead.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import factory
from factory.django import DjangoModelFactory

from memories.models import (
    ApiKey,
    Diary,
    EndUser,
    Entity,
    FactToReview,
    Knowledge,
    KnowledgeStatus,
    Message,
    Session,
    Summary,
    SummaryMode,
)

__all__ = [
    "ApiKeyFactory",
    "DiaryFactory",
    "EndUserFactory",
    "EntityFactory",
    "FactToReviewFactory",
    "KnowledgeFactory",
    "MessageFactory",
    "SessionFactory",
    "SummaryFactory",
]

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


class SummaryFactory(DjangoModelFactory):
    """A session's summary covering the session's times (no message counted unless given)."""

    class Meta:
        model = Summary

    session = factory.SubFactory(SessionFactory)
    user = factory.SelfAttribute("session.user")
    content = factory.Sequence(lambda n: f"Summary number {n}.")
    mode = SummaryMode.EXTRACTIVE
    covers_from = factory.SelfAttribute("session.first_message_at")
    covers_until = factory.SelfAttribute("session.last_message_at")


class FactToReviewFactory(KnowledgeFactory):
    """A candidate fact in the review queue (the ``FactToReview`` proxy of ``Knowledge``)."""

    class Meta:
        model = FactToReview

    status = KnowledgeStatus.CANDIDATE


class EntityFactory(DjangoModelFactory):
    class Meta:
        model = Entity

    user = factory.SubFactory(EndUserFactory)
    name = factory.Sequence(lambda n: f"Entity {n}")
    first_mentioned_at = _START
    last_mentioned_at = _START


class ApiKeyFactory(DjangoModelFactory):
    """An API key row whose secret nobody knows; tests that call the API make keys with ``make_api_key``."""

    class Meta:
        model = ApiKey

    name = factory.Sequence(lambda n: f"key-{n}")
    prefix = factory.Sequence(lambda n: f"mem_{n:04d}")
    key_hash = factory.Sequence(lambda n: hashlib.sha256(f"key-{n}".encode()).hexdigest())
    all_users = True
