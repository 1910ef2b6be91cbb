"""The search pipeline: answer a question about one or more end users from their memory.

Top to bottom:

1. Validate and scope: the query, ``top_k`` and the end users it may look at.
2. Embed the query once.
3. Stage 1 (``memory``): vector retrieval (cosine, HNSW) over summaries, knowledge and
   diaries of those users; the ``top_k`` nearest overall are answered from.
4. Stage 2 (``messages``): when stage 1 found nothing, or ``search_content`` is set and the
   answer model says the data is insufficient, vector retrieval over the raw messages
   (so a session with no summary yet is still found), then answer again from both.
5. Return the answer, its mode, the retrieved data as labelled, timestamped blocks, the hits
   and token usage.

Only vectors made by the configured embedding model take part in a ranking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, models, transaction
from pgvector.django import CosineDistance

from memories.llm import Usage, get_chat_model, get_embedder
from memories.models import Diary, Knowledge, Message, Summary
from memories.selectors import user_ids_for

__all__ = ["Hit", "SearchResult", "search_memories"]

STAGE_MEMORY = "memory"
STAGE_MESSAGES = "messages"


@dataclass(frozen=True)
class Hit:
    """One retrieved row. ``score`` is cosine similarity (1 - cosine distance, -1..1)."""

    kind: str
    id: int
    score: float
    content: str
    block: str
    user_id: str
    conversation_time: datetime | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """What a search returns. ``retrieved_data`` is ``None`` unless asked for."""

    answer: str | None
    answer_mode: str
    hits: list[Hit]
    stages: list[str]
    retrieved_data: str | None = None
    usage: Usage = field(default_factory=Usage)


def search_memories(
    *,
    user_external_ids: list[str],
    query: str,
    top_k: int | None = None,
    search_content: bool = False,
    include_retrieved_data: bool = False,
    include_shared: bool = False,
) -> SearchResult:
    """Answer ``query`` from the memory of the given end users.

    Args:
        user_external_ids: the end users whose memory is searched (one or more).
        query: the question, e.g. ``"What is my favourite food?"``.
        top_k: rows retrieved per stage (default ``SEARCH_DEFAULT_TOP_K``, at most ``SEARCH_MAX_TOP_K``).
        search_content: also search raw messages when the answer model finds stage 1 insufficient.
        include_retrieved_data: return the blocks given to the answer model.
        include_shared: also search system-wide knowledge (no owner).

    Returns:
        The answer (``None`` when nothing was found), hits of every stage that ran, usage.

    Raises:
        ValidationError: empty query or user list, or ``top_k`` out of range (names the field).
        ModelBackendError: the embedding or chat backend failed.
    """
    top_k = settings.SEARCH_DEFAULT_TOP_K if top_k is None else top_k
    _validate(user_external_ids=user_external_ids, query=query, top_k=top_k)
    user_ids = user_ids_for(external_ids=user_external_ids)
    multi_user = len(set(user_external_ids)) > 1

    embedding = get_embedder().embed([query])
    vector = embedding.vectors[0]
    usage = embedding.usage
    chat = get_chat_model()

    hits = _stage_memory(user_ids=user_ids, vector=vector, top_k=top_k, include_shared=include_shared, multi_user=multi_user)
    stages = [STAGE_MEMORY]
    answer = chat.answer(question=query, blocks=[h.block for h in hits], query_vector=vector) if hits else None
    if answer is not None:
        usage += answer.usage

    if not hits or (search_content and not answer.sufficient):
        stages.append(STAGE_MESSAGES)
        hits = hits + _nearest_messages(user_ids=user_ids, vector=vector, top_k=top_k, multi_user=multi_user)
        if hits:
            answer = chat.answer(question=query, blocks=[h.block for h in hits], query_vector=vector)
            usage += answer.usage

    blocks = [h.block for h in hits]
    return SearchResult(
        answer=answer.text if answer is not None and answer.text else None,
        answer_mode=answer.mode if answer is not None else chat.mode,
        hits=hits,
        stages=stages,
        retrieved_data="\n\n".join(blocks) if include_retrieved_data else None,
        usage=usage,
    )


def _validate(*, user_external_ids: list[str], query: str, top_k: int) -> None:
    errors: dict[str, list[str]] = {}
    if not [u for u in user_external_ids if u.strip()]:
        errors["userIds"] = ["Give at least one userId."]
    if not query.strip():
        errors["query"] = ["query must not be empty."]
    if not 1 <= top_k <= settings.SEARCH_MAX_TOP_K:
        errors["topK"] = [f"topK must be between 1 and {settings.SEARCH_MAX_TOP_K}."]
    if errors:
        raise ValidationError(errors)


# --- Stage 1: summaries, knowledge, diaries ------------------------------------------


def _stage_memory(
    *, user_ids: list[int], vector: list[float], top_k: int, include_shared: bool, multi_user: bool
) -> list[Hit]:
    owner = models.Q(user_id__in=user_ids)
    summaries = _nearest(Summary.objects.select_related("session", "user"), owner, vector, top_k)
    knowledge_owner = owner | models.Q(user__isnull=True) if include_shared else owner
    knowledge = _nearest(Knowledge.objects.select_related("user"), knowledge_owner, vector, top_k)
    diaries = _nearest(Diary.objects.select_related("user"), owner, vector, top_k)
    hits = (
        [_summary_hit(s, multi_user) for s in summaries]
        + [_knowledge_hit(k, multi_user) for k in knowledge]
        + [_diary_hit(d, multi_user) for d in diaries]
    )
    return sorted(hits, key=lambda h: -h.score)[:top_k]


# --- Stage 2: messages ---------------------------------------------------------------


def _nearest_messages(*, user_ids: list[int], vector: list[float], top_k: int, multi_user: bool) -> list[Hit]:
    rows = _nearest(Message.objects.select_related("session", "user"), models.Q(user_id__in=user_ids), vector, top_k)
    return [_message_hit(m, multi_user) for m in rows]


# --- Vector retrieval ----------------------------------------------------------------


def _nearest(queryset: models.QuerySet, owner: models.Q, vector: list[float], top_k: int) -> list[models.Model]:
    """The ``top_k`` rows nearest to ``vector`` by cosine distance among the scoped rows.

    HNSW search visits ``hnsw.ef_search`` candidates before filtering, so a selective user
    filter can return fewer than ``top_k`` rows (pgvector README, "Filtering"). When that
    happens the query is run again as an exact scan.
    """
    queryset = (
        queryset.filter(owner, embedding__isnull=False, embedding_model=settings.EMBEDDING_MODEL)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(settings.HNSW_EF_SEARCH, top_k)])
        rows = list(queryset[:top_k])
        if len(rows) < top_k:
            cursor.execute("SET LOCAL enable_indexscan = off")
            rows = list(queryset[:top_k])
    return rows


# --- Labelled, timestamped blocks ---------------------------------------------------


def _when(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _who(user: object, multi_user: bool) -> str:
    return f" | user {user}" if multi_user else ""


def _summary_hit(summary: Summary, multi_user: bool) -> Hit:
    label = (
        f"[summary | session {summary.session.external_id}{_who(summary.user, multi_user)} | "
        f"{_when(summary.covers_from)} to {_when(summary.covers_until)}]"
    )
    return Hit(
        kind="summary",
        id=summary.pk,
        score=1 - summary.distance,
        content=summary.content,
        block=f"{label}\n{summary.content}",
        user_id=summary.user.external_id,
        conversation_time=summary.covers_from,
        session_id=summary.session.external_id,
    )


def _knowledge_hit(knowledge: Knowledge, multi_user: bool) -> Hit:
    owner = f"user {knowledge.user}" if knowledge.user_id else "shared"
    label = f"[knowledge | {owner} | updated {_when(knowledge.updated_at)}]"
    return Hit(
        kind="knowledge",
        id=knowledge.pk,
        score=1 - knowledge.distance,
        content=knowledge.content,
        block=f"{label}\n{knowledge.content}",
        user_id=knowledge.user.external_id if knowledge.user_id else "",
    )


def _diary_hit(diary: Diary, multi_user: bool) -> Hit:
    label = f"[diary | {diary.diary_date.isoformat()}{_who(diary.user, multi_user)}]"
    return Hit(
        kind="diary",
        id=diary.pk,
        score=1 - diary.distance,
        content=diary.content,
        block=f"{label}\n{diary.content}",
        user_id=diary.user.external_id,
    )


def _message_hit(message: Message, multi_user: bool) -> Hit:
    label = (
        f"[message | session {message.session.external_id}{_who(message.user, multi_user)} | "
        f"{_when(message.created_at)} | {message.speaker} ({message.role})]"
    )
    body = message.embedding_text.split(": ", 1)[-1]
    return Hit(
        kind="message",
        id=message.pk,
        score=1 - message.distance,
        content=message.content,
        block=f"{label}\n{body}",
        user_id=message.user.external_id,
        conversation_time=message.created_at,
        session_id=message.session.external_id,
    )
