"""Writing session summaries, and finding the sessions whose summary is missing or stale."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_q.tasks import async_task

from memories.llm import get_chat_model, get_embedder
from memories.models import Session, Summary
from memories.selectors import session_list_behind_summary
from memories.services.jobs import job_enqueue
from memories.services.user_locks import user_lock
from memories.services.validation import user_id_check

__all__ = [
    "summaries_delete",
    "summaries_enqueue_stale",
    "summaries_regenerate",
    "summaries_request",
    "summary_create",
]


def summary_create(*, session_id: int, force: bool = False) -> Summary | None:
    """Summarise a session up to its newest message, unless its summary is already current.

    The summary's watermark (``last_message``) is the newest message (in arrival order) it
    includes, so a resumed session is summarised again rather than left stale; messages that arrive
    while the model writes are left for the next summary, and a message deleted meanwhile means
    nothing is written (its words must not come back). Idempotent.

    Args:
        session_id: primary key of the session.
        force: write a new summary even when the current one is up to date.

    Returns:
        The summary, or ``None`` when the session (or its user) no longer exists or has no messages
        (any old summary of an emptied session is deleted).

    Raises:
        ModelBackendError: the chat or embedding backend failed; nothing is changed.
    """
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        return None
    messages = list(session.messages.order_by("created_at", "id"))
    existing = Summary.objects.filter(session=session).first()
    if not messages:
        if existing is not None:
            existing.delete()
        return None
    watermark = max(messages, key=lambda m: m.pk)
    if existing is not None and existing.last_message_id == watermark.pk and not force:
        return existing
    chat = get_chat_model()
    completion = chat.summarize(
        lines=_summary_input(messages, previous=existing, dated=chat.mode == "generated"),
        max_sentences=settings.SUMMARY_MAX_SENTENCES,
    )
    embedder = get_embedder()
    vector = embedder.embed([completion.text]).vectors[0]
    with transaction.atomic():
        # The user first, as every writer (memories.services.user_locks); forgotten meanwhile: nothing to write.
        if user_lock(user_pk=session.user_id) is None:
            return None
        # A message deleted while the model was writing: write nothing (its words must not come
        # back; the delete queues a new summary). Messages added meanwhile are left for the next one.
        # of=self: the session's default ordering joins its user, whose row FOR UPDATE would lock too. No key
        # update: a worker's facts of this session, checked against its row at their commit, do not wait for it.
        Session.objects.select_for_update(of=("self",), no_key=True).filter(pk=session.pk).first()
        if session.messages.filter(pk__in=[m.pk for m in messages]).count() != len(messages):
            return Summary.objects.filter(session=session).first()
        Session.objects.filter(pk=session.pk).update(summary_requested_at=None)
        summary, _ = Summary.objects.update_or_create(
            session=session,
            defaults={
                "user_id": session.user_id,
                "content": completion.text,
                "mode": completion.mode,
                "covers_from": messages[0].created_at,
                "covers_until": messages[-1].created_at,
                "last_message": watermark,
                "message_count": len(messages),
                "embedding": vector,
                "embedding_model": embedder.model_name,
            },
        )
        job_enqueue(func="memories.tasks.extract_knowledge", args=(session.pk,))
    return summary


def _summary_input(messages: list, *, previous: Summary | None, dated: bool = False) -> list[str]:
    """The conversation lines to summarise, at most ``SUMMARY_MAX_INPUT_CHARS`` characters.

    ``dated``: each line starts with when it was said (``"[2024-05-01 09:00 UTC] Mia: ..."``), so a
    chat model can keep dates and resolve "last week"; an extractive summary quotes lines as they are.

    A long session keeps its newest lines; what is cut is represented by the previous summary
    (when there is one), so summaries stay bounded in cost and never exceed a model's context.
    The line that does not fit whole keeps its beginning, up to the budget, ending in "…" (so
    a newest message longer than the budget, up to ``MAX_MESSAGE_CHARS``, is still summarised).
    """
    lines = [m.dated_text if dated else m.text for m in messages]
    budget = settings.SUMMARY_MAX_INPUT_CHARS
    if sum(len(line) for line in lines) <= budget:
        return lines
    kept: list[str] = []
    for line in reversed(lines):
        if len(line) > budget:
            if budget > 1:
                kept.append(line[: budget - 1] + "…")
            break
        kept.append(line)
        budget -= len(line)
    earlier = [f"Summary of the earlier conversation: {previous.content}"] if previous is not None else []
    return earlier + kept[::-1]


def summaries_enqueue_stale(*, idle_minutes: int | None = None, limit: int = 500) -> list[int]:
    """Queue summaries for sessions idle for ``idle_minutes`` whose summary is missing or behind.

    A summary is behind when the session holds a message newer (in arrival order) than its
    watermark, or when its watermark message was deleted.

    Args:
        idle_minutes: minutes since a session last received a message (default
            ``SUMMARY_IDLE_MINUTES``).
        limit: most sessions queued in one call.

    Returns:
        The ids of the sessions queued.
    """
    idle_minutes = settings.SUMMARY_IDLE_MINUTES if idle_minutes is None else idle_minutes
    cutoff = timezone.now() - timedelta(minutes=idle_minutes)
    stale = session_list_behind_summary().filter(updated_at__lte=cutoff).order_by("updated_at", "pk")
    session_ids = list(stale.values_list("pk", flat=True)[:limit])
    for session_id in session_ids:
        async_task("memories.tasks.summarize_session", session_id)
    return session_ids


def summaries_request(
    *,
    user_external_id: str,
    session_external_id: str | None = None,
    overwrite: bool = False,
    max_count: int | None = None,
) -> list[str]:
    """Queue summaries of a user's sessions (one, or all), now rather than when they go idle.

    Args:
        overwrite: rewrite summaries that are already current too.
        max_count: queue at most this many sessions, the most recently active first.

    Returns:
        The external ids of the sessions queued (those without a current summary, or all
        with ``overwrite``).

    Raises:
        ValidationError: a user id no row could have (a NUL character, longer than the column), or a
            ``max_count`` under 1.
    """
    user_id_check(user_external_id=user_external_id)
    if max_count is not None and max_count < 1:
        raise ValidationError({"max_count": ["must be at least 1."]})
    sessions = Session.objects.filter(user__external_id=user_external_id, messages__isnull=False).distinct()
    if not overwrite:
        sessions = sessions.filter(pk__in=session_list_behind_summary().values("pk"))
    if session_external_id is not None:
        sessions = sessions.filter(external_id=session_external_id)
    if max_count is not None:
        sessions = Session.objects.filter(
            pk__in=sessions.order_by(F("last_message_at").desc(nulls_last=True)).values("pk")[:max_count]
        )
    queued = list(sessions.order_by("first_message_at").values_list("pk", "external_id"))
    # Due now, not once idle: the backlog shows it so until the summary is written.
    Session.objects.filter(pk__in=[pk for pk, _ in queued]).update(summary_requested_at=timezone.now())
    for pk, _ in queued:
        job_enqueue(func="memories.tasks.summarize_session", args=(pk, overwrite))
    return [external_id for _, external_id in queued]


def summaries_regenerate(*, summary_ids: list[int]) -> list[int]:
    """Queue these summaries to be written again from their sessions' messages. Returns the session ids."""
    session_ids = list(Summary.objects.filter(pk__in=summary_ids).values_list("session_id", flat=True))
    for session_id in session_ids:
        job_enqueue(func="memories.tasks.summarize_session", args=(session_id, True))
    return session_ids


def summaries_delete(*, user_external_id: str, session_external_id: str | None = None) -> int:
    """Delete a user's summaries (all, or one session's). Returns how many.

    A summary is derived from its session's messages, so a session left without one is
    summarised again by the sweep (``summaries_enqueue_stale``) once it is idle: this clears a
    bad summary, it does not remove what was said (``history_delete`` does).

    Raises:
        ValidationError: a user id no row could have (a NUL character, longer than the column).
    """
    user_id_check(user_external_id=user_external_id)
    summaries = Summary.objects.filter(user__external_id=user_external_id)
    if session_external_id is not None:
        summaries = summaries.filter(session__external_id=session_external_id)
    deleted, _ = summaries.delete()
    return deleted
