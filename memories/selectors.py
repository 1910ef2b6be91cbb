"""Reads: history and summaries, scoped to end users given by their external ids."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.core.exceptions import ValidationError
from django.db.models import Case, Exists, F, Max, OuterRef, Q, QuerySet, Subquery, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from memories.llm import get_chat_model
from memories.models import Diary, Knowledge, KnowledgeStatus, Message, Role, Session, Summary
from memories.services.validation import field_errors, raise_if

__all__ = [
    "diary_list",
    "knowledge_list",
    "knowledge_timeline",
    "knowledge_with_later_turn",
    "message_list",
    "message_list_awaiting_facts",
    "session_has_summary",
    "session_list",
    "session_list_behind_summary",
    "session_newest_message_id",
    "session_summary_is_current",
    "summary_list",
]


def message_list(
    *,
    user_external_id: str,
    session_external_id: str | None = None,
    channel: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    within_seconds: int | None = None,
    newest_first: bool = False,
) -> QuerySet[Message]:
    """A user's messages by conversation time (oldest first unless ``newest_first``), optionally narrowed.

    Args:
        user_external_id: the chatbot's user id (required: history is always per user).
        session_external_id: only this session of the user.
        channel: only messages of this channel.
        since: only messages said at or after this time (inclusive).
        until: only messages said before this time (exclusive).
        within_seconds: only messages said in the last this many seconds.

    Raises:
        ValidationError: a negative ``within_seconds``, or a ``since`` or ``until`` without a timezone
            offset or out of range in UTC (as ``Message.created_at`` refuses them).
    """
    # A bound is checked as the ``created_at`` it is compared with.
    raise_if(
        (name, field_errors(Message, "created_at", value))
        for name, value in (("since", since), ("until", until))
        if value is not None
    )
    queryset = Message.objects.filter(user__external_id=user_external_id).select_related("session")
    if session_external_id is not None:
        queryset = queryset.filter(session__external_id=session_external_id)
    if channel is not None:
        queryset = queryset.filter(channel=channel)
    if since is not None:
        queryset = queryset.filter(created_at__gte=since)
    if until is not None:
        queryset = queryset.filter(created_at__lt=until)
    if within_seconds is not None:
        queryset = queryset.filter(created_at__gte=_seconds_ago(within_seconds))
    return queryset.order_by("-created_at", "-id") if newest_first else queryset.order_by("created_at", "id")


def summary_list(*, user_external_id: str, session_external_id: str | None = None) -> QuerySet[Summary]:
    """A user's session summaries, ascending by the time they cover."""
    queryset = Summary.objects.filter(user__external_id=user_external_id)
    if session_external_id is not None:
        queryset = queryset.filter(session__external_id=session_external_id)
    return queryset.order_by("covers_from", "id")


def session_list(
    *, user_external_id: str, within_seconds: int | None = None, newest_first: bool = False
) -> QuerySet[Session]:
    """A user's sessions by first message (oldest first unless ``newest_first``), annotated with
    ``has_summary`` and ``summary_is_current``; ``within_seconds``: only those with a message that recent.

    Raises:
        ValidationError: a negative ``within_seconds``.
    """
    queryset = (
        Session.objects.filter(user__external_id=user_external_id)
        .select_related("user")
        .annotate(has_summary=session_has_summary(), summary_is_current=session_summary_is_current())
    )
    if within_seconds is not None:
        queryset = queryset.filter(last_message_at__gte=_seconds_ago(within_seconds))
    if newest_first:
        return queryset.order_by(F("first_message_at").desc(nulls_last=True), "-id")
    return queryset.order_by(F("first_message_at").asc(nulls_last=True), "id")


def session_has_summary() -> Exists:
    """An annotation of ``Session`` rows: whether the session has a summary."""
    return Exists(Summary.objects.filter(session=OuterRef("pk")))


def session_summary_is_current() -> Exists:
    """An annotation of ``Session`` rows: whether its summary includes the session's newest message."""
    newer = Message.objects.filter(session=OuterRef("session"), id__gt=OuterRef("last_message_id"))
    return Exists(Summary.objects.filter(session=OuterRef("pk"), last_message__isnull=False).exclude(Exists(newer)))


def _seconds_ago(seconds: int) -> datetime:
    if seconds < 0:
        raise ValidationError({"within_seconds": ["must not be negative."]})
    return timezone.now() - timedelta(seconds=min(seconds, 10**10))


def knowledge_list(
    *, user_external_id: str | None = None, shared: bool = False, status: str = KnowledgeStatus.ACTIVE
) -> QuerySet[Knowledge]:
    """A user's knowledge, shared (system-wide) knowledge, or both, in one status; newest change first."""
    queryset = Knowledge.objects.select_related("user").filter(status=status)
    if user_external_id is not None and shared:
        queryset = queryset.filter(user__external_id=user_external_id) | queryset.filter(user__isnull=True)
    elif user_external_id is not None:
        queryset = queryset.filter(user__external_id=user_external_id)
    else:
        queryset = queryset.filter(user__isnull=True)
    return queryset.order_by("-updated_at", "-id")


def diary_list(
    *, user_external_id: str, diary_date: date | None = None, since: date | None = None, until: date | None = None
) -> QuerySet[Diary]:
    """A user's diary entries, newest date first: one date, or ``since``..``until`` inclusive."""
    queryset = Diary.objects.filter(user__external_id=user_external_id).select_related("user")
    if diary_date is not None:
        queryset = queryset.filter(diary_date=diary_date)
    if since is not None:
        queryset = queryset.filter(diary_date__gte=since)
    if until is not None:
        queryset = queryset.filter(diary_date__lte=until)
    return queryset.order_by("-diary_date")


def session_list_behind_summary() -> QuerySet[Session]:
    """Sessions holding a message newer (in arrival order, by id) than their summary's watermark: no
    summary, or a watermark message since deleted, counts as watermark 0. One probe of the messages'
    (session, id) index per session."""
    newer = Message.objects.filter(session=OuterRef("pk"), pk__gt=Coalesce(OuterRef("summary__last_message_id"), 0))
    return Session.objects.filter(Exists(newer))


def message_list_awaiting_facts() -> QuerySet[Message]:
    """User turns fact extraction has not read yet.

    The offline reader reads each turn as the worker embeds it (``Message.read``); a chat model that
    writes facts (an LLM) reads a session once it is summarised (``memories.tasks.extract_knowledge``),
    so there a turn waits until it is newer (by id) than its session's ``facts_read_through`` no more.
    """
    if get_chat_model().mode == "extractive":
        return Message.objects.filter(role=Role.USER, read=False)
    return Message.objects.filter(role=Role.USER, pk__gt=F("session__facts_read_through"))


def session_newest_message_id(*, session_id: int) -> int:
    """The id of the session's newest message in arrival order (0 when it has none)."""
    return Message.objects.filter(session_id=session_id).aggregate(newest=Max("pk"))["newest"] or 0


def knowledge_timeline(*, user_id: int) -> QuerySet[Knowledge]:
    """Every fact of one end user (pk), in every status, by slot and then by when it was said (or added):
    within a slot, each fact held from its ``said_at`` until its successor's (``superseded_by``)."""
    return (
        Knowledge.objects.filter(user_id=user_id)
        .select_related("source_session", "superseded_by")
        .order_by("slot", F("said_at").asc(nulls_first=True), "created_at", "id")
    )


def knowledge_with_later_turn(facts: QuerySet[Knowledge]) -> QuerySet[Knowledge]:
    """``facts`` annotated with ``later_turn_id``: the user's latest turn said after the fact on the fact's
    slot, so it may have replaced the fact: a turn the reader read as speaking of that slot (a one-value
    slot such as ``job``; its new value may not have been read) or one that raised a fact in that slot;
    ``None`` when there is none or the fact has no slot."""
    later = (
        Message.objects.filter(
            Q(slot=OuterRef("slot")) | Q(knowledge_candidates__slot=OuterRef("slot")),
            user_id=OuterRef("user_id"),
            created_at__gt=Coalesce(OuterRef("said_at"), OuterRef("created_at")),
        )
        .exclude(knowledge_candidates__pk=OuterRef("pk"))
        .order_by("-created_at", "-id")
        .values("pk")[:1]
    )
    return facts.annotate(later_turn_id=Case(When(slot="", then=None), default=Subquery(later)))
