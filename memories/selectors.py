"""Reads: history and summaries, scoped to end users given by their external ids."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from memories.models import EndUser, Message, Summary

__all__ = ["message_list", "summary_list", "user_ids_for"]


def user_ids_for(*, external_ids: list[str]) -> list[int]:
    """Primary keys of the end users with these external ids (unknown ids are left out)."""
    return list(EndUser.objects.filter(external_id__in=external_ids).values_list("pk", flat=True))


def message_list(
    *,
    user_external_id: str,
    session_external_id: str | None = None,
    channel: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Message]:
    """A user's messages, ascending by conversation time, optionally narrowed.

    Args:
        user_external_id: the chatbot's user id (required: history is always per user).
        session_external_id: only this session of the user.
        channel: only messages of this channel.
        since: only messages said at or after this time (inclusive).
        until: only messages said before this time (exclusive).
    """
    queryset = Message.objects.filter(user__external_id=user_external_id)
    if session_external_id:
        queryset = queryset.filter(session__external_id=session_external_id)
    if channel:
        queryset = queryset.filter(channel=channel)
    if since is not None:
        queryset = queryset.filter(created_at__gte=since)
    if until is not None:
        queryset = queryset.filter(created_at__lt=until)
    return queryset.order_by("created_at", "id")


def summary_list(*, user_external_id: str, session_external_id: str | None = None) -> QuerySet[Summary]:
    """A user's session summaries, ascending by the time they cover."""
    queryset = Summary.objects.filter(user__external_id=user_external_id)
    if session_external_id:
        queryset = queryset.filter(session__external_id=session_external_id)
    return queryset.order_by("covers_from", "id")
