"""Storing conversation messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import GeneratedField, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from memories.database import retry_transient
from memories.kinds import MemoryKind
from memories.models import EndUser, Message, Session, Summary
from memories.services.jobs import embedding_enqueue, job_enqueue
from memories.services.user_locks import user_lock
from memories.services.validation import field_errors, raise_if, user_id_errors

__all__ = ["MessageIn", "MessagesAdded", "messages_add"]

# One statement for every message of a call, each column one array (``UNNEST``), in order.
# Django 5.2's bulk_create writes a row-by-row ``VALUES`` list for a model with a column type it
# does not know (the vector), which costs more per message. New messages have no vector yet (NULL).
_INSERT_MESSAGES = """
INSERT INTO memories_message
    (user_id, session_id, channel, received_at, embedding_model, external_id, role, content, metadata, created_at)
SELECT %s, %s, %s, %s, '', m.external_id, m.role, m.content, m.metadata::jsonb, m.created_at
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[]) WITH ORDINALITY
    AS m(external_id, role, content, metadata, created_at, position)
ORDER BY m.position
RETURNING id
"""
# What the row holds after the statement, in ``Model.from_db``'s order (the model's); the
# full-text column (generated) is left deferred.
_STORED = [f.attname for f in Message._meta.concrete_fields if not isinstance(f, GeneratedField)]


@dataclass(frozen=True)
class MessageIn:
    """One message as a client sends it.

    ``created_at`` is when it was said (timezone-aware; now when ``None``); ``external_id``
    is the client's optional id, which makes re-sending the same message a no-op.
    """

    role: str
    content: str
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    external_id: str = ""


@dataclass(frozen=True)
class MessagesAdded:
    """What ``messages_add`` stored: the session, the new messages, and how many were already there."""

    session: Session
    messages: list[Message]
    skipped: int


def _validate(*, user_external_id: str, session_external_id: str, channel: str, messages: Sequence[MessageIn]) -> None:
    """Check the arguments against the fields that will store them (``Message`` rows are not
    ``full_clean``-ed one by one: that would query for the user and session of every message)."""
    count: list[ValidationError] = []
    if not messages:
        count = [ValidationError("Send at least one message.", code="min_count")]
    elif len(messages) > settings.MAX_MESSAGES_PER_CALL:
        count = [
            ValidationError(
                "At most %(limit)d messages per call (MAX_MESSAGES_PER_CALL).",
                code="max_count",
                params={"limit": settings.MAX_MESSAGES_PER_CALL},
            )
        ]
    raise_if(
        [
            ("user_external_id", user_id_errors(user_external_id)),
            ("session_external_id", field_errors(Session, "external_id", session_external_id)),
            ("channel", field_errors(Session, "channel", channel)),
            ("messages", count),
            *(
                (f"messages.{i}.{name}", field_errors(Message, name, getattr(message, name)))
                for i, message in enumerate(messages)
                for name in ("role", "content", "external_id", "created_at", "metadata")
                if getattr(message, name) is not None  # no created_at: now
            ),
        ]
    )


@retry_transient
@transaction.atomic
def messages_add(
    *, user_external_id: str, session_external_id: str, channel: str = "", messages: Sequence[MessageIn]
) -> MessagesAdded:
    """Store ``messages`` in one transaction and queue their embedding and summarising.

    Creates the end user and the session when they are new. When this is the first batch
    of a new session, the user's previous session is queued for summarising. Messages whose
    ``external_id`` the session already holds are skipped (safe retries).

    Args:
        user_external_id: the chatbot's user id.
        session_external_id: the chatbot's session id (unique per user).
        channel: where the conversation happens (``slack``, ``web``, ...); kept on the session.
        messages: in conversation order.

    Returns:
        The session and the messages stored.

    Raises:
        ValidationError: an input the fields storing it refuse (empty, longer than its column, a NUL
            character or lone surrogate in any text or metadata, over a limit), keyed by argument
            (``messages.3.content``); nothing is stored.
    """
    _validate(
        user_external_id=user_external_id, session_external_id=session_external_id, channel=channel, messages=messages
    )
    user, user_created = _locked_user(user_external_id)
    session, session_created = Session.objects.select_for_update().get_or_create(
        user=user, external_id=session_external_id, defaults={"channel": channel}
    )
    is_new_session = session.last_message_at is None
    wanted_ids = [m.external_id for m in messages if m.external_id]
    seen = (
        set(Message.objects.filter(session=session, external_id__in=wanted_ids).values_list("external_id", flat=True))
        if wanted_ids and not session_created
        else set()
    )
    now = timezone.now()
    rows = []
    for message in messages:
        if message.external_id:
            if message.external_id in seen:
                continue
            seen.add(message.external_id)
        rows.append(
            Message(
                user=user,
                session=session,
                external_id=message.external_id,
                role=message.role,
                content=message.content,
                channel=channel or session.channel,
                metadata=message.metadata or {},
                created_at=message.created_at.astimezone(UTC) if message.created_at else now,
                received_at=now,
            )
        )
    created = _messages_insert(rows)
    if created:
        times = [m.created_at for m in created]
        session.first_message_at = min([t for t in (session.first_message_at, *times) if t is not None])
        session.last_message_at = max([t for t in (session.last_message_at, *times) if t is not None])
        if channel and not session.channel:
            session.channel = channel
        session.save(update_fields=["first_message_at", "last_message_at", "channel", "updated_at"])
        embedding_enqueue(kind=MemoryKind.MESSAGE, ids=[m.pk for m in created])
        if _rolling_summary_due(session, added=len(created)):
            job_enqueue(func="memories.tasks.summarize_session", args=(session.pk,))
        if is_new_session and not user_created:  # a new user has no previous session
            previous = (
                Session.objects.filter(user=user, last_message_at__isnull=False)
                .exclude(pk=session.pk)
                .order_by("-updated_at")
                .values_list("pk", flat=True)
                .first()
            )
            if previous is not None:
                job_enqueue(func="memories.tasks.summarize_session", args=(previous,))
    return MessagesAdded(session=session, messages=created, skipped=len(messages) - len(created))


def _locked_user(external_id: str) -> tuple[EndUser, bool]:
    """The end user (created if new) with its row locked as a writer's (``memories.services.user_locks``),
    and whether it was created. A user forgotten while this waited for the lock is created anew.

    Raises:
        ValidationError: the user was forgotten again and again while this waited (nothing is stored).
    """
    for _ in range(3):
        user, created = EndUser.objects.get_or_create(external_id=external_id)
        if user_lock(user_pk=user.pk) is not None:
            return user, created
    raise ValidationError({"user_external_id": ["was forgotten while these messages were stored: send them again."]})


def _rolling_summary_due(session: Session, *, added: int) -> bool:
    """Whether the ``added`` messages just stored take the count its summary lacks past a multiple of
    ``SUMMARY_EVERY_MESSAGES``: a long conversation is summarised as it goes (once per multiple, not
    on every call while the worker writes it), not only once idle. 0 switches this off.
    """
    every = settings.SUMMARY_EVERY_MESSAGES
    if every <= 0:
        return False
    watermark = Summary.objects.filter(session=session).values("last_message_id")[:1]
    lacking = session.messages.filter(pk__gt=Coalesce(Subquery(watermark), 0)).count()
    return (lacking - added) // every < lacking // every


def _messages_insert(rows: list[Message]) -> list[Message]:
    """Insert ``rows`` (new messages of one session, one user, one channel) in one statement.

    Returns them as ``bulk_create`` does (with their ids, in order, loaded from the database:
    ``Model.from_db``), at a lower cost per message.
    """
    if not rows:
        return rows
    first = rows[0]
    with connection.cursor() as cursor:
        cursor.execute(
            _INSERT_MESSAGES,
            [
                first.user_id,
                first.session_id,
                first.channel,
                first.received_at,
                [row.external_id for row in rows],
                [row.role for row in rows],
                [row.content for row in rows],
                [json.dumps(row.metadata) for row in rows],
                [row.created_at for row in rows],
            ],
        )
        ids = [pk for (pk,) in cursor.fetchall()]
    stored = [
        Message.from_db(connection.alias, _STORED, [pk if name == "id" else getattr(row, name) for name in _STORED])
        for row, pk in zip(rows, ids, strict=True)
    ]
    for message in stored:  # the related rows already loaded, as on ``rows``
        message.user, message.session = first.user, first.session
    return stored
