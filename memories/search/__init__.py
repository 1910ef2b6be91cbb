"""Search and context: what a chatbot gets back from its users' memory.

``search`` answers a question; ``context`` prepares a chatbot's next turn. Both go the same way:

1. Scope: the end users, sources (messages, summaries, knowledge, diaries), channel and time
   window a caller may read (``scope``).
2. Embed the query once, in a second thread, while the database runs the rankings that need no
   vector.
3. Rank (``retrievers``): messages by BM25; when the query names an entity of the users
   (``memories.services.entities``), its facts and turns, most recent first; then, with the
   vector, every kind in one ranking (the similarities of one embedding model compare across
   kinds); when the query names a day or month (``dates``), the turns said then, by vector.
4. Fuse the rankings into one (``fusion``): reciprocal rank fusion, then each turn gains a share
   of the score of the turn before it and of its session's best; the last of the ``top_k`` places
   goes to the best relevant candidate (by vector) from a session the others do not show.
5. Load the best ``top_k`` as hits, each message with the turns around it (``hits``).
6. Gate: a hit whose cosine similarity to the query is under ``SEARCH_MIN_SIMILARITY`` is not
   relevant; with none relevant, the answer is "not found" and the context holds no memories.
7. ``search`` answers (``answer``); ``context`` adds the session's recent window and one prompt
   block (``prompt``).

Only vectors made by the configured embedding model take part in a ranking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from django.conf import settings

from memories.llm import EmbeddingBatch, Usage, get_chat_model, get_embedder
from memories.metrics import SEARCH_STAGE_SECONDS, counted_call
from memories.models import DialogueAct, EndUser, Message, Role, Session
from memories.search import retrievers
from memories.search.answer import NOT_FOUND, Answer, answer_question
from memories.search.dates import named_days
from memories.search.excerpts import fit_to_budget
from memories.search.fusion import (
    answers_for_questions,
    facts_over_sources,
    fuse,
    replaced_last,
    with_a_new_session_last,
)
from memories.search.hits import Hit, Turn, load_hits
from memories.search.prompt import TOKENIZER, count_tokens, render_prompt
from memories.search.retrievers import ReembeddingNeeded
from memories.search.scope import SOURCES, Scope, SearchFilter
from memories.search.topics import fact_classes, topic_asked
from memories.search.validation import MAX_QUERY_CHARS, validate_context, validate_search

__all__ = [
    "MAX_QUERY_CHARS",
    "NOT_FOUND",
    "SOURCES",
    "TOKENIZER",
    "Answer",
    "Context",
    "Hit",
    "ReembeddingNeeded",
    "SearchFilter",
    "SearchResult",
    "Turn",
    "context",
    "retrieve",
    "search",
]

# Candidates each message ranking contributes to the fusion: enough that a turn ranked low by
# one ranking but high by the other is still found.
_MIN_CANDIDATES = 50
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+")
_CANDIDATES_PER_HIT = 5


@dataclass(frozen=True)
class SearchResult:
    """What ``search`` returns: hits best first, the answer (``None`` when not asked for) and usage."""

    hits: list[Hit]
    answer: Answer | None
    usage: Usage = field(default_factory=Usage)
    multi_user: bool = False

    @property
    def retrieved_data(self) -> str:
        """The hits as labelled, timestamped blocks, as an answer model reads them."""
        return "\n\n".join(h.block(multi_user=self.multi_user) for h in self.hits)


@dataclass(frozen=True)
class Context:
    """What a chatbot needs for its next turn in one session.

    ``window``: the session's last turns, oldest first. ``memories``: relevant hits from the
    user's memory, none of them in the window nor the query message. ``tokens``: counts by
    ``TOKENIZER`` of the window's turns, the memories' blocks and the whole ``prompt``.
    """

    query: str | None
    window: list[Turn]
    memories: list[Hit]
    prompt: str
    tokens: dict[str, int]
    tokenizer: str = TOKENIZER
    usage: Usage = field(default_factory=Usage)


def search(
    *,
    user_external_ids: list[str],
    query: str,
    top_k: int | None = None,
    sources: tuple[str, ...] = SOURCES,
    include_shared: bool = False,
    search_filter: SearchFilter | None = None,
    answer: bool = True,
) -> SearchResult:
    """Search the memory of the given end users for ``query`` and answer it.

    Args:
        user_external_ids: the end users whose memory is searched (one or more).
        query: the question, e.g. ``"What is my favourite food?"``.
        top_k: hits returned (default ``SEARCH_DEFAULT_TOP_K``, at most ``SEARCH_MAX_TOP_K``); together
            at most ``SEARCH_MAX_TOKENS`` tokens, long turns shown by their parts that match the query.
        sources: kinds ranked: any of ``message``, ``summary``, ``knowledge``, ``diary``.
        include_shared: also search system-wide knowledge (no owner).
        search_filter: only this channel and window of conversation time.
        answer: ``False`` retrieves only; no answer is made.

    Raises:
        ValidationError: empty query or user list, a query over ``MAX_QUERY_CHARS``, a NUL
            character, ``top_k`` out of range or an unknown source (names the field).
        ReembeddingNeeded: stored vectors were made by another embedding model.
        ModelBackendError: the embedding or chat backend failed.
    """
    top_k = settings.SEARCH_DEFAULT_TOP_K if top_k is None else top_k
    validate_search(user_external_ids=user_external_ids, query=query, top_k=top_k, sources=sources)
    with ThreadPoolExecutor(max_workers=1) as model:
        # The model embeds the query while the database runs what needs no vector.
        future = model.submit(_embed, query)
        scope = Scope.for_users(
            user_external_ids=user_external_ids,
            search_filter=search_filter or SearchFilter(),
            sources=tuple(sources),
            include_shared=include_shared,
        )
        with SEARCH_STAGE_SECONDS.labels("retrieve").time():
            hits = retrieve(scope=scope, query=query, vector=lambda: future.result().vectors[0], top_k=top_k)
            hits = fit_to_budget(hits, query=query, max_tokens=settings.SEARCH_MAX_TOKENS)
        embedding = future.result()
    reply = None
    if answer:
        with SEARCH_STAGE_SECONDS.labels("answer").time():
            reply = answer_question(
                question=query,
                hits=hits,
                relevant=_relevant(hits),
                chat=get_chat_model(),
                multi_user=scope.multi_user,
                zone=scope.search_filter.zone,
            )
    usage = embedding.usage + (reply.usage if reply else Usage())
    return SearchResult(hits=hits, answer=reply, usage=usage, multi_user=scope.multi_user)


def context(
    *,
    user_external_id: str,
    session_external_id: str,
    query: str | None = None,
    window_turns: int | None = None,
    max_tokens: int | None = None,
    include_other_sessions: bool = True,
    include_shared: bool = False,
    query_message_id: int | None = None,
    exclude_message_ids: Collection[int] = (),
) -> Context:
    """The context for a chatbot's next turn in a session: recent window, relevant memories, prompt.

    Args:
        query: what to find memories for; default: the session's latest user message (which
            is then left out of the memories, as the window's turns are). A message of the
            session saying exactly ``query`` is left out too, and so is a summary of the session
            whose turns are all in the window.
        window_turns: the session's last turns returned (default ``CONTEXT_WINDOW_TURNS``; 0: none).
        max_tokens: the memories' blocks are cut to fit this many tokens (default
            ``CONTEXT_MAX_TOKENS``), best first.
        include_other_sessions: memories from the user's other sessions (default); ``False``:
            only from this session, older than the window.
        include_shared: also system-wide knowledge (for an end user with no rows yet too).
        query_message_id: without ``query``, the session's message to use as the query instead of
            its latest user message (``addMessages``: the newest user message it stored).
        exclude_message_ids: messages never shown in the memories (``addMessages``: those it stored).

    Raises:
        ValidationError: a bad id, query, window size or token budget (names the field).
        ReembeddingNeeded, ModelBackendError: as ``search``.
    """
    window_turns = settings.CONTEXT_WINDOW_TURNS if window_turns is None else window_turns
    max_tokens = settings.CONTEXT_MAX_TOKENS if max_tokens is None else max_tokens
    validate_context(
        user_external_id=user_external_id,
        session_external_id=session_external_id,
        query=query,
        window_turns=window_turns,
        max_tokens=max_tokens,
    )
    memories: list[Hit] = []
    memory_tokens = 0
    usage = Usage()
    with ThreadPoolExecutor(max_workers=1) as model:
        # Joined through the session, whose (user, external id) index finds the window in one statement.
        said = Message.objects.filter(
            session__user__external_id=user_external_id, session__external_id=session_external_id
        )
        recent = list(said.only("session", "user", *Turn.COLUMNS).order_by("-created_at", "-id")[:window_turns])
        user_pk, session_pk = _owner(recent, user_external_id=user_external_id, session_external_id=session_external_id)
        # An end user with no rows yet has no memory of their own, but shared knowledge applies to them.
        wanted = (user_pk is not None or include_shared) and max_tokens > 0
        turns = Message.objects.filter(session_id=session_pk).only("session", *Turn.COLUMNS)
        window = [Turn.of(m) for m in reversed(recent)]
        excluded = {m.pk for m in recent} | set(exclude_message_ids)
        given = query
        if query is None and session_pk is not None:
            asked = turns.filter(pk=query_message_id) if query_message_id is not None else turns.filter(role=Role.USER)
            latest = asked.order_by("-created_at", "-id").first()
            if latest is not None:
                query = latest.content
                excluded.add(latest.pk)
        if wanted and query and query.strip():
            # The model embeds the query while the database ranks by words and entities.
            future = model.submit(_embed, query)
            scope = Scope(
                user_pks=(user_pk,) if user_pk is not None else (),
                include_shared=include_shared,
                exclude_message_pks=tuple(sorted(excluded)),
                session_pk=None if include_other_sessions else (session_pk or -1),
            )
            with SEARCH_STAGE_SECONDS.labels("retrieve").time():
                hits = retrieve(
                    scope=scope,
                    query=query,
                    vector=lambda: future.result().vectors[0],
                    top_k=settings.SEARCH_DEFAULT_TOP_K,
                    hidden=excluded,
                    # What the user said next often completes a memory ("Did you find a date?" "December 20.").
                    turns_after=2,
                )
            usage = future.result().usage
            hits = [h for h in hits if not _in_view(h, session_id=session_external_id, window=window, query=given)]
            relevant = fit_to_budget(_relevant(hits), query=query, max_tokens=max_tokens)
            memories, memory_tokens = _within_budget(relevant, max_tokens)
            memories = _in_prompt_order(memories)
    prompt = render_prompt(session_id=session_external_id, window=window, memories=memories)
    *turn_tokens, prompt_tokens = count_tokens([*(t.text for t in window), prompt])
    window_tokens = sum(turn_tokens)
    return Context(
        query=query,
        window=window,
        memories=memories,
        prompt=prompt,
        tokens={"window": window_tokens, "memories": memory_tokens, "prompt": prompt_tokens},
        usage=usage,
    )


def retrieve(
    *,
    scope: Scope,
    query: str,
    vector: Sequence[float] | Callable[[], Sequence[float]],
    top_k: int,
    hidden: set[int] | frozenset[int] = frozenset(),
    turns_after: int = 1,
) -> list[Hit]:
    """The ``top_k`` best hits in ``scope`` for ``query`` (embedded as ``vector``), all sources fused.

    ``vector`` may be a function returning the query embedding, called once the rankings that need
    no vector (words, entities) have run: the model can compute it meanwhile, in another thread.
    ``hidden`` message ids are never shown as a hit's neighbouring turns; ``turns_after``: how many turns
    after a message hit are shown with it (the one before always is).

    Raises:
        ReembeddingNeeded: a ranked vector was made by another embedding model.
    """
    pool = max(_MIN_CANDIDATES, _CANDIDATES_PER_HIT * top_k)
    by_words = retrievers.lexical(scope=scope, query=query, limit=pool)
    by_entity = retrievers.by_entities(scope=scope, query=query, limit=top_k)
    if callable(vector):
        vector = vector()
    limits = {kind: pool if kind == "message" else top_k for kind in SOURCES}
    nearest = retrievers.dense(limits=limits, scope=scope, vector=vector)
    by_vector = [(distance, kind, pk) for kind, pk, distance, _ in nearest]
    # Rank fusion ignores how similar a row is: rows under the relevance gate do not take part.
    by_vector = [row for row in by_vector if 1 - row[0] >= settings.SEARCH_MIN_SIMILARITY]
    by_time = _said_in_named_days(scope=scope, query=query, vector=vector, limit=pool)
    by_topic = _facts_on_topic(scope=scope, query=query, vector=vector, limit=top_k)
    message_ids = list(
        dict.fromkeys(
            [pk for _, kind, pk in by_vector if kind == "message"]
            + by_words
            + [pk for kind, pk in by_entity if kind == "message"]
            + [pk for pk, _ in by_time]
        )
    )
    turns = retrievers.neighbours(message_ids=message_ids)
    sessions = {("summary", pk): session for kind, pk, _, session in nearest if kind == "summary"}
    sessions |= {("message", pk): place.session for pk, place in turns.items()}
    rankings = {
        "vector": [(kind, pk) for _, kind, pk in by_vector],
        "words": [("message", pk) for pk in by_words],
        "entity": by_entity,
        "time": [("message", pk) for pk, _ in by_time],
        "topic": [("knowledge", pk) for pk in by_topic],
    }
    found = {candidate for ranking in rankings.values() for candidate in ranking}
    ranked = fuse(
        rankings=list(rankings.values()),
        sessions=sessions,
        neighbours={pk: (place.before, place.after) for pk, place in turns.items()},
    )
    # A question is shown only as the lead-in to the turn that answers it.
    answer_of = _answers(turns, hidden=hidden | set(scope.exclude_message_pks))
    asked = {answer: question for question, answer in answer_of.items() if answer and ("message", question) in found}
    ranked = answers_for_questions(ranked, answer_of=answer_of)
    facts = [pk for (kind, pk), _ in ranked if kind == "knowledge"]
    origin = retrievers.provenance(
        knowledge_ids=facts, message_ids=[pk for (kind, pk), _ in ranked if kind == "message"]
    )
    # A fact stands in for the turns it was raised from; a turn whose fact was replaced comes after the rest.
    ranked = facts_over_sources(ranked, sources=origin.sources)
    ranked = replaced_last(ranked, replaced={("message", pk) for pk in origin.replaced})
    found_by: dict[tuple[str, int], list[str]] = {}
    for name, ranking in rankings.items():
        for rank, candidate in enumerate(ranking, start=1):
            found_by.setdefault(candidate, []).append(f"{name} #{rank}")
    return load_hits(
        # The place kept for another session goes to a relevant candidate, not a stray shared word.
        ranked=with_a_new_session_last(ranked, sessions=sessions, top_k=top_k, eligible=set(rankings["vector"])),
        neighbours=turns,
        vector=vector,
        sources=origin.sources,
        replaced=origin.replaced,
        hidden_message_ids=frozenset(hidden),
        found_by=found_by,
        turns_after=turns_after,
        topical=frozenset(("knowledge", pk) for pk in by_topic),
        asked=asked,
    )


def _facts_on_topic(*, scope: Scope, query: str, vector: Sequence[float], limit: int) -> list[int]:
    """The user's facts that answer the topic the query asks about (``topics``): by their slot, said last
    first, or for a request for advice, nearest the topic first; ``[]`` when it asks about none."""
    if "knowledge" not in scope.sources or (topic := topic_asked(query, vector)) is None:
        return []
    if topic.slots:
        # "my son's name": the son's facts, when there are any, not the whole family's.
        named = [head for head in topic.slots if re.search(rf"\b{re.escape(head)}s?\b", query, re.IGNORECASE)]
        found = retrievers.by_slots(scope=scope, heads=named, limit=limit) if named else []
        return found or retrievers.by_slots(scope=scope, heads=topic.slots, limit=limit)
    wanted, classes = fact_classes(topic)
    found = {}
    for centroid in wanted:
        for pk, distance in retrievers.by_topic(scope=scope, topic=centroid, classes=classes, limit=limit):
            found[pk] = min(distance, found.get(pk, distance))
    return sorted(found, key=found.__getitem__)[:limit]


def _answers(turns: dict[int, retrievers.Neighbours], *, hidden: set[int]) -> dict[int, int | None]:
    """For each question among ``turns``: the turn after it when that answers it (a statement not
    ``hidden``), else ``None``."""
    return {
        pk: place.after if place.after_act == DialogueAct.STATEMENT and place.after not in hidden else None
        for pk, place in turns.items()
        if place.act == DialogueAct.QUESTION
    }


def _said_in_named_days(*, scope: Scope, query: str, vector: Sequence[float], limit: int) -> list[tuple[int, float]]:
    """The messages said in the days the query names (``dates.named_days``, local days in the caller's
    zone), within the caller's own channel and window, nearest to ``vector`` first, as
    ``(id, cosine distance)``; ``[]`` when it names none or none of them is in the caller's window."""
    days = named_days(query)
    if days is None:
        return []
    own = scope.search_filter
    first = max(days[0], own.first_day) if own.first_day else days[0]
    last = min(days[1], own.last_day) if own.last_day else days[1]
    if last < first:
        return []
    offset = own.zone.utcoffset(None).total_seconds() / 3600
    named = SearchFilter.local_days(since=first, until=last, utc_offset_hours=offset, channel=own.channel)
    within = replace(scope, search_filter=named)
    return [
        (pk, distance)
        for _, pk, distance, _ in retrievers.dense(limits={"message": limit}, scope=within, vector=vector)
    ]


def _owner(recent: list[Message], *, user_external_id: str, session_external_id: str) -> tuple[int | None, int | None]:
    """The pks of the end user and the session (``None`` when not stored yet): from the window's
    messages when it has any, else looked up."""
    if recent:
        return recent[0].user_id, recent[0].session_id
    session = Session.objects.filter(user__external_id=user_external_id, external_id=session_external_id)
    if ids := session.values_list("user_id", "pk").first():
        return ids
    return EndUser.objects.filter(external_id=user_external_id).values_list("pk", flat=True).first(), None


def _embed(query: str) -> EmbeddingBatch:
    with SEARCH_STAGE_SECONDS.labels("embed").time(), counted_call("embed"):
        return get_embedder().embed([query])


def _in_view(hit: Hit, *, session_id: str, window: Sequence[Turn], query: str | None) -> bool:
    """Whether ``hit`` repeats what a chatbot already has in session ``session_id``: a message of it
    saying the ``query`` given (the query itself), or a summary of it whose turns all are in ``window``."""
    if hit.session_id != session_id:
        return False
    if hit.kind == "message":
        return hit.content == query
    return hit.kind == "summary" and bool(window) and hit.conversation_time >= window[0].created_at


def _relevant(hits: list[Hit]) -> list[Hit]:
    """The hits at least ``SEARCH_MIN_SIMILARITY`` (cosine) from the query or answering a question that is
    (``Hit.question_score``), the facts on the topic it asks about (``Hit.topical``), and the messages
    found by their words that have no vector yet (the worker has not embedded them: they cannot be
    judged)."""
    gate = settings.SEARCH_MIN_SIMILARITY
    return [h for h in hits if h.topical or max(h.score or gate, h.question_score or -1) >= gate]


def _within_budget(hits: list[Hit], max_tokens: int) -> tuple[list[Hit], int]:
    """The best ``hits`` whose blocks fit ``max_tokens`` together, and their blocks' tokens.

    No turn is shown twice: a message hit loses the turns an earlier kept hit shows, and is left
    out if its own turn is one; a summary loses its sentences that a kept turn says, and is left
    out when none is left.
    """
    kept: list[Hit] = []
    shown: dict[int, str] = {}
    used = 0
    for hit, tokens in zip(hits, count_tokens([h.block() for h in hits]), strict=True):
        if hit.kind == "message":
            if hit.id in shown:
                continue
            turns = tuple(t for t in hit.turns if t.id not in shown)
            if len(turns) < len(hit.turns):
                hit = replace(hit, turns=turns)
                tokens = sum(count_tokens([hit.block()]))
        elif hit.kind == "summary" and shown:
            content = _unsaid(hit.content, said=shown.values())
            if not content:
                continue
            if content != hit.content:
                hit = replace(hit, content=content)
                tokens = sum(count_tokens([hit.block()]))
        if used + tokens > max_tokens:
            continue
        kept.append(hit)
        used += tokens
        shown.update((t.id, t.content) for t in hit.turns)
    return kept, used


def _unsaid(summary: str, *, said: Iterable[str]) -> str:
    """The sentences of ``summary`` (each maybe led by its speaker, ``"Mia: ..."``) that none of the
    ``said`` turns holds word for word."""
    said = [" ".join(text.split()) for text in said]
    kept = []
    for sentence in _SENTENCE_END.split(summary.strip()):
        words = " ".join(sentence.split(": ", 1)[-1].split())
        if words and not any(words in text for text in said):
            kept.append(sentence)
    return " ".join(kept)


def _in_prompt_order(memories: list[Hit]) -> list[Hit]:
    """Facts first, as they hold now (the one said last first), then the rest newest first: a later
    statement of the same thing comes above an earlier one."""
    never = datetime.min.replace(tzinfo=UTC)
    facts = sorted(
        (h for h in memories if h.kind == "knowledge"), key=lambda h: h.conversation_time or never, reverse=True
    )
    rest = sorted(
        (h for h in memories if h.kind != "knowledge"), key=lambda h: h.conversation_time or never, reverse=True
    )
    return facts + rest
