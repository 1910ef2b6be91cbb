"""How far the background work is behind: messages waiting for a vector, sessions waiting for a summary,
user turns waiting to be read for facts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, DateTimeField, ExpressionWrapper, F, Min, QuerySet, Value
from django.db.models.functions import Coalesce, Least

from memories.models import Message
from memories.selectors import message_list_awaiting_facts, session_list_behind_summary

__all__ = [
    "Backlog",
    "BacklogTotals",
    "PendingSummary",
    "backlog_facts_count",
    "backlog_get",
    "backlog_messages_count",
    "backlog_totals_get",
]


@dataclass(frozen=True)
class PendingSummary:
    """A session whose summary is missing or behind its newest message, and when the sweep writes it.

    ``due_at`` is ``SUMMARY_IDLE_MINUTES`` after the session's last message arrived (the sweep runs
    every ``SUMMARY_SWEEP_MINUTES``, so it may come that much later), or when ``createSummaries`` asked
    for it, if sooner: the worker writes it as soon as it gets to its task.
    """

    user_id: str
    session_id: str
    due_at: datetime


@dataclass(frozen=True)
class Backlog:
    """What the worker has still to do for the users asked about (or for everyone)."""

    messages_waiting_for_vector: int
    sessions_waiting_for_summary: list[PendingSummary]
    messages_waiting_for_facts: int

    @property
    def all_processed(self) -> bool:
        """Whether nothing waits: every message embedded, every session summarised, every user turn read
        for facts."""
        return not (
            self.messages_waiting_for_vector or self.sessions_waiting_for_summary or self.messages_waiting_for_facts
        )


@dataclass(frozen=True)
class BacklogTotals:
    """The whole backlog in figures, for metrics: no list of sessions.

    ``oldest_summary_due_at`` is ``None`` when no session waits for a summary.
    """

    messages_waiting_for_vector: int
    sessions_waiting_for_summary: int
    oldest_summary_due_at: datetime | None


def _waiting_messages(user_external_id: str | None) -> QuerySet[Message]:
    # Vectors of another model are the re-embedding's business (manage.py reembed), not the worker's.
    messages = Message.objects.filter(embedding__isnull=True)
    if user_external_id is not None:
        messages = messages.filter(user__external_id=user_external_id)
    return messages


def backlog_messages_count(*, user_external_id: str | None = None) -> int:
    """Messages waiting for a vector, of one end user or of everyone (a count over a partial index)."""
    return _waiting_messages(user_external_id).count()


def backlog_facts_count(*, user_external_id: str | None = None) -> int:
    """User turns fact extraction has not read yet, of one end user or of everyone."""
    turns = message_list_awaiting_facts()
    if user_external_id is not None:
        turns = turns.filter(user__external_id=user_external_id)
    return turns.count()


def backlog_get(*, user_external_id: str | None = None, limit: int = 100) -> Backlog:
    """The backlog of one end user, or of every user when ``user_external_id`` is ``None``.

    Args:
        limit: sessions listed at most, soonest due first.
    """
    sessions = session_list_behind_summary()
    if user_external_id is not None:
        sessions = sessions.filter(user__external_id=user_external_id)
    idle = ExpressionWrapper(
        F("updated_at") + Value(timedelta(minutes=settings.SUMMARY_IDLE_MINUTES)), output_field=DateTimeField()
    )
    rows = (
        sessions.annotate(due_at=Least(idle, Coalesce("summary_requested_at", idle)))
        .order_by("due_at", "pk")
        .values_list("user__external_id", "external_id", "due_at")[:limit]
    )
    return Backlog(
        messages_waiting_for_vector=backlog_messages_count(user_external_id=user_external_id),
        sessions_waiting_for_summary=[PendingSummary(user, session, due_at) for user, session, due_at in rows],
        messages_waiting_for_facts=backlog_facts_count(user_external_id=user_external_id),
    )


def backlog_totals_get() -> BacklogTotals:
    """Every user's backlog as counts and the oldest due time (what a metrics scrape needs), in two
    aggregate statements and no listing.

    Whether a session's summary is behind is one probe of the (session, id) index of its messages.
    """
    idle = timedelta(minutes=settings.SUMMARY_IDLE_MINUTES)
    sessions = session_list_behind_summary().aggregate(count=Count("pk"), oldest=Min("updated_at"))
    return BacklogTotals(
        messages_waiting_for_vector=backlog_messages_count(),
        sessions_waiting_for_summary=sessions["count"],
        oldest_summary_due_at=None if sessions["oldest"] is None else sessions["oldest"] + idle,
    )
