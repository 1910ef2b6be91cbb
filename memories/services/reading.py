"""What the worker does with new messages: embed them, and read them as they arrive.

A message is embedded (``embeddings_compute``), given its dialogue act, and, for a user's turn, read
for facts (``memories.llm.reader``) in the same model call and the same transaction, so a fact told in
one session is current seconds later in the next, not only once its session is summarised. The reader
reuses the vectors the message's sentences were embedded with when the configured embedding model is
the one its classifiers were trained on; otherwise it embeds them with that model, which ships with
the service. With a chat model that writes (an LLM), facts come from it after a session is summarised
(``knowledge_extract``) instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from memories.kinds import MemoryKind
from memories.llm import Embedder, ModelBackendError, get_chat_model, get_embedder
from memories.llm.reader import read_turns, reader_embedding
from memories.models import Message, Role
from memories.services.embeddings import embeddings_compute, embeddings_pending
from memories.services.facts import facts_record
from memories.services.user_locks import user_lock

__all__ = ["messages_embed", "messages_embed_claimed", "reads_turns"]


def reads_turns() -> bool:
    """Whether facts are read from each user turn as it is embedded (the offline chat model), rather than
    raised by a chat model after a session is summarised."""
    return get_chat_model().mode == "extractive"


def messages_embed(*, embedder: Embedder, rows: Sequence[Message]) -> int:
    """Embed ``rows`` (new messages), set their dialogue acts, and record the facts of the user's turns
    among them (``facts_record``, per session). Returns how many messages were embedded.

    Raises:
        ModelBackendError: the embedding backend failed; nothing is written.
    """
    parts: dict[str, np.ndarray] = {}
    vectors = embeddings_compute(embedder=embedder, rows=rows, parts_out=parts)
    for row, vector in zip(rows, vectors, strict=True):
        row.embedding = vector
        row.embedding_model = embedder.model_name
    embed, reuse = reader_embedding(embedder)
    known = parts if reuse else None
    with_facts = reads_turns()
    users = [r for r in rows if r.role == Role.USER]
    others = [r for r in rows if r.role != Role.USER]
    readings = {}
    for group, facts in ((users, with_facts), (others, False)):
        turns = [(r.pk, r.speaker if r.named_speaker else None, r.content.strip()) for r in group]
        readings.update((t.message_id, t) for t in read_turns(turns, embed=embed, vectors=known, facts=facts))
    for row in rows:
        row.dialogue_act = readings[row.pk].act
        row.slot = readings[row.pk].slot if with_facts else ""
    with transaction.atomic():
        Message.objects.bulk_update(rows, ["embedding", "embedding_model", "dialogue_act", "slot"])
        # A turn read before (embedded again for another model) or that came with its facts (an import) is
        # not read again: its facts and entities are known, and may have been curated since.
        unread = [row for row in users if not row.read]
        Message.objects.filter(pk__in=[row.pk for row in unread]).update(read=True)
        by_session: dict[int, list[Message]] = defaultdict(list)
        for row in unread:
            by_session[row.session_id].append(row)
        # By user, in one order for every worker: each user's facts lock is held until the commit.
        for _, session_rows in sorted(by_session.items(), key=lambda item: (item[1][0].user_id, item[0])):
            facts = [r.fact() for row in session_rows for r in readings[row.pk].readings if r.is_fact]
            session = session_rows[0].session
            # The people, places and pets a turn names are recorded even when it raises no fact.
            facts_record(
                user=session.user,
                session=session,
                facts=facts if with_facts else [],
                messages=session_rows,
                embedder=embedder,
            )
    return len(rows)


def messages_embed_claimed(*, ids: Iterable[int], batch_size: int | None = None) -> int:
    """Embed and read the messages of ``ids`` that need it, each model call filled up with other new messages.

    What the worker's embedding task runs. Every ``addMessages`` call queues one task for its
    own messages, so with small calls most tasks hold a message or two, and a model call per
    task would run far below the model's batch throughput. Here each call takes up to
    ``batch_size`` rows: the task's own messages that need a vector (none yet, or one of
    another model) first, then the oldest other messages with no vector. Rows are claimed
    with ``SELECT ... FOR NO KEY UPDATE SKIP LOCKED`` for the length of the model call, so
    concurrent workers never embed the same message and never wait for each other: own
    rows another worker holds are left to it (it writes their vectors), and the tasks
    queued for messages embedded this way find nothing left to do. (Messages are never
    edited, so the row locks only make a concurrent delete of those messages wait for the
    call.)

    Args:
        ids: the task's own message ids.
        batch_size: texts per embedding call (default ``EMBEDDING_BATCH_SIZE``).

    Returns:
        How many messages were embedded (own and others).

    Raises:
        ModelBackendError: the embedding backend failed on the task's own messages (that call's
            rows keep their old vector or none). When a topped-up call fails, the own messages
            are embedded alone, so one message the backend refuses never blocks the others.
    """
    embedder = get_embedder()
    batch_size = batch_size or settings.EMBEDDING_BATCH_SIZE
    own = set(ids)
    done = 0
    while own:
        with transaction.atomic():
            rows = _claim(embeddings_pending(kind=MemoryKind.MESSAGE).filter(pk__in=own), batch_size)
            if not rows:
                # Own rows all embedded, or being embedded by another worker right now.
                return done
            mine = len(rows)
            if mine < batch_size:
                rows += _claim(Message.objects.filter(embedding__isnull=True).exclude(pk__in=own), batch_size - mine)
            try:
                done += messages_embed(embedder=embedder, rows=rows)
            except ModelBackendError:
                if mine == len(rows):
                    raise
                # One of the other messages may be what the backend refuses (too long, say),
                # and it would be in every topped-up batch: the own messages alone, then.
                rows = rows[:mine]
                done += messages_embed(embedder=embedder, rows=rows)
            own -= {row.pk for row in rows}
    return done


def _claim(pending: QuerySet[Message], limit: int) -> list[Message]:
    """Lock up to ``limit`` of ``pending`` (oldest first) that no other worker holds, with their sessions and
    users. Their users' rows are locked first (``FOR KEY SHARE``), as every writer of a user's rows does
    (``memories.services.user_locks``), since their facts are written in the same transaction: a
    ``forgetUser`` waits for the call, never deadlocks with it. A user forgotten meanwhile has no rows left.
    The messages are locked ``FOR NO KEY UPDATE``: a summary written meanwhile, which refers to them, is
    checked against them at its commit without waiting for this transaction."""
    users = sorted(set(pending.order_by("pk").values_list("user_id", flat=True)[:limit]))
    for user_pk in users:
        user_lock(user_pk=user_pk)
    return list(
        pending.filter(user_id__in=users)
        .select_for_update(skip_locked=True, of=("self",), no_key=True)
        .select_related("session__user")
        .order_by("pk")[:limit]
    )
