"""Deleting history, and forgetting an end user entirely."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max, Min, Q, QuerySet
from django.db.models.functions import Coalesce

from memories.database import retry_transient
from memories.kinds import KINDS, MemoryKind
from memories.models import Diary, EndUser, Entity, Knowledge, Message, Session, Summary
from memories.services.curation import admin_log_forget
from memories.services.jobs import job_enqueue, jobs_forget
from memories.services.knowledge import knowledge_revive
from memories.services.user_locks import user_lock
from memories.services.validation import user_id_check

__all__ = ["HistoryDeleted", "UserForgotten", "history_delete", "user_forget"]

# Messages deleted per statement by ``user_forget``.
DELETE_CHUNK = 10_000


@dataclass(frozen=True)
class HistoryDeleted:
    """Counts of what ``history_delete`` removed, and the sessions queued for a new summary."""

    messages: int
    sessions: int
    summaries: int
    resummarized_session_ids: list[str]


@retry_transient
@transaction.atomic
def history_delete(
    *, user_external_id: str, session_external_id: str | None = None, channel: str | None = None
) -> HistoryDeleted:
    """Delete a user's messages (all, one session's, or one channel's).

    The summaries of every session that lost messages, the knowledge raised from those
    messages, and the entities no remaining turn or fact names, are deleted in the same
    transaction, so deleted words cannot come back through search or ``entities`` (an entity
    still mentioned is dated by its remaining turns, or else by its remaining facts); so are the
    copies of their text in the facts' audit history, the admin log and the records of tasks that
    failed on them. A fact a deleted one
    superseded is active again when nothing else in its slot is. A session that still has
    messages is queued to be summarised again. A session left empty is deleted.

    Args:
        user_external_id: required: a delete is always scoped to one end user.
        session_external_id: only this session (``None``: every session; ``""`` matches none).
        channel: only messages of this channel (``None``: every channel; ``""``: messages without one).

    Raises:
        ValidationError: a user id no row could have (a NUL character, longer than the column).
    """
    user_id_check(user_external_id=user_external_id)
    user_lock(user_external_id=user_external_id, exclusive=True)
    messages = Message.objects.filter(user__external_id=user_external_id)
    if session_external_id is not None:
        messages = messages.filter(session__external_id=session_external_id)
    if channel is not None:
        messages = messages.filter(channel=channel)
    session_ids = set(messages.values_list("session_id", flat=True).distinct())
    mentioned = set(Entity.objects.filter(messages__in=messages.values("pk")).values_list("pk", flat=True))
    # Lock the sessions first so a summary being written concurrently sees the delete (summary_create).
    list(Session.objects.select_for_update(of=("self",)).filter(pk__in=session_ids).values_list("pk", flat=True))
    # Facts raised from these messages would bring the deleted words back: they go too, and so
    # do facts raised from these sessions that name no source message (a chat model may cite
    # none), since they may come from any of them.
    cited = Q(source_messages__in=messages.values("pk"))
    uncited = Q(source_session_id__in=session_ids, source_messages__isnull=True)
    raised = Knowledge.objects.filter(cited | uncited)
    raised_ids = list(raised.values_list("pk", flat=True).distinct())
    # A fact citing no turn names its entities alone.
    mentioned |= set(Entity.objects.filter(knowledge__in=raised_ids).values_list("pk", flat=True))
    superseded = list(
        Knowledge.objects.filter(superseded_by__in=raised_ids).exclude(pk__in=raised_ids).values_list("pk", flat=True)
    )
    # The admin log quotes the first words of each row it logged: those entries go too; so do the
    # records of failed tasks on these rows, whose errors may quote them.
    admin_log_forget(rows=Knowledge.objects.filter(pk__in=raised_ids))
    admin_log_forget(rows=messages)
    admin_log_forget(rows=Summary.objects.filter(session_id__in=session_ids))
    jobs_forget(
        session_ids=session_ids,
        row_ids={
            MemoryKind.MESSAGE: messages.values_list("pk", flat=True),
            MemoryKind.KNOWLEDGE: raised_ids,
            MemoryKind.SUMMARY: Summary.objects.filter(session_id__in=session_ids).values_list("pk", flat=True),
        },
    )
    Knowledge.objects.filter(pk__in=raised_ids).delete()
    # After the delete: django-simple-history records each deleted row, text and all.
    Knowledge.history.filter(id__in=raised_ids).delete()
    knowledge_revive(knowledge_ids=superseded)
    message_count = _delete_messages(messages)
    summaries, _ = Summary.objects.filter(session_id__in=session_ids).delete()
    emptied = Session.objects.filter(pk__in=session_ids, messages__isnull=True)
    emptied_count, _ = emptied.delete()
    # An entity of the deleted turns that no turn or fact names any more was named only in the deleted words.
    orphans = Entity.objects.filter(pk__in=mentioned, messages__isnull=True, knowledge__isnull=True)
    admin_log_forget(rows=orphans)
    orphans.delete()
    # The others are mentioned when their remaining turns were said, or else their facts (as entities_record does).
    fact_time = Coalesce("knowledge__said_at", "knowledge__created_at")
    for entity in Entity.objects.filter(pk__in=mentioned).annotate(
        first=Min("messages__created_at"),
        last=Max("messages__created_at"),
        first_fact=Min(fact_time),
        last_fact=Max(fact_time),
    ):
        first, last = (entity.first, entity.last) if entity.first is not None else (entity.first_fact, entity.last_fact)
        Entity.objects.filter(pk=entity.pk).update(first_mentioned_at=first, last_mentioned_at=last)
    remaining = list(Session.objects.filter(pk__in=session_ids).values_list("pk", "external_id"))
    for pk, _external_id in remaining:
        job_enqueue(func="memories.tasks.summarize_session", args=(pk,))
    for session in Session.objects.filter(pk__in=[pk for pk, _ in remaining]).annotate(
        first=Min("messages__created_at"), last=Max("messages__created_at")
    ):
        Session.objects.filter(pk=session.pk).update(first_message_at=session.first, last_message_at=session.last)
    return HistoryDeleted(
        messages=message_count,
        sessions=emptied_count,
        summaries=summaries,
        resummarized_session_ids=[external_id for _, external_id in remaining],
    )


@dataclass(frozen=True)
class UserForgotten:
    """How many rows of each kind ``user_forget`` removed."""

    messages: int
    sessions: int
    summaries: int
    knowledge: int
    diaries: int


@retry_transient
@transaction.atomic
def user_forget(*, user_external_id: str) -> UserForgotten:
    """Remove every row of an end user (messages, sessions, summaries, knowledge, diaries), and
    the copies of their text in the facts' audit history, the admin log and the records of the
    tasks that failed on them.

    The user's row is locked first (``memories.services.user_locks``), so the worker's tasks on the
    user wait for the delete or it for them, never both; a deadlock or serialization failure runs
    the whole forget again (``retry_transient``). What forgetting leaves on disk, and the command
    that removes it: docs/operations.md.

    Returns:
        The counts (all zero for an unknown user).

    Raises:
        ValidationError: a user id no row could have (a NUL character, longer than the column).
    """
    user_id_check(user_external_id=user_external_id)
    user = EndUser.objects.filter(pk=user_lock(user_external_id=user_external_id, exclusive=True)).first()
    if user is None:
        return UserForgotten(messages=0, sessions=0, summaries=0, knowledge=0, diaries=0)
    user_pk = user.pk  # delete() sets it to None
    # The admin log quotes the first words of each row it logged (an edited fact, a deleted
    # message): forget those entries before the rows they point at.
    for model in (Message, Session, Summary, Knowledge, Diary, Entity):
        admin_log_forget(rows=model.objects.filter(user=user))
    admin_log_forget(rows=EndUser.objects.filter(pk=user_pk))
    # The records of failed tasks on their rows: their errors may quote the user's words.
    jobs_forget(
        session_ids=Session.objects.filter(user=user).values_list("pk", flat=True),
        row_ids={
            kind: spec.model.objects.filter(user=user).values_list("pk", flat=True) for kind, spec in KINDS.items()
        },
    )
    messages = _delete_messages(Message.objects.filter(user=user))
    _, per_model = user.delete()
    # The audit trail keeps old texts, and django-simple-history has just recorded each deleted
    # fact, text and all: forget them too.
    Knowledge.history.filter(user_id=user_pk).delete()
    return UserForgotten(
        messages=messages,
        sessions=per_model.get(Session._meta.label, 0),
        summaries=per_model.get(Summary._meta.label, 0),
        knowledge=per_model.get(Knowledge._meta.label, 0),
        diaries=per_model.get(Diary._meta.label, 0),
    )


def _delete_messages(messages: QuerySet[Message]) -> int:
    """Delete ``messages`` ``DELETE_CHUNK`` at a time and return how many went.

    Django deletes what refers to the rows it deletes with one ``IN (...)`` of all their ids, and
    PostgreSQL takes at most 65,535 parameters per statement.
    """
    deleted = 0
    while chunk := list(messages.values_list("pk", flat=True)[:DELETE_CHUNK]):
        deleted += Message.objects.filter(pk__in=chunk).delete()[1].get(Message._meta.label, 0)
    return deleted
