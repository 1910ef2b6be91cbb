"""The search pipeline: answer a question about one or more end users from their memory.

Top to bottom:

1. Validate and scope: the query, ``top_k`` and the end users it may look at.
2. Embed the query once, in the model's own process; meanwhile, when raw messages are to be
   searched, this thread runs stage 2's full-text ranking, which needs no vector. Each
   statement looks the end users up by external id itself (``SearchedUsers``).
3. Stage 1 (``memory``): vector retrieval (cosine, HNSW) over summaries, knowledge and
   diaries of those users; the ``top_k`` nearest overall are answered from.
4. Stage 2 (``messages``): when stage 1 found nothing, or ``search_content`` is set and the
   answer model says the data is insufficient, hybrid retrieval over the raw messages (so a
   session with no summary yet is still found): the nearest messages by vector and the best
   by BM25 over PostgreSQL full-text vectors, fused by weighted reciprocal rank and smoothed
   over neighbouring turns; each hit is shown with the turns just before and after it. Then
   answer again from both stages. A retrieval-only search with ``search_content`` runs both
   stages whatever stage 1 finds: stage 1 then runs in a stage thread, on a database
   connection of its own, while stage 2 runs (``_beside``).
5. Return the answer, its mode, the retrieved data as labelled, timestamped blocks, the hits
   and token usage.

Only vectors made by the configured embedding model take part in a ranking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from functools import lru_cache, partial

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DataError, close_old_connections, connection, models, reset_queries, transaction
from django.db.backends.postgresql.base import ServerBindingCursor
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper

from memories.llm import Usage, get_chat_model, get_embedder
from memories.llm.base import ProcessThreads
from memories.models import Diary, EndUser, Knowledge, KnowledgeStatus, Message, Session, Summary
from memories.services.validation import user_id_errors

__all__ = [
    "MAX_QUERY_CHARS",
    "Hit",
    "ReembeddingNeeded",
    "SearchFilter",
    "SearchedUsers",
    "SearchResult",
    "retrieve_memory",
    "candidate_pool",
    "query_embedding_started_early",
    "rank_messages_by_text",
    "retrieve_messages",
    "search_memories",
]

# The longest search query taken, in characters: a question, not a document (the local
# embedding model reads its first 256 tokens, about 1,000 characters, anyway).
MAX_QUERY_CHARS = 2000

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
# The full-text (BM25) ranking's weight in the fusion; the vector ranking's is 1. BM25 alone
# finds more evidence than the vector ranking alone, so it gets the larger say (weighted RRF;
# 1.3 to 2.0 measure alike on the development file, README, Benchmarks).
_TEXT_WEIGHT = 1.5
# BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009):
# k1 = 1.2, their usual value; b = 0, no length normalisation: in a conversation the long
# turns are the ones that carry facts (any b > 0 measured worse, as did ts_rank's length
# normalisations).
_BM25_K1 = 1.2
# A message gains this share of its neighbouring turns' fused scores...
_NEIGHBOUR_WEIGHT = 0.3
# ... and this share of the best fused score among its session's candidates: the session that
# holds the best match is likelier to hold the rest of the answer (measured: README, Benchmarks).
_SESSION_WEIGHT = 0.2


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
class SearchedUsers:
    """The end users a search reads: by primary key, or by external id.

    By external id, each statement looks them up itself (the unique index on
    ``memories_enduser.external_id``, a few microseconds), so a search needs no round-trip of
    its own to find them: a p50 2-4% lower over HTTP at 1M messages (README, *Benchmarks*).
    An unknown external id matches no rows, as an unknown user has none.

    Raises:
        ValueError: both ``pks`` and ``external_ids`` given.

    One user (nearly every search) is compared as a scalar, and bound as one: a prepared
    statement's generic plan estimates ``= ANY(array)`` as ten values, so PostgreSQL would
    judge the generic plan ten times dearer than the custom ones and plan every run anew;
    and psycopg dumps a one-element list in about 40 microseconds (its list dumper is
    Python), three times per search.
    """

    pks: tuple[int, ...] = ()
    external_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.pks and self.external_ids:
            raise ValueError("Name the end users by primary key or by external id, not both.")

    def sql(self) -> str:
        """SQL condition on ``user_id``: rows of these users (named parameter ``users``)."""
        if self.external_ids:
            table = EndUser._meta.db_table
            if self._one():
                return f"user_id = (SELECT id FROM {table} WHERE external_id = %(users)s::text)"
            return f"user_id = ANY(ARRAY(SELECT id FROM {table} WHERE external_id = ANY(%(users)s::text[])))"
        return "user_id = %(users)s::bigint" if self._one() else "user_id = ANY(%(users)s::bigint[])"

    def params(self) -> dict[str, object]:
        """The named parameter ``sql`` uses: the one user, or a list of them."""
        users = list(self.external_ids) if self.external_ids else list(self.pks)
        return {"users": users[0] if self._one() else users}

    def _one(self) -> bool:
        return len(set(self.external_ids or self.pks)) == 1


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

        ``until`` on the last day there is (9999-12-31) leaves the window open at the end, as
        ``None`` does (no midnight follows it).

        Raises:
            ValidationError: ``until`` before ``since``, an offset outside -14..14 hours, or a
                NUL character in ``channel``.
        """
        errors: dict[str, list[str]] = {}
        if not -14 <= utc_offset_hours <= 14:
            errors["utcOffsetHours"] = ["utcOffsetHours must be between -14 and 14."]
        if since and until and until < since:
            errors["until"] = ["until must not be before since."]
        if channel and "\x00" in channel:
            errors["channel"] = ["channel must not contain the NUL character (U+0000)."]
        if errors:
            raise ValidationError(errors)
        zone = timezone(timedelta(hours=utc_offset_hours))
        # No midnight follows the last day there is: an until of date.max leaves the end open.
        after_until = until + timedelta(days=1) if until and until < date.max else None
        return cls(
            channel=channel or None,
            start=datetime.combine(since, time.min, tzinfo=zone) if since else None,
            end=datetime.combine(after_until, time.min, tzinfo=zone) if after_until else None,
            first_day=since,
            last_day=until,
        )

    @property
    def is_empty(self) -> bool:
        return self.channel is None and self.start is None and self.end is None

    def params(self) -> dict[str, object]:
        """The named parameters the ``*_sql`` conditions use."""
        return {
            "channel": self.channel,
            "start": self.start,
            "end": self.end,
            "first_day": self.first_day,
            "last_day": self.last_day,
        }

    def messages_sql(self) -> str:
        """SQL condition on ``memories_message`` rows (``TRUE`` when unfiltered)."""
        return _all(
            self.channel and "channel = %(channel)s",
            self.start and "created_at >= %(start)s",
            self.end and "created_at < %(end)s",
        )

    def summaries_sql(self, *, owner: str) -> str:
        """Summaries whose covered time overlaps the window, of sessions that hold a message of the channel.

        By the messages' channel, as stage 2 filters them: a session may be spoken in several
        (each ``addMessages`` call names its own); the session's ``channel`` is its first one.
        ``owner`` is the SQL condition on ``user_id`` of the searched users (``SearchedUsers.sql``):
        the channel's messages are looked up among theirs.
        """
        in_channel = (
            f"session_id IN (SELECT session_id FROM {Message._meta.db_table} WHERE {owner} AND channel = %(channel)s)"
        )
        return _all(
            self.channel and in_channel,
            self.start and "covers_until >= %(start)s",
            self.end and "covers_from < %(end)s",
        )

    def diaries_sql(self) -> str | None:
        """Diaries in the window; ``None`` (no diary at all) under a channel filter."""
        if self.channel:
            return None
        return _all(self.first_day and "diary_date >= %(first_day)s", self.last_day and "diary_date <= %(last_day)s")

    def knowledge_sql(self) -> str | None:
        """``None`` (no knowledge at all) under any filter: knowledge has no channel or time."""
        return "TRUE" if self.is_empty else None


def _all(*conditions: object) -> str:
    return " AND ".join(str(c) for c in conditions if c) or "TRUE"


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
        ValidationError: empty query or user list, a query over ``MAX_QUERY_CHARS`` characters,
            a NUL character in the query or a user id, or ``top_k`` out of range (names the field).
        ModelBackendError: the embedding or chat backend failed.
    """
    top_k = settings.SEARCH_DEFAULT_TOP_K if top_k is None else top_k
    _validate(user_external_ids=user_external_ids, query=query, top_k=top_k)
    # The query is embedded by the model while this thread queries the database (when stage 2
    # is likely to run): stage 2's full-text ranking, which needs no vector.
    embedding_started = _early_embedding(query) or get_embedder().embed_later([query])
    try:
        users = SearchedUsers(external_ids=tuple(user_external_ids))
        search_filter = search_filter or SearchFilter()
        text_ranking = (
            rank_messages_by_text(users=users, query=query, top_k=top_k, search_filter=search_filter)
            if search_content
            else None
        )
    except BaseException:
        embedding_started.cancel()  # hands the model's pipe back at once (memories/llm/model_process.py)
        raise
    multi_user = len(set(user_external_ids)) > 1
    embedding = embedding_started.result()
    vector = embedding.vectors[0]
    usage = embedding.usage
    chat = get_chat_model() if answer else None
    find_memory = partial(
        retrieve_memory,
        users=users,
        vector=vector,
        top_k=top_k,
        include_shared=include_shared,
        multi_user=multi_user,
        search_filter=search_filter,
    )
    find_messages = partial(
        retrieve_messages,
        users=users,
        query=query,
        vector=vector,
        top_k=top_k,
        multi_user=multi_user,
        search_filter=search_filter,
        text_ranking=text_ranking,
    )
    reply = None
    if search_content and not answer:
        # Retrieval only: both stages run whatever stage 1 finds, so stage 1 runs in another
        # thread, on a database connection of its own, while this one runs stage 2.
        stages = [STAGE_MEMORY, STAGE_MESSAGES]
        memory_found = _beside(find_memory)
        hits = find_messages()
        hits += memory_found.result()
    else:
        stages = [STAGE_MEMORY]
        hits = find_memory()
        if hits and answer:
            reply = chat.answer(question=query, blocks=[h.block for h in hits], query_vector=vector)
            usage += reply.usage
        # Here search_content implies answer: stage 2 runs when stage 1 found nothing, or
        # when messages may be searched and the answer model found stage 1 insufficient.
        if not hits or (search_content and not reply.sufficient):
            stages.append(STAGE_MESSAGES)
            # Messages first: stage 2 runs because stage 1 was not enough.
            hits = find_messages() + hits
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


# The query embedding started early (query_embedding_started_early): (query, future) or None.
_EARLY_EMBEDDING: ContextVar[tuple[str, Future] | None] = ContextVar("early_query_embedding", default=None)


@contextmanager
def query_embedding_started_early(*, query: str | None) -> Iterator[None]:
    """Start embedding ``query`` now; a ``search_memories`` of that very query within the block uses it.

    For the GraphQL view, which knows a search's query before it has authenticated the
    request and parsed its document; the embedding runs meanwhile (about 2 ms less per search
    over HTTP at 1M messages: README, *Benchmarks*). An embedding the search does not take
    (another query, a refused request) is given up when the search starts or the block ends:
    cancelled if it has not started; the model's process reads and drops its answer before the
    pipe's next use. Nothing starts for an empty or missing ``query``, and nothing is raised:
    when the backend cannot start it, the search starts it again and reports the failure.
    """
    try:
        started = get_embedder().embed_later([query]) if query is not None and query.strip() else None
    except Exception:  # noqa: BLE001 - e.g. ModelBackendError: search_memories raises it in its place
        started = None
    if started is None:
        yield
        return
    token = _EARLY_EMBEDDING.set((query, started))
    try:
        yield
    finally:
        if _EARLY_EMBEDDING.get() is not None:  # not taken
            started.cancel()
        _EARLY_EMBEDDING.reset(token)


def _early_embedding(query: str) -> Future | None:
    """The embedding of ``query`` started early in this context, taken (once), or ``None``.

    One started for another text is given up here, before the search starts its own, so a
    search never holds two of the model's pipes.
    """
    started = _EARLY_EMBEDDING.get()
    if started is None:
        return None
    _EARLY_EMBEDDING.set(None)
    if started[0] == query:
        return started[1]
    started[1].cancel()
    return None


def _beside(find: Callable[[], list[Hit]]) -> Future[list[Hit]]:
    """Start ``find`` (a stage) in a stage thread, on a database connection of its own; or run it now.

    It runs now, in this thread (the future is done when returned), when ``SEARCH_STAGE_THREADS``
    is 0 or every stage thread is busy (under load the cores are busy anyway), when this
    thread is in a transaction (another connection would not see its writes), or when
    connections are not pooled (opening one costs more than the overlap saves). The thread
    takes its connection from the pool and gives it back, as a request does.
    """
    threads = settings.SEARCH_STAGE_THREADS
    pooled = connection.settings_dict["OPTIONS"].get("pool")
    in_transaction = connection.in_atomic_block or not connection.get_autocommit()
    started = None
    if threads > 0 and pooled and not in_transaction:
        started = _stage_threads(threads).submit_if_free(partial(_on_own_connection, find))
    if started is None:
        started = Future()
        started.set_result(find())  # its error, if any, is raised before the other stage runs
    return started


@lru_cache(maxsize=1)
def _stage_threads(count: int) -> ProcessThreads:  # one per process whatever calls it first (ProcessThreads)
    return ProcessThreads(max_workers=count, name="search-stage")


def _on_own_connection(find: Callable[[], list[Hit]]) -> list[Hit]:
    """``find()`` in a stage thread, its connection handled as Django handles a request's
    (its query log, kept under ``DEBUG``, emptied; the connection closed, i.e. given back to
    the pool, after)."""
    reset_queries()
    close_old_connections()
    try:
        return find()
    finally:
        close_old_connections()


def _validate(*, user_external_ids: list[str], query: str, top_k: int) -> None:
    errors: dict[str, list[str]] = {}
    if not [u for u in user_external_ids if u.strip()]:
        errors["userIds"] = ["Give at least one userId."]
    elif problems := [p for u in user_external_ids for p in user_id_errors(user_external_id=u)]:
        errors["userIds"] = problems[:1]
    if not query.strip():
        errors["query"] = ["query must not be empty."]
    elif len(query) > MAX_QUERY_CHARS:
        errors["query"] = [f"query must be at most {MAX_QUERY_CHARS} characters."]
    elif "\x00" in query:
        errors["query"] = ["query must not contain the NUL character (U+0000)."]
    if not 1 <= top_k <= settings.SEARCH_MAX_TOP_K:
        errors["topK"] = [f"topK must be between 1 and {settings.SEARCH_MAX_TOP_K}."]
    if errors:
        raise ValidationError(errors)


# --- Stage 1: summaries, knowledge, diaries ------------------------------------------


def retrieve_memory(
    *,
    users: SearchedUsers,
    vector: list[float],
    top_k: int,
    include_shared: bool = False,
    multi_user: bool = False,
    search_filter: SearchFilter | None = None,
) -> list[Hit]:
    """Stage 1: the ``top_k`` summaries, knowledge and diary entries nearest to ``vector``.

    One statement: a vector ranking per kind (``_vector_ranking``), each row joined to
    what its label needs.

    Args:
        users: the end users searched.
        vector: the query embedding.
        top_k: hits returned overall, best first.
        include_shared: also rank system-wide knowledge.
        multi_user: name the user in each block's label.
        search_filter: channel and conversation-time window.

    Raises:
        ReembeddingNeeded: a ranked vector was made by another embedding model.
    """
    search_filter = search_filter or SearchFilter()
    owner = users.sql()
    rankings = [_vector_ranking("summaries", Summary, f"{owner} AND {search_filter.summaries_sql(owner=owner)}", top_k)]
    selects = [
        f"""SELECT 'summary', r.id, r.embedding_model, r.distance, s.content, u.external_id,
                   se.external_id, s.covers_from, s.covers_until, NULL::date
            FROM summaries r JOIN {Summary._meta.db_table} s ON s.id = r.id
            JOIN {EndUser._meta.db_table} u ON u.id = s.user_id
            JOIN {Session._meta.db_table} se ON se.id = s.session_id"""
    ]
    if (knowledge_filter := search_filter.knowledge_sql()) is not None:
        knowledge_owner = f"({owner} OR user_id IS NULL)" if include_shared else owner
        scope = f"{knowledge_owner} AND status = '{KnowledgeStatus.ACTIVE}' AND {knowledge_filter}"
        rankings.append(_vector_ranking("knowledge", Knowledge, scope, top_k))
        selects.append(
            f"""SELECT 'knowledge', r.id, r.embedding_model, r.distance, k.content, u.external_id,
                       NULL, NULL, k.updated_at, NULL
                FROM knowledge r JOIN {Knowledge._meta.db_table} k ON k.id = r.id
                LEFT JOIN {EndUser._meta.db_table} u ON u.id = k.user_id"""
        )
    if (diary_filter := search_filter.diaries_sql()) is not None:
        rankings.append(_vector_ranking("diaries", Diary, f"{owner} AND {diary_filter}", top_k))
        selects.append(
            f"""SELECT 'diary', r.id, r.embedding_model, r.distance, d.content, u.external_id,
                       NULL, NULL, NULL, d.diary_date
                FROM diaries r JOIN {Diary._meta.db_table} d ON d.id = r.id
                JOIN {EndUser._meta.db_table} u ON u.id = d.user_id"""
        )
    sql = f"WITH {_QUERY_VECTOR}, {', '.join(rankings)} " + " UNION ALL ".join(selects)
    rows = _fetch(sql, {**search_filter.params(), **_vector_params(vector), **users.params()}, Summary)
    if stale := next((row for row in rows if row[2] != settings.EMBEDDING_MODEL), None):
        raise _reembedding_needed({"summary": Summary, "knowledge": Knowledge, "diary": Diary}[stale[0]])
    hits = [_memory_hit(row, multi_user) for row in rows]
    return sorted(hits, key=lambda h: -(h.score or 0.0))[:top_k]


# --- Stage 2: messages ---------------------------------------------------------------


def retrieve_messages(
    *,
    users: SearchedUsers,
    query: str,
    vector: list[float],
    top_k: int,
    multi_user: bool = False,
    search_filter: SearchFilter | None = None,
    text_ranking: list[int] | None = None,
) -> list[Hit]:
    """Stage 2: the ``top_k`` messages by fused vector and full-text rankings, with their neighbours.

    1. Each ranking (cosine over embeddings, in ``_MESSAGES_SQL``; BM25 over the full-text
       column, ``rank_messages_by_text``) contributes its best ``candidate_pool(top_k)``
       messages; a message scores ``sum(weight / (k + rank))`` over the rankings it appears
       in (weighted reciprocal rank fusion, k = 10; weight 1 for the vector ranking, 1.5 for
       BM25).
    2. A message also gains ``0.3`` times the fused scores of the turns just before and after
       it (in a conversation the answer often sits next to the turn that matches the words),
       and ``0.2`` times the best fused score among its session's candidates.
    3. Each hit is shown with those neighbouring turns. A hit's ``score`` stays its cosine
       similarity to the query (``None`` without a current vector).

    The constants were chosen on the development LoCoMo file (README, *Benchmarks*).

    Args:
        text_ranking: ``rank_messages_by_text``'s result for the same arguments, when the
            caller already has it (``search_memories`` runs it while the query is embedded);
            ``None``: run it here.

    Raises:
        ReembeddingNeeded: a ranked vector was made by another embedding model.
    """
    search_filter = search_filter or SearchFilter()
    if text_ranking is None:
        text_ranking = rank_messages_by_text(users=users, query=query, top_k=top_k, search_filter=search_filter)
    pool = candidate_pool(top_k)
    scope = _messages_scope(users, search_filter)
    sql = _MESSAGES_SQL.format(
        query_vector=_QUERY_VECTOR,
        message=Message._meta.db_table,
        session=Session._meta.db_table,
        user=EndUser._meta.db_table,
        scope=scope,
        vector_ranking=_vector_ranking("by_vector", Message, scope, pool),
    )
    params = {
        **search_filter.params(),
        **_vector_params(vector),
        **users.params(),
        "text_ranking": text_ranking,
        "rrf_k": _RRF_K,
        "text_weight": _TEXT_WEIGHT,
        "neighbour_weight": _NEIGHBOUR_WEIGHT,
        "session_weight": _SESSION_WEIGHT,
        "top_k": top_k,
    }
    turns = _fetch(sql, params, Message, raw=True)
    if turns and turns[0].stale_vectors:
        raise _reembedding_needed(Message)
    shown: dict[int, list[Message]] = {}
    for turn in turns:
        shown.setdefault(turn.hit_id, []).append(turn)
    return [
        _message_hit(next(t for t in context if t.pk == hit_id), multi_user, tuple(context))
        for hit_id, context in shown.items()
    ]


def _messages_scope(users: SearchedUsers, search_filter: SearchFilter) -> str:
    """SQL condition: the messages of ``users`` that ``search_filter`` lets through."""
    return f"{users.sql()} AND {search_filter.messages_sql()}"


def rank_messages_by_text(
    *, users: SearchedUsers, query: str, top_k: int, search_filter: SearchFilter | None = None
) -> list[int]:
    """Stage 2's full-text ranking: ids of the ``candidate_pool(top_k)`` messages best matching ``query``'s words.

    One statement (``_TEXT_RANKING_SQL``): BM25 (Robertson & Zaragoza 2009; k1 = 1.2, b = 0)
    of each searched message against the query's terms, best first, ties by id. The terms
    are the lexemes of ``to_tsvector('english', query)``, as the messages' ``search_vector``
    was made (stemmed, stop words dropped); the inverse document frequencies are those of the
    searched messages (``users``' under ``search_filter``), so a word every turn of the user
    holds (a speaker's name, "like") weighs little. Needs no query vector, so it can run while
    the query is embedded.

    Returns:
        Message ids, at most ``candidate_pool(top_k)``; ``[]`` when the query has no terms.
    """
    if not re.search(r"\w", query):
        return []
    search_filter = search_filter or SearchFilter()
    sql = _TEXT_RANKING_SQL.format(message=Message._meta.db_table, scope=_messages_scope(users, search_filter))
    params = {
        **search_filter.params(),
        **users.params(),
        "query": query,
        "k1": _BM25_K1,
        "pool": candidate_pool(top_k),
    }
    return [row[0] for row in _fetch(sql, params, Message)]


# Named parameters: see ``rank_messages_by_text``; {scope} is the condition on the searched messages.
_TEXT_RANKING_SQL = """
-- The query's terms, made as the messages' search_vector was (NULL when all are stop words),
-- and the same terms as a tsquery matching any of them (plainto_tsquery's lexemes, quoted as
-- tsquery text quotes them, joined by | instead of & and <->; empty when all are stop words,
-- and then it matches nothing).
WITH terms AS MATERIALIZED (
    SELECT array_agg(lexeme) AS lexemes,
           regexp_replace(plainto_tsquery('english', %(query)s)::text, ' (&|<(-|[0-9]+)>) ', ' | ', 'g')::tsquery
               AS any_term
    FROM unnest(to_tsvector('english', %(query)s))
),
scoped AS MATERIALIZED (SELECT id, search_vector FROM {message} WHERE {scope}),
-- Each query term in each searched message that holds any: its frequency there. Only the
-- messages that hold a query term are unnested (@@, on the scoped rows rather than through
-- the GIN index, where a common word's postings hold hundreds of thousands of other users'
-- messages: 78 ms at 1M), and only the query's lexemes: setweight marks them (weight A) and
-- ts_filter keeps the marked ones (the statement took 6.4-7.4 ms at 1M unnesting every
-- lexeme, 4.6-5.4 ms so); the lexeme test keeps out any that were weighted A already.
postings AS MATERIALIZED (
    SELECT s.id, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS tf
    FROM terms, scoped AS s, unnest(ts_filter(setweight(s.search_vector, 'A', terms.lexemes), '{{a}}')) AS t
    WHERE s.search_vector @@ terms.any_term AND t.lexeme = ANY (terms.lexemes)
),
-- Inverse document frequency over the searched messages, in the form that stays positive
-- for a term most messages hold (Lucene's): ln(1 + (N - n + 0.5) / (n + 0.5)). N is a scalar
-- subquery, which PostgreSQL computes once: as a row joined in, a plan could count the
-- scoped messages again for each posting (18.8 against 2.2 ms for one question on a user of
-- 369 messages).
idf AS (
    SELECT lexeme, ln(1 + ((SELECT count(*)::float8 FROM scoped) - df + 0.5) / (df + 0.5)) AS idf
    FROM (SELECT lexeme, count(*)::float8 AS df FROM postings GROUP BY lexeme) AS d
)
-- BM25 with b = 0: the sum over the message's query terms of idf * tf * (k1 + 1) / (tf + k1).
-- Rounded, so that messages holding the same terms tie (and go by id) whatever order the plan
-- adds their terms in.
SELECT id FROM postings JOIN idf USING (lexeme)
GROUP BY id ORDER BY round(sum(idf * tf * (%(k1)s + 1) / (tf + %(k1)s))::numeric, 9) DESC, id LIMIT %(pool)s
"""

# The rest of stage 2 as one statement. Named parameters: see ``retrieve_messages``;
# {vector_ranking} defines ``by_vector``.
_MESSAGES_SQL = """
WITH {query_vector}, {vector_ranking},
-- The full-text ranking, computed beforehand (rank_messages_by_text); its ids are checked
-- against the scope again, so a message deleted since, or any id given by mistake, drops out.
by_text AS (
    SELECT ranked.id, ranked.rank FROM unnest(%(text_ranking)s::bigint[]) WITH ORDINALITY AS ranked (id, rank)
    JOIN {message} USING (id) WHERE {scope}
),
-- Weighted reciprocal rank fusion; ties go to the vector ranking's order, then the full-text one's.
fused AS (
    SELECT id, sum(weight / (%(rrf_k)s + rank)) AS score, min(vector_rank) AS vector_rank,
           min(text_rank) AS text_rank
    FROM (
        SELECT id, rank, 1.0::float8 AS weight, rank AS vector_rank, NULL::bigint AS text_rank
        FROM (SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM by_vector) AS v
        UNION ALL
        SELECT id, rank, %(text_weight)s::float8, NULL, rank FROM by_text
    ) AS ranks
    GROUP BY id
),
-- The turns just before and after each candidate in its session.
links AS (
    SELECT id, session_id, prev_id, next_id FROM (
        SELECT id, session_id, LAG(id) OVER w AS prev_id, LEAD(id) OVER w AS next_id FROM {message}
        WHERE session_id IN (SELECT session_id FROM {message} WHERE id IN (SELECT id FROM fused))
        WINDOW w AS (PARTITION BY session_id ORDER BY created_at, id)
    ) AS ordered
    WHERE id IN (SELECT id FROM fused)
),
-- The fused score, plus shares of the neighbouring turns' and of the session's best candidate's.
smoothed AS (
    SELECT f.id, l.prev_id, l.next_id, f.vector_rank, f.text_rank,
           f.score + %(neighbour_weight)s::float8 * (coalesce(p.score, 0) + coalesce(n.score, 0))
               + %(session_weight)s::float8 * max(f.score) OVER (PARTITION BY l.session_id) AS score
    FROM fused f LEFT JOIN links l ON l.id = f.id
    LEFT JOIN fused p ON p.id = l.prev_id LEFT JOIN fused n ON n.id = l.next_id
),
best AS (
    SELECT id, prev_id, next_id,
           row_number() OVER (ORDER BY score DESC, vector_rank NULLS LAST, text_rank) AS position
    FROM smoothed ORDER BY position LIMIT %(top_k)s
)
-- Each hit (hit_id = id) with its neighbouring turns, hits best first, turns in order.
SELECT m.id, m.user_id, m.session_id, m.external_id, m.role, m.content, m.channel, m.metadata,
       m.created_at, m.received_at, m.embedding_model, best.id AS hit_id,
       se.external_id AS session_external_id, u.external_id AS user_external_id,
       CASE WHEN m.embedding_model = %(embedding_model)s THEN m.embedding <=> (SELECT v FROM query) END
           AS distance,
       (SELECT coalesce(bool_or(embedding_model <> %(embedding_model)s), FALSE) FROM by_vector) AS stale_vectors
FROM best JOIN {message} m ON m.id IN (best.prev_id, best.id, best.next_id)
JOIN {session} se ON se.id = m.session_id JOIN {user} u ON u.id = m.user_id
ORDER BY best.position, m.created_at, m.id
"""


def candidate_pool(top_k: int) -> int:
    """Candidates each message ranking contributes to the fusion for ``top_k`` hits: ``max(50, 5 * top_k)``."""
    return max(_MIN_CANDIDATES, _CANDIDATES_PER_TOP_K * top_k)


# --- Vector retrieval ----------------------------------------------------------------


# The query vector, converted once per statement (``query.v``).
_QUERY_VECTOR = "query AS (SELECT %(vector)s::vector AS v)"


def _vector_ranking(name: str, model: type[models.Model], scope: str, top_k: int) -> str:
    """SQL of common table expressions defining ``name``: ``(id, embedding_model, distance)`` of
    the ``top_k`` rows of ``model``'s table matching ``scope`` nearest to ``query.v``.

    Exact whatever the scope, in the one statement:

    - A scope of up to ``EXACT_SEARCH_MAX_ROWS`` rows (one end user's memory, nearly always)
      is ranked exactly: the rows come from the B-tree on ``user_id`` and are sorted by
      distance ("+ 0": an ORDER BY the HNSW index cannot serve). The rows are counted
      embedded or not, so that the B-tree alone can count them (an index-only scan: 0.1
      against 0.3 ms for a user of 1,000 messages); a scope that holds fewer embedded rows
      than ``top_k`` gets the exact ranking too (below).
    - A larger scope uses the HNSW index (``{name}_hnsw``). HNSW visits ``hnsw.ef_search``
      candidates and filters afterwards, so under a selective filter it can return fewer
      than ``top_k`` rows (pgvector 0.6 README, "Filtering"); then the exact ranking runs too.

    Which branch runs is decided by uncorrelated subqueries PostgreSQL evaluates once
    (``EXISTS (... OFFSET EXACT_SEARCH_MAX_ROWS)``, the HNSW row count); the plan shows the
    other branch as "never executed". Vectors of every model are ranked: the caller checks
    ``embedding_model`` and refuses a mix.
    """
    table = model._meta.db_table
    rows = f"FROM {table} WHERE {scope} AND embedding IS NOT NULL"
    distance = "embedding <=> (SELECT v FROM query)"
    return f"""
{name}_large AS (SELECT EXISTS (SELECT 1 FROM {table} WHERE {scope} OFFSET %(exact_search_max_rows)s) AS large),
{name}_hnsw AS MATERIALIZED (
    SELECT id, embedding_model, {distance} AS distance {rows} AND (SELECT large FROM {name}_large)
    ORDER BY {distance} LIMIT {int(top_k)}
),
{name} AS (
    SELECT * FROM {name}_hnsw WHERE (SELECT count(*) FROM {name}_hnsw) >= {int(top_k)}
    UNION ALL (
        SELECT id, embedding_model, {distance} AS distance {rows}
        AND (SELECT count(*) FROM {name}_hnsw) < {int(top_k)}
        ORDER BY ({distance}) + 0 LIMIT {int(top_k)}
    )
)"""


def _nearest(
    *, model: type[models.Model], scope: str, params: dict[str, object], vector: list[float], top_k: int
) -> list[int]:
    """Ids of the ``top_k`` rows of ``model`` matching the SQL condition ``scope`` nearest to ``vector``, nearest first.

    Raises:
        ReembeddingNeeded: a ranked vector was made by another embedding model.
    """
    ranking = _vector_ranking("ranked", model, scope, top_k)
    sql = f"WITH {_QUERY_VECTOR}, {ranking} SELECT id, embedding_model FROM ranked ORDER BY distance, id"
    rows = _fetch(sql, {**params, **_vector_params(vector)}, model)
    if any(row[1] != settings.EMBEDDING_MODEL for row in rows):
        raise _reembedding_needed(model)
    return [row[0] for row in rows]


def _vector_params(vector: list[float]) -> dict[str, object]:
    return {
        "vector": _vector_literal(vector),
        "exact_search_max_rows": settings.EXACT_SEARCH_MAX_ROWS,
        "embedding_model": settings.EMBEDDING_MODEL,
    }


def _fetch(sql: str, params: dict[str, object], model: type[models.Model], *, raw: bool = False) -> list:
    """Run one search statement: tuples, or ``model`` instances with extra columns as attributes (``raw``).

    The statement binds its parameters on the server, so psycopg prepares it on its first run
    in a connection (``SEARCH_PREPARED_STATEMENTS``) and later runs skip parsing it; once
    PostgreSQL finds that a generic plan costs no more than the plans it made for the first
    runs' values, it stops planning it too (``plan_cache_mode = auto``; see ``SearchedUsers``).
    Parsing and planning had taken longer than running the statements (README,
    *Benchmarks*). Only these statements are prepared: psycopg's threshold is set for their
    run alone, since with it set psycopg would also keep the text of every other query (with
    its values, e.g. a whole ``addMessages`` insert) as a candidate. psycopg forgets its
    prepared statements after a rollback and prepares them again. The cursor is Django's,
    so the statement is logged, counted and its errors translated like any other.

    Raises:
        ReembeddingNeeded: pgvector refused to compare vectors of different dimensions.
    """
    # In an outer transaction a failed statement would abort it: keep the error in a savepoint.
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            with _server_binding_cursor() as cursor:
                psycopg_connection = connection.connection
                # psycopg: 0 prepares a statement on its first run, None never prepares.
                psycopg_connection.prepare_threshold = 0 if settings.SEARCH_PREPARED_STATEMENTS else None
                try:
                    cursor.execute(sql, params)
                finally:
                    psycopg_connection.prepare_threshold = None
                rows = cursor.fetchall()
                columns = [column.name for column in cursor.description]
    except DataError as exc:
        if "vector" not in str(exc):
            raise
        raise _reembedding_needed(model) from exc  # pgvector: "different vector dimensions 384 and 1536"
    return _instances(model, columns, rows) if raw else rows


def _server_binding_cursor():  # noqa: ANN202 - a django.db.backends.utils.CursorWrapper
    """A Django cursor over a psycopg cursor that binds parameters on the server (Django's own
    bind them on the client, and psycopg never prepares those).

    What ``connection.cursor()`` does, with another psycopg cursor class; the connection's
    adapters (time zone included) are the ones Django set on it.
    """
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    cursor = ServerBindingCursor(connection.connection)
    return _DebugCursor(cursor, connection) if connection.queries_logged else connection.make_cursor(cursor)


class _DebugCursor(CursorDebugWrapper):
    """Django's query log, with each statement as written, ``%(name)s`` placeholders and all
    (Django would log the text of the statement's last unprepared run, or nothing)."""

    def execute(self, sql: str, params: object = None) -> object:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


def _instances(model: type[models.Model], columns: list[str], rows: list[tuple]) -> list:
    """``model`` instances from rows, as ``Manager.raw`` makes them: a column named as a
    field's ``attname`` fills that field (through its ``from_db_value``, e.g. JSON); the
    other columns become attributes."""
    position = {column: i for i, column in enumerate(columns)}
    fields = [field for field in model._meta.concrete_fields if field.attname in position]
    names = [field.attname for field in fields]
    loaders = [(position[field.attname], getattr(field, "from_db_value", None)) for field in fields]
    extras = [(i, column) for i, column in enumerate(columns) if column not in names]
    instances = []
    for row in rows:
        # Model.from_db takes the values in the model's field order.
        values = [row[i] if load is None else load(row[i], None, connection) for i, load in loaders]
        instance = model.from_db(connection.alias, names, values)
        for i, column in extras:
            setattr(instance, column, row[i])
        instances.append(instance)
    return instances


@lru_cache(maxsize=8)
def _vector_literal_cached(vector: tuple[float, ...]) -> str:
    # Each value rounded to single precision, as pgvector stores it, then written with 9
    # significant digits: enough for any float32 to read back exactly (IEEE 754-2008, 5.12.2),
    # and 2.3x faster to write than Python's shortest repr of the double (75 against 176
    # microseconds for 384 values), which is also twice as long for PostgreSQL to read.
    single = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ",".join([f"{value:.9g}" for value in single]) + "]"


def _vector_literal(vector: list[float]) -> str:
    """``'[...]'``, the text form of a pgvector ``vector``: the same single-precision values
    pgvector would make of ``vector`` (cached: the stages share one query vector)."""
    return _vector_literal_cached(tuple(vector))


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


def _memory_hit(row: tuple, multi_user: bool) -> Hit:
    """A stage-1 row: ``(kind, id, embedding_model, distance, content, user external id,
    session external id, covers_from, covers_until or updated_at, diary_date)``."""
    kind, pk, _, distance, content, user, session, covers_from, until, diary_date = row
    if kind == "summary":
        label = f"[summary | session {session}{_who(user, multi_user)} | {_when(covers_from)} to {_when(until)}]"
        conversation_time = covers_from
    elif kind == "knowledge":
        label = f"[knowledge | {f'user {user}' if user else 'shared'} | updated {_when(until)}]"
        conversation_time = None
    else:
        label = f"[diary | {diary_date.isoformat()}{_who(user, multi_user)}]"
        conversation_time = datetime.combine(diary_date, time.min, tzinfo=UTC)
    return Hit(
        kind=kind,
        id=pk,
        score=1 - distance,
        content=content,
        block=f"{label}\n{content}",
        user_id=user or "",
        conversation_time=conversation_time,
        session_id=session,
    )


def _message_hit(message: Message, multi_user: bool, context: tuple[Message, ...] = ()) -> Hit:
    label = (
        f"[message | session {message.session_external_id}{_who(message.user_external_id, multi_user)} | "
        f"{_when(message.created_at)} | {message.speaker} ({message.role})]"
    )
    lines = [("> " if turn.pk == message.pk else "") + turn.embedding_text for turn in context or (message,)]
    return Hit(
        kind="message",
        id=message.pk,
        score=1 - message.distance if message.distance is not None else None,
        content=message.content,
        block=label + "\n" + "\n".join(lines),
        user_id=message.user_external_id,
        conversation_time=message.created_at,
        session_id=message.session_external_id,
    )
