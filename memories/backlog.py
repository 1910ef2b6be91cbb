"""How far the background work is behind: messages waiting for a vector, sessions waiting for a summary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Max, Q

from memories.models import Message, Session

__all__ = ["Backlog", "PendingSummary", "backlog_get"]


@dataclass(frozen=True)
class PendingSummary:
    """A session whose summary is missing or behind its newest message, and when the sweep writes it.

    ``due_at`` is ``SUMMARY_IDLE_MINUTES`` after the session's last message arrived (the sweep runs
    every ``SUMMARY_SWEEP_MINUTES``, so it may come that much later); ``createSummaries`` writes it now.
    """

    user_id: str
    session_id: str
    due_at: datetime


@dataclass(frozen=True)
class Backlog:
    """What the worker has still to do for the users asked about (or for everyone)."""

    messages_waiting_for_vector: int
    sessions_waiting_for_summary: list[PendingSummary]


def backlog_get(*, user_external_id: str | None = None, limit: int = 100) -> Backlog:
    """The backlog of one end user, or of every user when ``user_external_id`` is ``None``.

    Args:
        limit: sessions listed at most, soonest due first.
    """
    # Vectors of another model are the re-embedding's business (manage.py reembed), not the worker's.
    messages = Message.objects.filter(embedding__isnull=True)
    sessions = Session.objects.annotate(newest=Max("messages__id")).filter(newest__isnull=False)
    if user_external_id is not None:
        messages = messages.filter(user__external_id=user_external_id)
        sessions = sessions.filter(user__external_id=user_external_id)
    stale = sessions.filter(
        Q(summary__isnull=True) | Q(summary__last_message__isnull=True) | Q(summary__last_message_id__lt=F("newest"))
    )
    idle = timedelta(minutes=settings.SUMMARY_IDLE_MINUTES)
    rows = stale.order_by("updated_at").values_list("user__external_id", "external_id", "updated_at")[:limit]
    return Backlog(
        messages_waiting_for_vector=messages.count(),
        sessions_waiting_for_summary=[PendingSummary(user, session, updated + idle) for user, session, updated in rows],
    )
