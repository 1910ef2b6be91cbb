"""Curated knowledge: facts owned by an end user, or shared (system-wide, no owner)."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet
from pgvector.django import CosineDistance

from memories.llm import get_chat_model, get_embedder
from memories.llm.base import FactExtraction
from memories.metrics import FACTS_LEFT_OUT
from memories.models import EndUser, Knowledge, KnowledgeStatus, Role, Session
from memories.services.curation import admin_log_forget, curated_save
from memories.services.embeddings import embeddings_compute, user_subjects
from memories.services.entities import entities_record
from memories.services.user_locks import user_lock
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
        _settle(newest)
    return revived


def knowledge_extract(*, session_id: int) -> list[Knowledge]:
    """Raise durable facts from a session's user messages into knowledge.

    Each fact is a third-person statement (``memories.llm.facts`` offline, one structured LLM call
    otherwise) stored with its source messages, ``said_at`` (the conversation time of its latest
    source message), ``slot`` and ``confidence``, not ``reviewed``. Facts are active at once, or
    candidates when approval comes first (``KNOWLEDGE_CANDIDATES_NEED_APPROVAL``); a fact a person
    rejected is never raised again. A fact within
    ``KNOWLEDGE_DUPLICATE_DISTANCE`` (cosine) of one of the user's active facts or candidates, or of
    any fact this session raised before (rejected or superseded since) and has not said again since,
    is not added again; in a slot, only the same statement (case aside) counts as a duplicate, and
    one the session says more than once is raised as said last. On activation a fact settles
    its slot (see ``knowledge_approve``). The people, pets, places and organisations the turns and
    facts name are recorded (``entities_record``). Safe to run again on the same session.

    Returns:
        The knowledge rows created.

    Raises:
        ModelBackendError: the chat or embedding backend failed; nothing is stored.
    """
    session = Session.objects.select_related("user").filter(pk=session_id).first()
    if session is None:
        return []
    messages = list(session.messages.filter(role=Role.USER).order_by("created_at", "id"))
    if not messages:
        return []
    mine = Knowledge.objects.filter(user=session.user)
    live = Q(status__in=[KnowledgeStatus.ACTIVE, KnowledgeStatus.CANDIDATE])
    known = list(mine.filter(status=KnowledgeStatus.ACTIVE).order_by("created_at", "id").values_list("pk", "content"))
    chat = get_chat_model()
    # A chat model reads when each message was said, to write "next month" as a date; the offline rules skip such facts.
    dated = chat.mode == "generated"
    extraction = _storable(
        chat.extract_facts(messages=[(m.pk, m.dated_text if dated else m.text) for m in messages], known_facts=known)
    )
    if extraction.invalid:
        FACTS_LEFT_OUT.inc(extraction.invalid)
        logger.warning(
            "Fact extraction of session %s: %d facts the model wrote did not fit the schema, even when asked "
            "again, and were left out.",
            session.pk,
            extraction.invalid,
        )
    embedder = get_embedder()
    subjects = user_subjects(user_pk=session.user_id)
    facts = [Knowledge(user=session.user, content=fact.text) for fact in extraction.facts]
    vectors = embeddings_compute(embedder=embedder, rows=facts, subjects=subjects) if facts else []
    status = KnowledgeStatus.CANDIDATE if settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL else KnowledgeStatus.ACTIVE
    rejected = mine.filter(status=KnowledgeStatus.REJECTED)
    said = {m.pk: m.created_at for m in messages}
    cited = [max((said[i] for i in f.message_ids if i in said), default=None) for f in extraction.facts]
    # In a slot, a statement the session repeats is kept as said last: that is when it held.
    last_said: dict[tuple[str, str], datetime] = {}
    for fact, said_at in zip(extraction.facts, cited, strict=True):
        if fact.slot and said_at is not None:
            key = (fact.slot, fact.text.lower())
            last_said[key] = max(said_at, last_said.get(key, said_at))
    created: list[Knowledge] = []
    with transaction.atomic():
        # The user first, as every writer (memories.services.user_locks); forgotten meanwhile: nothing to store.
        if user_lock(user_pk=session.user_id) is None:
            return []
        for fact, vector, said_at in zip(extraction.facts, vectors, cited, strict=True):
            # A fact this session raised before counts whatever became of it (rejected, superseded): summarising
            # the session again must not raise it again, unless the session says it again later. Said again in
            # another session, it is a new statement.
            again = Q(said_at__gte=said_at) if said_at is not None else Q()
            seen = mine.filter(live | (Q(source_session=session) & again))
            # A fact a person rejected never comes back, from whatever session.
            if rejected.filter(content__iexact=fact.text).exists() or _is_duplicate(rejected, vector):
                continue
            if fact.slot:
                if said_at is not None and said_at < last_said[(fact.slot, fact.text.lower())]:
                    continue
                # Near in meaning is not the same in a slot ("lives in Tokyo" / "lives in Osaka"): only
                # the same statement is a duplicate.
                if seen.filter(slot=fact.slot, content__iexact=fact.text).exists() or any(
                    k.slot == fact.slot and k.content.lower() == fact.text.lower() for k in created
                ):
                    continue
            elif _is_duplicate(seen, vector) or any(_close(vector, k.embedding) for k in created):
                continue
            knowledge = Knowledge.objects.create(
                user=session.user,
                content=fact.text,
                status=status,
                source_session=session,
                replaces_id=fact.replaces_id,
                slot=fact.slot or "",
                confidence=fact.confidence,
                said_at=said_at or messages[-1].created_at,
                reviewed=False,
                embedding=vector,
                embedding_model=embedder.model_name,
            )
            knowledge.source_messages.set(fact.message_ids)
            if status == KnowledgeStatus.ACTIVE:
                _settle(knowledge)
            created.append(knowledge)
        # The turns name entities even when they raise no fact ("My friend Sarah works at Google").
        entities_record(user=session.user, messages=messages, knowledge=created, facts=extraction.facts)
    return created


def _storable(extraction: FactExtraction) -> FactExtraction:
    """``extraction`` without the facts ``Knowledge.content`` refuses (over ``MAX_KNOWLEDGE_CHARS``, a
    NUL character, ...), counted with the invalid ones: the worker stores only what the API would."""
    kept = [fact for fact in extraction.facts if not field_errors(Knowledge, "content", fact.text.strip())]
    return replace(extraction, facts=kept, invalid=extraction.invalid + len(extraction.facts) - len(kept))


def _is_duplicate(queryset: QuerySet[Knowledge], vector: list[float]) -> bool:
    return (
        queryset.filter(embedding__isnull=False, embedding_model=settings.EMBEDDING_MODEL)
        .alias(distance=CosineDistance("embedding", vector))
        .filter(distance__lt=settings.KNOWLEDGE_DUPLICATE_DISTANCE)
        .exists()
    )


def _close(a: list[float], b: list[float]) -> bool:
    return 1 - sum(x * y for x, y in zip(a, b, strict=True)) < settings.KNOWLEDGE_DUPLICATE_DISTANCE


def _settle(knowledge: Knowledge) -> None:
    """After ``knowledge`` became active: keep one active fact in its slot, or flag an unslotted conflict.

    In a slot, the fact said last (``said_at``, then ``created_at``, then id) stays active and every
    other one, active or already superseded, becomes superseded by it. Without a slot, a fact that
    names an active fact it contradicts (``replaces``) leaves both active and flags both
    ``needs_review``. Each change is saved row by row so the history records it.
    """
    if knowledge.slot:
        in_slot = list(
            Knowledge.objects.select_for_update().filter(
                user_id=knowledge.user_id,
                slot=knowledge.slot,
                status__in=[KnowledgeStatus.ACTIVE, KnowledgeStatus.SUPERSEDED],
            )
        )
        active = [k for k in in_slot if k.status == KnowledgeStatus.ACTIVE]
        newest = max(active, key=lambda k: (k.said_at or k.created_at, k.created_at, k.pk))
        for older in in_slot:
            if newest.pk not in (older.pk, older.superseded_by_id):
                older.status, older.superseded_by = KnowledgeStatus.SUPERSEDED, newest
                older.save(update_fields=["status", "superseded_by", "updated_at"])
    elif knowledge.replaces_id:
        conflicting = Knowledge.objects.filter(pk=knowledge.replaces_id, status=KnowledgeStatus.ACTIVE).first()
        if conflicting is not None:
            for row in (knowledge, conflicting):
                row.needs_review = True
                row.save(update_fields=["needs_review", "updated_at"])


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
    awaiting = list(
        Knowledge.objects.select_for_update().filter(_AWAITING_REVIEW, pk__in=knowledge_ids).order_by("said_at", "id")
    )
    for knowledge in awaiting:
        activating = knowledge.status == KnowledgeStatus.CANDIDATE
        knowledge.status, knowledge.reviewed = KnowledgeStatus.ACTIVE, True
        knowledge.save(update_fields=["status", "reviewed", "updated_at"])
        if activating:
            _settle(knowledge)
    return len(awaiting)


@transaction.atomic
def knowledge_reject(*, knowledge_ids: list[int]) -> int:
    """Reject these facts awaiting review: kept for the record, never searched, and never raised again.
    Returns how many.

    An active fact that had replaced others in its slot gives its place back (``knowledge_revive``).
    Saved row by row so the history records each rejection and who made it.
    """
    awaiting = list(Knowledge.objects.select_for_update().filter(_AWAITING_REVIEW, pk__in=knowledge_ids))
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
