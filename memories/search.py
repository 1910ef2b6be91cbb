"""The search pipeline: answer a question about one or more end users from their memory.

Top to bottom:

1. Validate and scope: the query, ``top_k`` and the end users it may look at.
2. Embed the query once.
3. Stage 1 (``memory``): vector retrieval (cosine, HNSW) over summaries, knowledge and
   diaries of those users; the ``top_k`` nearest overall are answered from.
4. Stage 2 (``messages``): when stage 1 found nothing, or ``search_content`` is set and the
   answer model says the data is insufficient, hybrid retrieval over the raw messages (so a
   session with no summary yet is still found): the nearest messages by vector and the best
   by PostgreSQL full-text rank, fused by reciprocal rank and smoothed over neighbouring
   turns; each hit is shown with the turns just before and after it. Then answer again from
   both stages.
5. Return the answer, its mode, the retrieved data as labelled, timestamped blocks, the hits
   and token usage.

Only vectors made by the configured embedding model take part in a ranking.
"""

from __future__ import annotations

import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from functools import lru_cache

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.core.exceptions import ValidationError
from django.db import DataError, connection, models, transaction
from django.db.models.expressions import RawSQL
from pgvector.django import CosineDistance

from memories.llm import Usage, get_chat_model, get_embedder
from memories.models import Diary, Knowledge, KnowledgeStatus, Message, Summary
from memories.selectors import user_ids_for

__all__ = [
    "Hit",
    "ReembeddingNeeded",
    "SearchFilter",
    "SearchResult",
    "retrieve_memory",
    "candidate_pool",
    "retrieve_messages",
    "search_memories",
]

STAGE_MEMORY = "memory"
STAGE_MESSAGES = "messages"
# answer_mode of a retrieval-only search (answer=False).
ANSWER_MODE_NONE = "none"
# Candidates each retriever contributes to the fusion, as a multiple of top_k (at least 50).
_CANDIDATES_PER_TOP_K = 5
_MIN_CANDIDATES = 50
# Reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009) with k = 10 rather than
# their 60: with two rankings, the top ranks should weigh more (measured: README, Benchmarks).
_RRF_K = 10
# A message gains this share of its neighbouring turns' fused scores.
_NEIGHBOUR_WEIGHT = 0.3
# Query words found in more than this share of the scoped messages are left out of full text.
_COMMON_WORD_SHARE = 0.1


class ReembeddingNeeded(Exception):
    """Stored vectors were made by another embedding model than the configured one.

    Raised rather than ranking vectors of two models together; ``manage.py reembed`` (or the
    configuration of the model that made them) fixes it. ``code`` is ``REEMBEDDING_NEEDED``.
    """

    code = "REEMBEDDING_NEEDED"


@dataclass(frozen=True)
class Hit:
    """One retrieved row.

    ``score`` is cosine similarity to the query (1 - cosine distance, -1..1); ``None`` for a
    message found by its words only (not embedded yet, or by another model).
    """

    kind: str
    id: int
    score: float | None
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


@dataclass(frozen=True)
class SearchFilter:
    """Narrows retrieval to a channel and to a window of conversation time.

    ``start``/``end`` bound when things were said (``start`` inclusive, ``end`` exclusive);
    ``first_day``/``last_day`` are the same window as local dates, for diaries. Knowledge has
    neither a channel nor a conversation time, so any filter leaves it out; diaries have no
    channel, so a channel filter leaves them out.
    """

    channel: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    first_day: date | None = None
    last_day: date | None = None

    @classmethod
    def local_days(
        cls, *, since: date | None, until: date | None, utc_offset_hours: float = 0, channel: str | None = None
    ) -> SearchFilter:
        """The window from 00:00 local time on ``since`` to the midnight after ``until``.

        Raises:
            ValidationError: ``until`` before ``since``, or an offset outside -14..14 hours.
        """
        errors: dict[str, list[str]] = {}
        if not -14 <= utc_offset_hours <= 14:
            errors["utcOffsetHours"] = ["utcOffsetHours must be between -14 and 14."]
        if since and until and until < since:
            errors["until"] = ["until must not be before since."]
        if errors:
            raise ValidationError(errors)
        zone = timezone(timedelta(hours=utc_offset_hours))
        return cls(
            channel=channel or None,
            start=datetime.combine(since, time.min, tzinfo=zone) if since else None,
            end=datetime.combine(until + timedelta(days=1), time.min, tzinfo=zone) if until else None,
            first_day=since,
            last_day=until,
        )

    @property
    def is_empty(self) -> bool:
        return self.channel is None and self.start is None and self.end is None

    def messages(self) -> models.Q:
        q = models.Q()
        if self.channel:
            q &= models.Q(channel=self.channel)
        if self.start:
            q &= models.Q(created_at__gte=self.start)
        if self.end:
            q &= models.Q(created_at__lt=self.end)
        return q

    def summaries(self) -> models.Q:
        """Summaries whose covered time overlaps the window."""
        q = models.Q()
        if self.channel:
            q &= models.Q(session__channel=self.channel)
        if self.start:
            q &= models.Q(covers_until__gte=self.start)
        if self.end:
            q &= models.Q(covers_from__lt=self.end)
        return q

    def diaries(self) -> models.Q | None:
        if self.channel:
            return None
        q = models.Q()
        if self.first_day:
            q &= models.Q(diary_date__gte=self.first_day)
        if self.last_day:
            q &= models.Q(diary_date__lte=self.last_day)
        return q

    def knowledge(self) -> models.Q | None:
        return models.Q() if self.is_empty else None


def search_memories(
    *,
    user_external_ids: list[str],
    query: str,
    top_k: int | None = None,
    search_content: bool = False,
    include_retrieved_data: bool = False,
    include_shared: bool = False,
    search_filter: SearchFilter | None = None,
    answer: bool = True,
) -> SearchResult:
    """Answer ``query`` from the memory of the given end users.

    Args:
        user_external_ids: the end users whose memory is searched (one or more).
        query: the question, e.g. ``"What is my favourite food?"``.
        top_k: rows retrieved per stage (default ``SEARCH_DEFAULT_TOP_K``, at most ``SEARCH_MAX_TOP_K``).
        search_content: also search raw messages when the answer model finds stage 1 insufficient.
        include_retrieved_data: return the blocks given to the answer model.
        include_shared: also search system-wide knowledge (no owner).
        search_filter: only this channel and window of conversation time.
        answer: ``False`` retrieves only: no answer model is called (``answer_mode`` is
            ``"none"``), and stage 2 runs when ``search_content`` is set or stage 1 found nothing.

    Returns:
        The answer (``None`` when nothing was found or not asked for), hits of every stage that
        ran, usage.

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
    chat = get_chat_model() if answer else None

    search_filter = search_filter or SearchFilter()
    hits = retrieve_memory(
        user_ids=user_ids,
        vector=vector,
        top_k=top_k,
        include_shared=include_shared,
        multi_user=multi_user,
        search_filter=search_filter,
    )
    stages = [STAGE_MEMORY]
    reply = (
        chat.answer(question=query, blocks=[h.block for h in hits], query_vector=vector) if hits and answer else None
    )
    if reply is not None:
        usage += reply.usage

    if not hits or (search_content and (not answer or not reply.sufficient)):
        stages.append(STAGE_MESSAGES)
        # Messages first: stage 2 runs because stage 1 was not enough.
        hits = (
            retrieve_messages(
                user_ids=user_ids,
                query=query,
                vector=vector,
                top_k=top_k,
                multi_user=multi_user,
                search_filter=search_filter,
            )
            + hits
        )
        if hits and answer:
            reply = chat.answer(question=query, blocks=[h.block for h in hits], query_vector=vector)
            usage += reply.usage

    return SearchResult(
        answer=reply.text if reply is not None and reply.text else None,
        answer_mode=(reply.mode if reply is not None else chat.mode) if answer else ANSWER_MODE_NONE,
        hits=hits,
        stages=stages,
        retrieved_data="\n\n".join(h.block for h in hits) if include_retrieved_data else None,
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


def retrieve_memory(
    *,
    user_ids: list[int],
    vector: list[float],
    top_k: int,
    include_shared: bool = False,
    multi_user: bool = False,
    search_filter: SearchFilter | None = None,
) -> list[Hit]:
    """Stage 1: the ``top_k`` summaries, knowledge and diary entries nearest to ``vector``.

    Args:
        user_ids: primary keys of the end users searched.
        vector: the query embedding.
        top_k: hits returned overall, best first.
        include_shared: also rank system-wide knowledge.
        multi_user: name the user in each block's label.
        search_filter: channel and conversation-time window.
    """
    search_filter = search_filter or SearchFilter()
    owner = models.Q(user_id__in=user_ids)
    summaries = _nearest(
        Summary.objects.select_related("session", "user"), owner & search_filter.summaries(), vector, top_k
    )
    knowledge: list[Knowledge] = []
    if (knowledge_filter := search_filter.knowledge()) is not None:
        knowledge_owner = (owner | models.Q(user__isnull=True) if include_shared else owner) & models.Q(
            status=KnowledgeStatus.ACTIVE
        )
        knowledge = _nearest(
            Knowledge.objects.select_related("user"), knowledge_owner & knowledge_filter, vector, top_k
        )
    diaries: list[Diary] = []
    if (diary_filter := search_filter.diaries()) is not None:
        diaries = _nearest(Diary.objects.select_related("user"), owner & diary_filter, vector, top_k)
    hits = (
        [_summary_hit(s, multi_user) for s in summaries]
        + [_knowledge_hit(k, multi_user) for k in knowledge]
        + [_diary_hit(d, multi_user) for d in diaries]
    )
    return sorted(hits, key=lambda h: -(h.score or 0.0))[:top_k]


# --- Stage 2: messages ---------------------------------------------------------------


def retrieve_messages(
    *,
    user_ids: list[int],
    query: str,
    vector: list[float],
    top_k: int,
    multi_user: bool = False,
    search_filter: SearchFilter | None = None,
) -> list[Hit]:
    """Stage 2: the ``top_k`` messages by fused vector and full-text rankings, with their neighbours.

    1. Each ranking (cosine over embeddings; ``ts_rank`` over the full-text column) contributes
       its best ``candidate_pool(top_k)`` messages; a message scores ``sum(1 / (k + rank))``
       over the rankings it appears in (reciprocal rank fusion, k = 10).
    2. A message also gains ``0.3`` times the fused scores of the turns just before and after
       it: in a conversation the answer often sits next to the turn that matches the words.
    3. Each hit is shown with those neighbouring turns. A hit's ``score`` stays its cosine
       similarity to the query (``None`` without a current vector).

    The constants were chosen on the development LoCoMo file (README, *Benchmarks*).
    """
    pool = candidate_pool(top_k)
    owner = models.Q(user_id__in=user_ids) & (search_filter or SearchFilter()).messages()
    by_vector = _nearest(Message.objects.all(), owner, vector, pool, only_ids=True)
    by_text = _full_text(owner, query, pool)
    fused: dict[int, float] = {}
    for ranking in (by_vector, by_text):
        for rank, pk in enumerate(ranking, start=1):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (_RRF_K + rank)
    links = _neighbour_links(list(fused))
    scores = {
        pk: score + _NEIGHBOUR_WEIGHT * sum(fused.get(n, 0.0) for n in links.get(pk, ()) if n is not None)
        for pk, score in fused.items()
    }
    best = sorted(scores, key=lambda pk: -scores[pk])[:top_k]
    # The hits and their neighbouring turns in one query.
    shown = {n for pk in best for n in links.get(pk, ()) if n is not None} | set(best)
    current_vector = models.Q(embedding__isnull=False, embedding_model=settings.EMBEDDING_MODEL)
    rows = (
        Message.objects.filter(pk__in=shown)
        .select_related("session", "user")
        .defer("embedding")
        .annotate(distance=models.Case(models.When(current_vector, then=_cosine_distance(vector))))
        .in_bulk()
    )
    return [_message_hit(rows[pk], multi_user, _context(pk, links, rows)) for pk in best if pk in rows]


def candidate_pool(top_k: int) -> int:
    """Candidates each message ranking contributes to the fusion for ``top_k`` hits: ``max(50, 5 * top_k)``."""
    return max(_MIN_CANDIDATES, _CANDIDATES_PER_TOP_K * top_k)


def _full_text(owner: models.Q, query: str, limit: int) -> list[int]:
    """Message ids ranked by ``ts_rank`` for any of the query's informative words (English stemming, OR).

    ``ts_rank`` has no inverse document frequency, so a word found in more than 10% of the
    scoped messages (a speaker's name, "like", ...) would outweigh the rare words that
    matter: such words are left out, unless every word is that common.
    """
    words = sorted(set(re.findall(r"\w+", query.lower())))
    if not words:
        return []
    scoped = Message.objects.filter(owner)
    counts = scoped.aggregate(
        total=models.Count("pk"),
        **{
            f"w{i}": models.Count("pk", filter=models.Q(search_vector=SearchQuery(w, config="english")))
            for i, w in enumerate(words)
        },
    )
    informative = [w for i, w in enumerate(words) if 0 < counts[f"w{i}"] <= _COMMON_WORD_SHARE * counts["total"]]
    search_query = SearchQuery(" | ".join(informative or words), search_type="raw", config="english")
    return list(
        scoped.filter(search_vector=search_query)
        .annotate(rank=SearchRank(models.F("search_vector"), search_query))
        .order_by("-rank", "pk")
        .values_list("pk", flat=True)[:limit]
    )


def _neighbour_links(message_ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
    """For each message, the ids of the turns just before and after it in its session."""
    if not message_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT id, prev_id, next_id FROM (
                SELECT id, LAG(id) OVER w AS prev_id, LEAD(id) OVER w AS next_id
                FROM {Message._meta.db_table}
                WHERE session_id IN (SELECT session_id FROM {Message._meta.db_table} WHERE id = ANY(%s))
                WINDOW w AS (PARTITION BY session_id ORDER BY created_at, id)
            ) AS ordered WHERE id = ANY(%s)
            """,
            [message_ids, message_ids],
        )
        return {pk: (prev_id, next_id) for pk, prev_id, next_id in cursor.fetchall()}


def _context(
    message_id: int, links: dict[int, tuple[int | None, int | None]], rows: dict[int, Message]
) -> tuple[Message, ...]:
    """The message with the turns just before and after it, in order (those in ``rows``)."""
    prev_id, next_id = links.get(message_id, (None, None))
    return tuple(rows[i] for i in (prev_id, message_id, next_id) if i is not None and i in rows)


# --- Vector retrieval ----------------------------------------------------------------


def _nearest(
    queryset: models.QuerySet, owner: models.Q, vector: list[float], top_k: int, *, only_ids: bool = False
) -> list:
    """The ``top_k`` rows (or their ids) nearest to ``vector`` by cosine distance among the scoped rows.

    One statement, whatever ``top_k``. Scopes of up to ``EXACT_SEARCH_MAX_ROWS`` embedded rows
    (one end user's memory, nearly always) are ranked exactly: the user's rows come from the
    B-tree on ``user_id`` and are sorted by distance, which is exact and cheap at that size. A
    larger scope uses the HNSW index. The choice is made inside the statement: an uncorrelated
    ``EXISTS (... OFFSET EXACT_SEARCH_MAX_ROWS)`` that PostgreSQL evaluates once, and whichever
    branch of the ``UNION ALL`` it rules out is not run.

    HNSW visits ``hnsw.ef_search`` candidates and filters afterwards, so under a selective
    filter it can return fewer than ``top_k`` rows (pgvector 0.6 README, "Filtering"); when the
    HNSW branch comes back short, the exact ranking is run as a second statement.

    Vectors of every model are ranked; if one made by another model than the configured one
    is among the nearest, the ranking is meaningless and ``ReembeddingNeeded`` is raised
    rather than mixing (likewise for a dimension mismatch).

    Raises:
        ReembeddingNeeded: scoped vectors were made by another embedding model.
    """
    scoped = queryset.filter(owner, embedding__isnull=False).defer("embedding")
    large = models.Exists(
        queryset.model.objects.filter(owner, embedding__isnull=False).values("pk")[
            settings.EXACT_SEARCH_MAX_ROWS : settings.EXACT_SEARCH_MAX_ROWS + 1
        ]
    )
    distance = _cosine_distance(vector)
    # "+ 0": an ORDER BY the HNSW index cannot serve, so the planner sorts the user's rows.
    exact = scoped.annotate(distance=distance, by_hnsw=models.Value(False)).order_by(distance + 0)
    approximate = scoped.filter(large).annotate(distance=distance, by_hnsw=models.Value(True)).order_by("distance")
    if only_ids:
        exact, approximate = (
            q.values_list("pk", "embedding_model", "distance", "by_hnsw") for q in (exact, approximate)
        )
    # In an outer transaction a failed statement would abort it: keep the error in a savepoint.
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            rows = list(exact.filter(~large)[:top_k].union(approximate[:top_k], all=True).order_by("distance"))
            # Short: the scope is small (fine), or HNSW lost rows to the filter (rank exactly).
            by_hnsw = (rows[0][3] if only_ids else rows[0].by_hnsw) if rows else _is_large(queryset.model, owner)
            if len(rows) < top_k and by_hnsw:
                rows = list(exact[:top_k])
    except DataError as exc:  # pgvector: "different vector dimensions 384 and 1536"
        raise _reembedding_needed(queryset.model) from exc
    if any((row[1] if only_ids else row.embedding_model) != settings.EMBEDDING_MODEL for row in rows):
        raise _reembedding_needed(queryset.model)
    return [row[0] for row in rows] if only_ids else rows


def _cosine_distance(vector: list[float]) -> CosineDistance:
    """``embedding <=> '[...]'::vector``, the query vector written out once as a literal parameter.

    pgvector's ``CosineDistance("embedding", vector)`` converts the list again each time the
    expression is compiled (about 0.3 ms for 384 floats, several times per statement).
    """
    return CosineDistance("embedding", RawSQL("%s::vector", (_vector_literal(vector),)))


@lru_cache(maxsize=8)
def _vector_literal_cached(vector: tuple[float, ...]) -> str:
    return "[" + ",".join(map(str, vector)) + "]"


def _vector_literal(vector: list[float]) -> str:
    return _vector_literal_cached(tuple(vector))


def _is_large(model: type[models.Model], owner: models.Q) -> bool:
    """Whether the scope has more than ``EXACT_SEARCH_MAX_ROWS`` embedded rows (it was searched by HNSW)."""
    return model.objects.filter(owner, embedding__isnull=False)[settings.EXACT_SEARCH_MAX_ROWS :].exists()


def _reembedding_needed(model: type[models.Model]) -> ReembeddingNeeded:
    return ReembeddingNeeded(
        f"Stored {model._meta.verbose_name} vectors were made by another embedding model than the configured "
        f"{settings.EMBEDDING_MODEL!r}: run `manage.py reembed`, or configure the model that made them."
    )


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
        conversation_time=datetime.combine(diary.diary_date, time.min, tzinfo=UTC),
    )


def _message_hit(message: Message, multi_user: bool, context: tuple[Message, ...] = ()) -> Hit:
    label = (
        f"[message | session {message.session.external_id}{_who(message.user, multi_user)} | "
        f"{_when(message.created_at)} | {message.speaker} ({message.role})]"
    )
    lines = [("> " if turn.pk == message.pk else "") + turn.embedding_text for turn in context or (message,)]
    return Hit(
        kind="message",
        id=message.pk,
        score=1 - message.distance if message.distance is not None else None,
        content=message.content,
        block=label + "\n" + "\n".join(lines),
        user_id=message.user.external_id,
        conversation_time=message.created_at,
        session_id=message.session.external_id,
    )
