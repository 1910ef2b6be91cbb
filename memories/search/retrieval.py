"""Retrieval: the ``top_k`` best hits of a scope for a query, every ranking fused (steps 3-5 of
``memories.search``), and the relevance gate applied to them (step 6)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date

from django.conf import settings

from memories.kinds import MemoryKind
from memories.llm import EmbeddingBatch, get_embedder
from memories.metrics import SEARCH_STAGE_SECONDS, counted_call
from memories.models import DialogueAct, Message, Role
from memories.search import retrievers
from memories.search.candidates import Candidate, Near
from memories.search.dates import named_days
from memories.search.fusion import (
    answers_for_questions,
    changes_above_facts,
    exchanges_by_their_nearer_turn,
    facts_over_sources,
    fuse,
    replaced_below_what_holds_now,
    with_a_new_session_last,
)
from memories.search.hits import Hit, load_hits
from memories.search.scope import SOURCES, RowScope, SearchFilter
from memories.search.topics import PARTNERS, RELATIVES, Topic, fact_classes, telling, topic_asked

# Candidates each message ranking contributes to the fusion: enough that a turn ranked low by
# one ranking but high by the other is still found.
_MIN_CANDIDATES = 50
_CANDIDATES_PER_HIT = 5


def retrieve(
    *,
    scope: RowScope,
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
    limits = {kind: pool if kind == MemoryKind.MESSAGE else top_k for kind in SOURCES}
    nearest = retrievers.dense(limits=limits, scope=scope, vector=vector)
    # Rank fusion ignores how similar a row is: rows under the relevance gate do not take part.
    by_vector = [row for row in nearest if 1 - row.distance >= settings.SEARCH_MIN_SIMILARITY]
    days = named_days(query)
    by_time = _said_in_named_days(scope=scope, days=days, vector=vector, limit=pool)
    topic = topic_asked(query, vector) if {MemoryKind.KNOWLEDGE, MemoryKind.MESSAGE} & set(scope.sources) else None
    by_topic = _facts_on_topic(scope=scope, query=query, topic=topic, limit=top_k)
    # A question naming a day asks what was said then (``by_time``), not what the user tells of a topic.
    told = _told_on_topic(scope=scope, topic=topic, pool=pool, limit=top_k) if days is None else []
    message_ids = list(
        dict.fromkeys(
            [row.pk for row in by_vector if row.kind == MemoryKind.MESSAGE]
            + by_words
            + [c.pk for c in by_entity if c.kind == MemoryKind.MESSAGE]
            + [row.pk for row in by_time]
            + told
        )
    )
    turns = retrievers.neighbours(message_ids=message_ids)
    sessions = {row.candidate: row.session_pk for row in nearest if row.kind == MemoryKind.SUMMARY}
    sessions |= {Candidate(MemoryKind.MESSAGE, pk): place.session for pk, place in turns.items()}
    rankings: dict[str, list[Candidate]] = {
        "vector": [row.candidate for row in by_vector],
        "words": [Candidate(MemoryKind.MESSAGE, pk) for pk in by_words],
        "entity": by_entity,
        "time": [Candidate(MemoryKind.MESSAGE, row.pk) for row in by_time],
        "topic": [Candidate(MemoryKind.KNOWLEDGE, pk) for pk in by_topic]
        + [Candidate(MemoryKind.MESSAGE, pk) for pk in told],
    }
    found = {candidate for ranking in rankings.values() for candidate in ranking}
    ranked = fuse(
        rankings=list(rankings.values()),
        sessions=sessions,
        neighbours={pk: (place.before, place.after) for pk, place in turns.items()},
    )
    # A question is shown only as the lead-in to the turn that answers it.
    answer_of = _answers(turns, hidden=hidden | set(scope.exclude_message_pks))
    asked = {
        answer: question
        for question, answer in answer_of.items()
        if answer and Candidate(MemoryKind.MESSAGE, question) in found
    }
    ranked = answers_for_questions(ranked, answer_of=answer_of)
    ranked = exchanges_by_their_nearer_turn(
        ranked,
        before={pk: p.before for pk, p in turns.items() if _replies_to_a_statement(p, turns)},
        similarity={row.pk: 1 - row.distance for row in nearest if row.kind == MemoryKind.MESSAGE},
    )
    origin = retrievers.provenance(
        knowledge_ids=[r.candidate.pk for r in ranked if r.candidate.kind == MemoryKind.KNOWLEDGE],
        message_ids=[r.candidate.pk for r in ranked if r.candidate.kind == MemoryKind.MESSAGE],
    )
    # A turn whose fact was replaced comes right below the fact that holds now; a fact stands in for the turns
    # it was raised from; a later turn on its slot comes above it.
    holds_now = (
        {Candidate(MemoryKind.MESSAGE, m): Candidate(MemoryKind.KNOWLEDGE, k) for m, k in origin.replaced_by.items()}
        if scope.knowledge() is not None
        else {}
    )
    ranked = replaced_below_what_holds_now(
        ranked, replaced={Candidate(MemoryKind.MESSAGE, pk) for pk in origin.replaced}, replaced_by=holds_now
    )
    ranked = facts_over_sources(ranked, sources=origin.sources)
    changed = (
        {fact: message for fact, (message, _) in origin.changed.items()} if MemoryKind.MESSAGE in scope.sources else {}
    )
    if missing := [m for m in changed.values() if m not in turns]:
        turns |= retrievers.neighbours(message_ids=missing)
    ranked = changes_above_facts(ranked, changed=changed)
    found_by: dict[Candidate, list[str]] = {}
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
        changed=origin.changed,
        hidden_message_ids=frozenset(hidden),
        found_by=found_by,
        turns_after=turns_after,
        # A fact raised from a turn that tells the topic asked about tells it too.
        topical=frozenset(rankings["topic"])
        | {
            Candidate(MemoryKind.KNOWLEDGE, fact)
            for fact, turns_of in origin.sources.items()
            if any(Candidate(MemoryKind.MESSAGE, m) in rankings["topic"] for m in turns_of)
        },
        asked=asked,
    )


def relevant(hits: list[Hit]) -> list[Hit]:
    """The hits at least ``SEARCH_MIN_SIMILARITY`` (cosine) from the query or answering a question that is
    (``Hit.question_score``), the facts on the topic it asks about and the user's statements telling it
    (``Hit.topical``), and the messages found by their words that have no vector yet (the worker has not
    embedded them: they cannot be judged), and the later turn that may have changed a relevant fact."""
    gate = settings.SEARCH_MIN_SIMILARITY
    kept = [h for h in hits if h.topical or max(h.score or gate, h.question_score or -1) >= gate]
    # The later turn that may have changed a relevant fact is relevant with it.
    changing = {h.changed_by for h in kept if h.changed_by is not None}
    chosen = {id(h) for h in kept}
    return [h for h in hits if id(h) in chosen or (h.kind == MemoryKind.MESSAGE and h.id in changing)]


def embed_query(query: str) -> EmbeddingBatch:
    """``query`` embedded by the configured model (one vector), timed as the search's ``embed`` stage.

    Raises:
        ModelBackendError: the embedding backend failed.
    """
    with SEARCH_STAGE_SECONDS.labels("embed").time(), counted_call("embed"):
        return get_embedder().embed([query])


def _facts_on_topic(*, scope: RowScope, query: str, topic: Topic | None, limit: int) -> list[int]:
    """The user's facts that answer the ``topic`` the query asks about (``topics``): by their slot, said last
    first, or for a request for advice (or a topic of no slot), nearest the topic first; ``[]`` when it asks
    about none."""
    if MemoryKind.KNOWLEDGE not in scope.sources or topic is None:
        return []
    if topic.slots:
        # "my son's name", "what does my husband do for work?": that relative's facts, not the user's own (a
        # partner's name is in the partner slot); for a family question, the whole family's when they have none.
        named = _relatives_named(query) if topic.relatives else []
        if named:
            heads = [*named, *(["partner"] if set(named) & set(PARTNERS) else [])]
            found = retrievers.by_slots(scope=scope, heads=heads, limit=limit)
            if found or named[0] not in topic.slots:
                return found
        return retrievers.by_slots(scope=scope, heads=topic.slots, limit=limit)
    if not topic.known:  # a topic told in the user's words only ("what do I do for fun?"): its facts too
        if (told := telling(topic)) is None:
            return []
        wanted, classes = told.centroids, told.classes.tolist()
    else:
        wanted, classes = fact_classes(topic)
    found = {}
    for centroid in wanted:
        for pk, distance in retrievers.by_topic(scope=scope, topic=centroid, classes=classes, limit=limit):
            found[pk] = min(distance, found.get(pk, distance))
    return sorted(found, key=found.__getitem__)[:limit]


def _relatives_named(query: str) -> list[str]:
    """The relatives a question asks about, as the heads of their facts' slots ("what does my husband do?":
    ``husband``); not a business partner, nor someone the user is with ("where do I live with my kids?")."""
    return [
        head
        for head in RELATIVES
        if re.search(
            rf"(?<!business )(?<!with )(?<!with my )(?<!with our )(?<!with the )\b{re.escape(head)}s?\b",
            query,
            re.IGNORECASE,
        )
    ]


def _told_on_topic(*, scope: RowScope, topic: Topic | None, pool: int, limit: int) -> list[int]:
    """The user's statements in ``scope`` that tell ``topic`` in their own words (``topics.telling``): of the
    ``pool`` messages nearest how people tell it, those at least ``SEARCH_MIN_SIMILARITY`` from it and nearer
    it than any other class, up to ``limit``, nearest first; ``[]`` for no topic or one not told that way."""
    if topic is None or MemoryKind.MESSAGE not in scope.sources or (told := telling(topic)) is None:
        return []
    near: dict[int, float] = {}
    for centroid in told.centroids:
        for row in retrievers.dense(limits={MemoryKind.MESSAGE: pool}, scope=scope, vector=centroid):
            if 1 - row.distance >= settings.SEARCH_MIN_SIMILARITY:
                near[row.pk] = min(row.distance, near.get(row.pk, row.distance))
    # The user's statements, not the bot's replies nor the user's questions.
    vectors = dict(
        Message.objects.filter(pk__in=list(near), role=Role.USER, dialogue_act=DialogueAct.STATEMENT).values_list(
            "pk", "embedding"
        )
    )
    ranked = sorted(vectors, key=near.__getitem__)
    return [pk for pk, tells in zip(ranked, told.tells([vectors[pk] for pk in ranked]), strict=True) if tells][:limit]


def _answers(turns: dict[int, retrievers.Neighbours], *, hidden: set[int]) -> dict[int, int | None]:
    """For each question among ``turns``: the turn after it when that answers it (a statement not
    ``hidden``), else ``None``."""
    return {
        pk: place.after if place.after_act == DialogueAct.STATEMENT and place.after not in hidden else None
        for pk, place in turns.items()
        if place.act == DialogueAct.QUESTION
    }


def _replies_to_a_statement(place: retrievers.Neighbours, turns: dict[int, retrievers.Neighbours]) -> bool:
    """Whether an assistant's turn replies to a statement of the user's that is among ``turns``."""
    earlier = turns.get(place.before) if place.before is not None else None
    return (
        place.role == Role.ASSISTANT
        and earlier is not None
        and earlier.role == Role.USER
        and earlier.act == DialogueAct.STATEMENT
    )


def _said_in_named_days(
    *, scope: RowScope, days: tuple[date, date] | None, vector: Sequence[float], limit: int
) -> list[Near]:
    """The messages said in the ``days`` the query names (``dates.named_days``: first and last local day in
    the caller's zone), within the caller's own channel and window, nearest to ``vector`` first; ``[]`` when
    it names none or none of them is in the caller's window."""
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
        Near(row.pk, row.distance)
        for row in retrievers.dense(limits={MemoryKind.MESSAGE: limit}, scope=within, vector=vector)
    ]
