"""Recording the facts read from a user's turns as knowledge: duplicates, slots, and what a fact replaces.

``facts_record`` is shared by the two ways facts are raised: the offline reader, as the worker embeds
each user turn (``memories.services.embeddings``), and a chat model (an LLM) after a session is
summarised (``memories.services.knowledge.knowledge_extract``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from pgvector.django import CosineDistance

from memories.llm import Embedder
from memories.llm.base import Fact
from memories.llm.reader.syntax import names_in
from memories.metrics import FACTS_LEFT_OUT
from memories.models import EndUser, Knowledge, KnowledgeStatus, Message, Session
from memories.services.embeddings import embeddings_compute, user_subjects
from memories.services.entities import entities_record
from memories.services.user_locks import user_facts_lock, user_lock
from memories.services.validation import field_errors

__all__ = ["MEANING_END_SIMILARITY", "MEANING_SAME_SIMILARITY", "facts_record", "knowledge_settle"]

logger = logging.getLogger(__name__)

# Cosine similarity (all-MiniLM-L6-v2, facts embedded in the first person) at which a fact of a kind
# matched by meaning (``Fact.by_meaning``) speaks of the same thing as an older one of that kind and
# takes its slot: a value said again or changed ("my Lisbon flight is on June 2nd now"), or, lower, one
# that ends it, which shares fewer words with it ("the Lisbon trip is off").
MEANING_SAME_SIMILARITY = 0.7
MEANING_END_SIMILARITY = 0.5
# The nearest facts of a kind an ending is compared with.
_NEAR_FACTS = 5


def facts_record(
    *,
    user: EndUser,
    session: Session,
    facts: Sequence[Fact],
    messages: Sequence[Message],
    embedder: Embedder,
) -> list[Knowledge]:
    """Store ``facts`` raised from ``messages`` (turns of ``user`` in ``session``) as knowledge.

    Each fact is stored with its source messages, ``said_at`` (the conversation time of its latest source
    message), ``slot`` and ``confidence``, not ``reviewed``: active at once, or a candidate when approval
    comes first (``KNOWLEDGE_CANDIDATES_NEED_APPROVAL``). A fact a person rejected is never raised again.
    A fact within ``KNOWLEDGE_DUPLICATE_DISTANCE`` (cosine) of one of the user's active facts or candidates,
    or of any fact this session raised before and has not said again since, is not added again; in a slot,
    only the same statement (case aside) counts as a duplicate, and one said more than once is raised as
    said last. A fact whose slot names a kind (``Fact.by_meaning``) takes the slot of the user's fact of
    that kind nearest it, when at least ``MEANING_SAME_SIMILARITY`` near (``MEANING_END_SIMILARITY`` for a
    fact that ends a value), else a slot of its own. On activation a fact settles its slot
    (``knowledge_settle``). The entities the turns and facts name are recorded (``entities_record``).

    Returns:
        The knowledge rows created.

    Raises:
        ModelBackendError: the embedding backend failed; nothing is stored.
    """
    # The worker stores only what the API would: a fact ``Knowledge.content`` refuses is left out, counted.
    storable = [fact for fact in facts if not field_errors(Knowledge, "content", fact.text.strip())]
    if len(storable) < len(facts):
        FACTS_LEFT_OUT.inc(len(facts) - len(storable))
        logger.warning(
            "Session %s: %d facts did not fit the schema (what the API takes as a fact's content) and were left out.",
            session.pk,
            len(facts) - len(storable),
        )
    facts = storable
    subjects = user_subjects(user_pk=user.pk)
    rows = [Knowledge(user=user, content=fact.text) for fact in facts]
    vectors = embeddings_compute(embedder=embedder, rows=rows, subjects=subjects) if rows else []
    status = KnowledgeStatus.CANDIDATE if settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL else KnowledgeStatus.ACTIVE
    mine = Knowledge.objects.filter(user=user)
    live = Q(status__in=[KnowledgeStatus.ACTIVE, KnowledgeStatus.CANDIDATE])
    rejected = mine.filter(status=KnowledgeStatus.REJECTED)
    said = {m.pk: m.created_at for m in messages}
    cited = [max((said[i] for i in f.message_ids if i in said), default=None) for f in facts]
    last_said: dict[tuple[str, str], datetime] = {}
    for fact, said_at in zip(facts, cited, strict=True):
        if fact.slot and said_at is not None:
            key = (fact.slot, fact.text.lower())
            last_said[key] = max(said_at, last_said.get(key, said_at))
    created: list[Knowledge] = []
    with transaction.atomic():
        # The user first, as every writer (memories.services.user_locks); forgotten meanwhile: nothing to store.
        if user_lock(user_pk=user.pk) is None:
            return []
        user_facts_lock(user_pk=user.pk)
        any_rejected = bool(facts) and rejected.exists()
        for fact, vector, said_at in zip(facts, vectors, cited, strict=True):
            # A fact this session raised before counts whatever became of it (rejected, superseded): reading the
            # session again must not raise it again, unless it is said again later.
            again = Q(said_at__gte=said_at) if said_at is not None else Q()
            seen = mine.filter(live | (Q(source_session=session) & again))
            if any_rejected and (
                rejected.filter(content__iexact=fact.text).exists() or _is_duplicate(rejected, vector)
            ):
                continue
            slot = _slot(fact, vector=vector, mine=mine.filter(live), created=created)
            if slot:
                if said_at is not None and fact.slot and said_at < last_said[(fact.slot, fact.text.lower())]:
                    continue
                # Near in meaning is not the same in a slot ("lives in Tokyo" / "lives in Osaka").
                if seen.filter(slot=slot, content__iexact=fact.text).exists() or any(
                    k.slot == slot and k.content.lower() == fact.text.lower() for k in created
                ):
                    continue
            elif _is_duplicate(seen, vector) or any(_close(vector, k.embedding) for k in created):
                continue
            knowledge = Knowledge.objects.create(
                user=user,
                content=fact.text,
                status=status,
                source_session=session,
                replaces_id=fact.replaces_id,
                slot=slot,
                ends=fact.ends,
                confidence=fact.confidence,
                said_at=said_at or (messages[-1].created_at if messages else None),
                reviewed=False,
                embedding=vector,
                embedding_model=embedder.model_name,
            )
            knowledge.source_messages.set(fact.message_ids)
            if status == KnowledgeStatus.ACTIVE:
                knowledge_settle(knowledge)
            created.append(knowledge)
        entities_record(user=user, messages=messages, knowledge=created, facts=facts)
    return created


def _slot(fact: Fact, *, vector: list[float], mine: QuerySet[Knowledge], created: Sequence[Knowledge]) -> str:
    """The slot ``fact`` is stored in ("" for none): its own, or for a kind matched by meaning, the slot of
    the nearest live fact of that kind when it speaks of the same thing, else one of its own (the kind and
    a digest). The same thing: at least ``MEANING_SAME_SIMILARITY`` near; for a fact that ends a value,
    ``MEANING_END_SIMILARITY`` near and naming something the other names ("leaving Infosys" ends "9 years
    at Infosys", not "senior engineer on the checkout team")."""
    if not fact.slot or not fact.by_meaning:
        return fact.slot or ""
    kind = fact.slot
    same_kind = Q(slot=kind) | Q(slot__startswith=f"{kind}:")
    threshold = MEANING_END_SIMILARITY if fact.ends else MEANING_SAME_SIMILARITY
    near = [
        (1 - distance, slot, content)
        for slot, content, distance in mine.filter(
            same_kind, embedding__isnull=False, embedding_model=settings.EMBEDDING_MODEL
        )
        .annotate(distance=CosineDistance("embedding", vector))
        .filter(distance__lte=1 - threshold)
        .order_by("distance")
        .values_list("slot", "content", "distance")[:_NEAR_FACTS]
    ]
    near += [
        (float(np.dot(vector, k.embedding)), k.slot, k.content)
        for k in created
        if (k.slot == kind or k.slot.startswith(f"{kind}:")) and float(np.dot(vector, k.embedding)) >= threshold
    ]
    names = set(names_in(fact.text))
    for similarity, slot, content in sorted(near, reverse=True):
        if similarity >= MEANING_SAME_SIMILARITY or names & set(names_in(content)):
            return slot
    return f"{kind}:{hashlib.sha1(fact.text.lower().encode()).hexdigest()[:8]}"


def _is_duplicate(queryset: QuerySet[Knowledge], vector: list[float]) -> bool:
    return (
        queryset.filter(embedding__isnull=False, embedding_model=settings.EMBEDDING_MODEL)
        .alias(distance=CosineDistance("embedding", vector))
        .filter(distance__lt=settings.KNOWLEDGE_DUPLICATE_DISTANCE)
        .exists()
    )


def _close(a: list[float], b: list[float]) -> bool:
    return 1 - float(np.dot(a, b)) < settings.KNOWLEDGE_DUPLICATE_DISTANCE


def knowledge_settle(knowledge: Knowledge) -> None:
    """After ``knowledge`` became active: keep one active fact in its slot, or flag an unslotted conflict.

    In a slot, the fact said last (``said_at``, then ``created_at``, then id) stays active and every
    other one, active or already superseded, becomes superseded by it, and so does every fact said
    before it in a slot below it (``pet:rex:...`` below ``pet:rex``). Without a slot, a fact that
    names an active fact it contradicts (``replaces``) leaves both active and flags both
    ``needs_review``. Each change is saved row by row so the history records it.
    """
    if knowledge.slot:
        rows = list(
            Knowledge.objects.select_for_update().filter(
                Q(slot=knowledge.slot) | Q(slot__startswith=f"{knowledge.slot}:"),
                user_id=knowledge.user_id,
                status__in=[KnowledgeStatus.ACTIVE, KnowledgeStatus.SUPERSEDED],
            )
        )
        in_slot = [k for k in rows if k.slot == knowledge.slot]
        active = [k for k in in_slot if k.status == KnowledgeStatus.ACTIVE]
        newest = max(active, key=_said)
        # What a slot's sub-slots held before ("pet:rex:..." before "pet:rex" said it ended) goes with it.
        older_below = [k for k in rows if k.slot != knowledge.slot and _said(k) < _said(newest)]
        for older in in_slot + older_below:
            if newest.pk not in (older.pk, older.superseded_by_id):
                older.status, older.superseded_by = KnowledgeStatus.SUPERSEDED, newest
                older.save(update_fields=["status", "superseded_by", "updated_at"])
    elif knowledge.replaces_id:
        conflicting = Knowledge.objects.filter(pk=knowledge.replaces_id, status=KnowledgeStatus.ACTIVE).first()
        if conflicting is not None:
            for row in (knowledge, conflicting):
                row.needs_review = True
                row.save(update_fields=["needs_review", "updated_at"])


def _said(knowledge: Knowledge) -> tuple[datetime, datetime, int]:
    return (knowledge.said_at or knowledge.created_at, knowledge.created_at, knowledge.pk)
