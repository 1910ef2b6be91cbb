"""Saving curated rows (knowledge, diaries) so their vectors never describe old text, naming who
changed a fact in its audit history, and forgetting the copies of deleted text that audit trails keep."""

from __future__ import annotations

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.db.models.functions import Cast
from simple_history.models import HistoricalRecords

from memories.kinds import kind_of
from memories.models import Diary, Knowledge
from memories.services.jobs import embedding_enqueue

__all__ = ["API_KEY_ACTOR", "admin_log_forget", "curated_save", "history_record_actor"]

# How a change reason naming an API key begins (``Scope.actor``: ``"api key <name> (#<id>)"``).
API_KEY_ACTOR = "api key "


@transaction.atomic
def curated_save(*, row: Knowledge | Diary) -> Knowledge | Diary:
    """Validate and save a new or edited knowledge or diary row.

    When what is embedded (``embedding_text``) changed, the old vector is dropped in the same
    transaction and a new embedding is queued for the worker; until then the row is not
    ranked by vector search.

    Raises:
        ValidationError: the row is invalid (``full_clean``).
    """
    model = type(row)._meta.concrete_model  # a proxy (the admin's review queue) is the same table
    previous = model.objects.filter(pk=row.pk).first() if row.pk else None
    changed = previous is None or previous.embedding_text != row.embedding_text
    if isinstance(row, Knowledge) and previous is not None and previous.content != row.content:
        # The turns it was raised from said what a person has now corrected: they are not quoted beside it.
        row.corrected = row.corrected or row.source_session_id is not None
    if changed:
        row.embedding = None
        row.embedding_model = ""
    row.full_clean()
    row.save()
    if changed:
        embedding_enqueue(kind=kind_of(model), ids=[row.pk])
    return row


def history_record_actor(*, history_instance: models.Model, **kwargs: object) -> None:
    """Name the API key behind a change in the history row about to be saved (``history_change_reason``).

    A ``pre_create_historical_record`` receiver (django-simple-history). The GraphQL view sets the
    request's ``memory_scope``, whose ``actor`` names the key (``"api key <name> (#<id>)"``); a staff
    member's change is already recorded as ``history_user`` from the request. A reason given
    explicitly is kept; outside a request nothing is added.
    """
    request = getattr(HistoricalRecords.context, "request", None)
    actor = getattr(getattr(request, "memory_scope", None), "actor", "")
    if actor and not history_instance.history_change_reason:
        history_instance.history_change_reason = actor[:100]  # the column's length


def admin_log_forget(*, rows: models.QuerySet) -> int:
    """Remove the admin log's entries (``LogEntry``) about these rows, before they are deleted.

    The admin log keeps each row's ``object_repr`` (its ``str()``: the first words of a fact or
    a message) and ``change_message`` for every edit or delete made in the admin, so deleted
    words could be read back there. (django-simple-history's copies of a fact are removed
    separately, after the delete that records one more.)

    Returns:
        How many log entries were removed.
    """
    content_type = ContentType.objects.get_for_model(rows.model)
    as_text = rows.order_by().annotate(object_id_text=Cast("pk", output_field=models.TextField()))
    entries = LogEntry.objects.filter(content_type=content_type, object_id__in=as_text.values("object_id_text"))
    return entries.delete()[0]
