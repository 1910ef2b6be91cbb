"""Curated knowledge: facts owned by an end user, or shared (system-wide, no owner)."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet

from memories.llm import get_chat_model, get_embedder
from memories.metrics import FACTS_LEFT_OUT
from memories.models import EndUser, Knowledge, KnowledgeStatus, Role, Session
from memories.services.curation import admin_log_forget, curated_save
from memories.services.facts import facts_record, knowledge_settle
from memories.services.user_locks import user_lock, users_facts_lock
from memories.services.validation import field_errors, raise_if, user_id_errors

logger = logging.getLogger(__name__)

__all__ = [
    "knowledge_add",
    "knowledge_approve",
    "knowledge_delete",
    "knowledge_extract",
    "knowledge_reject",
    "knowledge_review",
    "knowledge_review_queue",
    "knowledge_revive",
    "knowledge_update",
]


def _owned(*, knowledge_id: int, user_external_id: str | None) -> Knowledge:
    """The entry with this id owned by this user (``None``: a shared entry).

    Raises:
        Knowledge.DoesNotExist: no such entry for that owner.
    """
    # of=self: the owner's filter joins the user, whose row FOR UPDATE would lock too (memories.services.user_locks).
    queryset = Knowledge.objects.select_for_update(of=("self",))
    owner = {"user__isnull": True} if user_external_id is None else {"user__external_id": user_external_id}
    knowledge = queryset.filter(pk=knowledge_id, **owner).first()
    if knowledge is None:
        what = "shared knowledge" if user_external_id is None else f"knowledge of user {user_external_id!r}"
        raise Knowledge.DoesNotExist(f"No {what} with id {knowledge_id}.")
    return knowledge


def _lock_owners(knowledge_ids: list[int]) -> None:
    """Take the locks of the facts' owners as the worker does (``users_facts_lock``), before locking a fact."""
    users_facts_lock(user_pks=Knowledge.objects.filter(pk__in=knowledge_ids).values_list("user_id", flat=True))


def _check(*, user_external_id: str | None, content: str | None = None, new_owner: bool = False) -> None:
    """Refuse what ``EndUser.external_id`` and ``Knowledge.content`` would (``content`` as stored,
    stripped); an empty user id only with ``new_owner`` (the user is created if missing).

    Raises:
        ValidationError: keyed ``user_external_id`` and/or ``content``.
    """
    user_errors = [] if user_external_id is None else user_id_errors(user_external_id)
    if new_owner and [e.code for e in user_errors] == ["blank"]:
        # An empty id is a caller's bug, not a request for shared knowledge (omit it for that).
        user_errors = [ValidationError("must not be empty (omit it for shared knowledge).", code="blank")]
    elif not new_owner:
        user_errors = [e for e in user_errors if e.code != "blank"]
    raise_if(
        [
            ("user_external_id", user_errors),
            ("content", field_errors(Knowledge, "content", content.strip()) if content is not None else []),
        ]
    )


@transaction.atomic
def knowledge_add(*, user_external_id: str | None, content: str) -> Knowledge:
    """Add a fact for an end user, or a shared one (``user_external_id=None``); embedded by the worker.

    Raises:
        ValidationError: empty content or over ``MAX_KNOWLEDGE_CHARS``, an empty or blank user id
            (``""`` is not shared), a user id over its column's length, or a NUL character or lone
            surrogate in either.
    """
    _check(user_external_id=user_external_id, content=content, new_owner=True)
    content = content.strip()
    user = EndUser.objects.get_or_create(external_id=user_external_id)[0] if user_external_id is not None else None
    return curated_save(row=Knowledge(user=user, content=content))


@transaction.atomic
def knowledge_update(
    *, knowledge_id: int, user_external_id: str | None, content: str, candidates: bool = True
) -> Knowledge:
    """Change a fact's text (a candidate's too); its old vector is dropped at once and a new one made
    by the worker. ``candidates=False``: the caller may not curate, so a candidate is refused.

    Raises:
        ValidationError: empty content or over ``MAX_KNOWLEDGE_CHARS``, a user id over its column's
            length, or a NUL character or lone surrogate in either.
        Knowledge.DoesNotExist: no such entry for that owner.
        PermissionDenied: the entry is a candidate and ``candidates`` is false.
    """
    _check(user_external_id=user_external_id, content=content)
    content = content.strip()
    knowledge = _owned(knowledge_id=knowledge_id, user_external_id=user_external_id)
    if not candidates and knowledge.status == KnowledgeStatus.CANDIDATE:
        raise PermissionDenied(
            f"Knowledge {knowledge_id} is a candidate: editing it needs an API key that may curate "
            "(`manage.py create_api_key ... --may-curate`, or tick it in the admin)."
        )
    if knowledge.content == content and knowledge.reviewed:
        return knowledge
    knowledge.content = content
    knowledge.reviewed = True  # a person wrote what it says now
    return curated_save(row=knowledge)


@transaction.atomic
def knowledge_delete(*, knowledge_id: int, user_external_id: str | None) -> int:
    """Delete a fact, and every copy of its text in its audit history and the admin log. Returns its id.

    A fact it superseded is active again when nothing else in its slot is (``knowledge_revive``).

    Raises:
        ValidationError: a user id over its column's length or with a NUL character.
        Knowledge.DoesNotExist: no such entry for that owner.
    """
    _check(user_external_id=user_external_id)
    if user_external_id is not None:  # the owner first, as every delete (memories.services.user_locks)
        user_lock(user_external_id=user_external_id, exclusive=True)
    _lock_owners([knowledge_id])
    knowledge = _owned(knowledge_id=knowledge_id, user_external_id=user_external_id)
    superseded = list(knowledge.supersedes.values_list("pk", flat=True))
    admin_log_forget(rows=Knowledge.objects.filter(pk=knowledge_id))
    knowledge.delete()
    # After the delete: django-simple-history records each deleted row, text and all.
    Knowledge.history.filter(id=knowledge_id).delete()
    knowledge_revive(knowledge_ids=superseded)
    return knowledge_id


@transaction.atomic
def knowledge_revive(*, knowledge_ids: list[int]) -> int:
    """After the facts that superseded these were deleted: in each slot they left without an active
    fact, the one of the slot said last becomes active again and supersedes the others; in a slot
    that still has an active fact, they are superseded by it. Returns how many became active.
    """
    orphaned = Knowledge.objects.filter(
        pk__in=knowledge_ids, status=KnowledgeStatus.SUPERSEDED, superseded_by__isnull=True
    ).exclude(slot="")
    users_facts_lock(user_pks=orphaned.values_list("user_id", flat=True))
    revived = 0
    for user_id, slot in set(orphaned.values_list("user_id", "slot")):
        in_slot = Knowledge.objects.select_for_update().filter(user_id=user_id, slot=slot)
        newest = in_slot.filter(status=KnowledgeStatus.ACTIVE).first()
        if newest is None:
            superseded = list(in_slot.filter(status=KnowledgeStatus.SUPERSEDED))
            newest = max(superseded, key=lambda k: (k.said_at or k.created_at, k.created_at, k.pk))
            newest.status = KnowledgeStatus.ACTIVE
            newest.save(update_fields=["status", "updated_at"])
            revived += 1
        knowledge_settle(newest)
    return revived


def knowledge_extract(*, session_id: int) -> list[Knowledge]:
    """Raise durable facts from a session's user messages into knowledge, with a chat model that writes them
    (an LLM: one structured call); stored by ``facts_record``. With the offline chat model nothing is done
    here: its reader reads each user turn as the worker embeds it (``memories.services.reading``). Safe to
    run again on the same session.

    Returns:
        The knowledge rows created.

    Raises:
        ModelBackendError: the chat or embedding backend failed; nothing is stored.
    """
    session = Session.objects.select_related("user").filter(pk=session_id).first()
    chat = get_chat_model()
    if session is None or chat.mode == "extractive":
        return []
    messages = list(session.messages.filter(role=Role.USER).order_by("created_at", "id"))
    if not messages:
        return []
    known = list(
        Knowledge.objects.filter(user=session.user, status=KnowledgeStatus.ACTIVE)
        .order_by("created_at", "id")
        .values_list("pk", "content")
    )
    # A chat model reads when each message was said, to write "next month" as a date.
    extraction = chat.extract_facts(messages=[(m.pk, m.dated_text) for m in messages], known_facts=known)
    if extraction.invalid:
        FACTS_LEFT_OUT.inc(extraction.invalid)
        logger.warning(
            "Fact extraction of session %s: %d facts the model wrote did not fit the schema, even when asked "
            "again, and were left out.",
            session.pk,
            extraction.invalid,
        )
    return facts_record(
        user=session.user, session=session, facts=extraction.facts, messages=messages, embedder=get_embedder()
    )


# What a reviewer may approve or reject: candidates, and facts raised from a conversation and used at once.
_AWAITING_REVIEW = Q(status=KnowledgeStatus.CANDIDATE) | Q(status=KnowledgeStatus.ACTIVE, reviewed=False)


def knowledge_review_queue() -> QuerySet[Knowledge]:
    """Facts awaiting a person's review, newest first: candidates and the unreviewed active facts."""
    return Knowledge.objects.filter(_AWAITING_REVIEW).order_by("-created_at", "-id")


@transaction.atomic
def knowledge_approve(*, knowledge_ids: list[int]) -> int:
    """Approve these facts awaiting review: candidates become active, and each is marked reviewed.
    Returns how many.

    Whatever the order facts are approved in, within a user's slot (``Knowledge.slot``) only the fact
    said last by conversation time (``said_at``) stays active; the others become superseded by it
    (kept, with their history). An unslotted fact that contradicts an active one (``replaces``) is
    activated and both are flagged ``needs_review`` for a curator.
    """
    _lock_owners(knowledge_ids)
    awaiting = list(
        Knowledge.objects.select_for_update().filter(_AWAITING_REVIEW, pk__in=knowledge_ids).order_by("said_at", "id")
    )
    for knowledge in awaiting:
        activating = knowledge.status == KnowledgeStatus.CANDIDATE
        knowledge.status, knowledge.reviewed = KnowledgeStatus.ACTIVE, True
        knowledge.save(update_fields=["status", "reviewed", "updated_at"])
        if activating:
            knowledge_settle(knowledge)
    return len(awaiting)


@transaction.atomic
def knowledge_reject(*, knowledge_ids: list[int]) -> int:
    """Reject these facts awaiting review: kept for the record, never searched, and never raised again.
    Returns how many.

    An active fact that had replaced others in its slot gives its place back (``knowledge_revive``).
    Saved row by row so the history records each rejection and who made it.
    """
    _lock_owners(knowledge_ids)
    awaiting = list(Knowledge.objects.select_for_update().filter(_AWAITING_REVIEW, pk__in=knowledge_ids).order_by("id"))
    for knowledge in awaiting:
        replaced = list(knowledge.supersedes.values_list("pk", flat=True))
        knowledge.status, knowledge.reviewed = KnowledgeStatus.REJECTED, True
        knowledge.save(update_fields=["status", "reviewed", "updated_at"])
        if replaced:
            Knowledge.objects.filter(pk__in=replaced).update(superseded_by=None)
            knowledge_revive(knowledge_ids=replaced)
    return len(awaiting)


@transaction.atomic
def knowledge_review(*, knowledge_id: int, user_external_id: str, approve: bool) -> Knowledge:
    """Approve (``knowledge_approve``) or reject (``knowledge_reject``) one fact of an end user awaiting
    review (a candidate, or a fact raised from a conversation and used at once).

    Returns:
        The entry as it is afterwards (approved: ``active``, or ``superseded`` when its slot holds a
        fact said later; rejected: ``rejected``), reviewed.

    Raises:
        ValidationError: a user id PostgreSQL would refuse, or the entry is not awaiting review
            (``knowledge_id``).
        Knowledge.DoesNotExist: no such entry for that user.
    """
    _check(user_external_id=user_external_id)
    knowledge = _owned(knowledge_id=knowledge_id, user_external_id=user_external_id)
    if not Knowledge.objects.filter(_AWAITING_REVIEW, pk=knowledge.pk).exists():
        state = "reviewed" if knowledge.reviewed else knowledge.status
        raise ValidationError({"knowledge_id": [f"Knowledge {knowledge_id} is {state}, not awaiting review."]})
    (knowledge_approve if approve else knowledge_reject)(knowledge_ids=[knowledge_id])
    knowledge.refresh_from_db()
    return knowledge


def knowledge_delete_all(*, user_external_id: str) -> int:
    """Delete every fact of a user (any status), each as ``knowledge_delete`` does. Returns how many.

    Raises:
        ValidationError: a user id over its column's length or with a NUL character.
    """
    _check(user_external_id=user_external_id)
    ids = list(Knowledge.objects.filter(user__external_id=user_external_id).values_list("pk", flat=True))
    for knowledge_id in ids:
        knowledge_delete(knowledge_id=knowledge_id, user_external_id=user_external_id)
    return len(ids)
