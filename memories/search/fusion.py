"""One ranking from several: reciprocal rank fusion, then smoothing over the turn before and the session.

Reciprocal rank fusion: Cormack, Clarke & Buettcher, "Reciprocal Rank Fusion outperforms
Condorcet and individual Rank Learning Methods", SIGIR 2009: an item scores
``sum(1 / (k + rank))`` over the rankings it appears in. Every ranking weighs the same, so no
weight is fitted to one kind of conversation; ``k`` is 10 rather than their 60, so that the
neighbour and session shares below stay smaller than the gap between a top rank and a middling one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

from memories.kinds import MemoryKind
from memories.search.candidates import Candidate, Ranked

__all__ = [
    "changes_above_facts",
    "NEIGHBOUR_SHARE",
    "RRF_K",
    "SESSION_SHARE",
    "Candidate",
    "answers_for_questions",
    "facts_over_sources",
    "fuse",
    "replaced_below_what_holds_now",
    "with_a_new_session_last",
]

RRF_K = 10
# A turn gains this share of the fused score of the turn before it, the one it replies to: an answer
# ("Yes, at the beach!") often follows the turn that matches the question. Only forwards: a reply
# does not make the turn before it more relevant.
NEIGHBOUR_SHARE = 0.3
# ... and this share of the best fused score in its session (a message's or the session summary's):
# the session that holds the best match is likelier to hold the rest of the answer.
SESSION_SHARE = 0.2


def fuse(
    *,
    rankings: Sequence[Sequence[Candidate]],
    sessions: Mapping[Candidate, int],
    neighbours: Mapping[int, tuple[int | None, int | None]],
) -> list[Ranked]:
    """Fuse ``rankings`` (each best first) into one: ``(candidate, score)``, best first.

    Args:
        rankings: ranked candidates, e.g. messages by vector, messages by BM25, summaries by vector.
        sessions: the session pk of each candidate that has one (messages, summaries).
        neighbours: for a message id, the ids of the turns just before and after it (only the turn
            before counts: see ``NEIGHBOUR_SHARE``).

    Ties go to the candidate ranked first by the earliest ranking, then by the next.
    """
    fused: dict[Candidate, float] = defaultdict(float)
    first_seen: dict[Candidate, tuple[int, int]] = {}
    for order, ranking in enumerate(rankings):
        for rank, candidate in enumerate(ranking, start=1):
            fused[candidate] += 1.0 / (RRF_K + rank)
            first_seen.setdefault(candidate, (order, rank))
    best_in_session: dict[int, float] = defaultdict(float)
    for candidate, score in fused.items():
        if (session := sessions.get(candidate)) is not None:
            best_in_session[session] = max(best_in_session[session], score)
    smoothed = {}
    for candidate, score in fused.items():
        kind, pk = candidate
        # A candidate without a session (knowledge, a diary) is its own session.
        session = sessions.get(candidate)
        smoothed[candidate] = score + SESSION_SHARE * (best_in_session[session] if session is not None else score)
        if kind == MemoryKind.MESSAGE and (before := neighbours.get(pk, (None, None))[0]) is not None:
            smoothed[candidate] += NEIGHBOUR_SHARE * fused.get(Candidate(MemoryKind.MESSAGE, before), 0.0)
    return [Ranked(*item) for item in sorted(smoothed.items(), key=lambda item: (-item[1], first_seen[item[0]]))]


def with_a_new_session_last(
    ranked: Sequence[Ranked],
    *,
    sessions: Mapping[Candidate, int],
    top_k: int,
    eligible: Collection[Candidate] | None = None,
) -> list[Ranked]:
    """The first ``top_k`` of ``ranked``, but the last place goes to the best candidate from a session
    none of the others comes from, when there is one (a candidate without a session is its own) among
    ``eligible`` (default: any; ``retrieve`` gives those similar enough to the query to be relevant).

    Many answers lie in two conversations, and the fused ranking tends to fill its places from the
    one that matches best; one place kept for another session covers the second, at the cost of
    that session's fifth or tenth best turn (result diversification, as in Carbonell & Goldstein's
    maximal marginal relevance, SIGIR 1998, reduced to one place).
    """
    head = list(ranked[: top_k - 1])
    shown = {sessions.get(candidate, candidate) for candidate, _ in head}
    for item in ranked[top_k - 1 :]:
        candidate = item.candidate
        if sessions.get(candidate, candidate) not in shown and (eligible is None or candidate in eligible):
            return [*head, item]
    return list(ranked[:top_k])


def answers_for_questions(ranked: Sequence[Ranked], *, answer_of: Mapping[int, int | None]) -> list[Ranked]:
    """``ranked`` without the questions (message ids in ``answer_of``): each question's place goes to the
    turn answering it (``answer_of[id]``; ``None``: it has none, and the question goes), which keeps the
    better of its own score and the question's.

    A question says nothing about the user by itself, and the user's own earlier questions match a new
    one best of all ("Where do I work?" again): shown, they would crowd out the answers.
    """
    scores = dict(ranked)
    order = {candidate: position for position, (candidate, _) in enumerate(ranked)}
    for (kind, pk), score in ranked:
        if kind == MemoryKind.MESSAGE and pk in answer_of:
            del scores[(kind, pk)]
            answer = answer_of[pk]
            if answer is not None and answer not in answer_of:
                key = Candidate(MemoryKind.MESSAGE, answer)
                if score > scores.get(key, float("-inf")):
                    scores[key] = score
                    order[key] = min(order.get(key, order[(kind, pk)]), order[(kind, pk)])
    return [Ranked(*item) for item in sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))]


def exchanges_by_their_nearer_turn(
    ranked: Sequence[Ranked], *, before: Mapping[int, int | None], similarity: Mapping[int, float]
) -> list[Ranked]:
    """``ranked`` where a reply found together with the turn it replies to is shown from that turn when
    it is nearer the query: the earlier turn takes the reply's place (and the better of their scores),
    the reply is shown after it anyway.

    Args:
        before: for a message id, the statement it replies to (the turn before it; ``None``: none, or a
            question, which is only a lead-in).
        similarity: cosine similarity to the query of the messages ranked by vector.

    A user's "I've written 17 poems in two weeks" and the long reply praising it are one exchange;
    word rankings favour the long reply, and it outranks the turn that holds the fact.
    """
    scores = dict(ranked)
    order = {candidate: position for position, (candidate, _) in enumerate(ranked)}
    for (kind, pk), _ in ranked:
        earlier = before.get(pk) if kind == MemoryKind.MESSAGE else None
        key, turn = Candidate(kind, pk), Candidate(MemoryKind.MESSAGE, earlier)
        if earlier is None or key not in scores or turn not in scores:
            continue
        if similarity.get(earlier, -1.0) > similarity.get(pk, -1.0) and order[turn] > order[key]:
            scores[turn], order[turn] = max(scores[key], scores[turn]), order[key]
            del scores[key]
    return [Ranked(*item) for item in sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))]


def facts_over_sources(ranked: Sequence[Ranked], *, sources: Mapping[int, Collection[int]]) -> list[Ranked]:
    """``ranked`` where each fact (knowledge id in ``sources``) takes the place of the best of the turns it
    was raised from (``sources[id]``, message ids) when that is better than its own, and those turns go:
    the fact says what they said, as it holds now."""
    scores = dict(ranked)
    order = {candidate: position for position, (candidate, _) in enumerate(ranked)}
    for (kind, pk), _ in ranked:
        if kind != MemoryKind.KNOWLEDGE or (kind, pk) not in scores:
            continue
        for message_id in sources.get(pk, ()):
            turn = Candidate(MemoryKind.MESSAGE, message_id)
            if turn in scores:
                if scores[turn] > scores[(kind, pk)]:
                    scores[(kind, pk)] = scores[turn]
                    order[(kind, pk)] = order[turn]
                del scores[turn]
    return [Ranked(*item) for item in sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))]


def changes_above_facts(ranked: Sequence[Ranked], *, changed: Mapping[int, int]) -> list[Ranked]:
    """``ranked`` with, right above each fact in ``changed`` (knowledge id -> message id), the later turn that
    spoke of its slot (at the fact's score, moved up if it was ranked lower): a bot reads what may have
    changed the fact before the fact itself."""
    changing = {Candidate(MemoryKind.MESSAGE, message_id) for message_id in changed.values()}
    out: list[Ranked] = []
    for candidate, score in ranked:
        if candidate in changing:
            continue
        if candidate.kind == MemoryKind.KNOWLEDGE and candidate.pk in changed:
            turn = Candidate(MemoryKind.MESSAGE, changed[candidate.pk])
            if turn not in {r.candidate for r in out}:
                out.append(Ranked(turn, score))
        out.append(Ranked(candidate, score))
    return out


def replaced_below_what_holds_now(
    ranked: Sequence[Ranked], *, replaced: Collection[Candidate], replaced_by: Mapping[Candidate, Candidate]
) -> list[Ranked]:
    """``ranked`` where each of the ``replaced`` candidates (turns that said what a later fact replaced) comes
    right after the fact that holds now (``replaced_by``), that fact moved up to its place when it was ranked
    lower or not at all; a replaced turn whose fact cannot be shown goes after all the others. What held
    earlier never comes above what holds now, and is still found for a question about the past ("when was
    my 18th birthday?")."""
    out: list[Ranked] = []
    last: list[Ranked] = []
    placed: set[Candidate] = set()
    for candidate, score in ranked:
        if candidate in placed:
            continue
        if candidate in replaced:
            holds = replaced_by.get(candidate)
            if holds is None:
                last.append(Ranked(candidate, score))
                continue
            if holds not in placed:
                out.append(Ranked(holds, score))
                placed.add(holds)
        out.append(Ranked(candidate, score))
        placed.add(candidate)
    return out + last
