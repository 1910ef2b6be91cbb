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

__all__ = ["NEIGHBOUR_SHARE", "RRF_K", "SESSION_SHARE", "Candidate", "fuse", "with_a_new_session_last"]

RRF_K = 10
# A turn gains this share of the fused score of the turn before it, the one it replies to: an answer
# ("Yes, at the beach!") often follows the turn that matches the question. Only forwards: a reply
# does not make the turn before it more relevant.
NEIGHBOUR_SHARE = 0.3
# ... and this share of the best fused score in its session (a message's or the session summary's):
# the session that holds the best match is likelier to hold the rest of the answer.
SESSION_SHARE = 0.2

Candidate = tuple[str, int]  # (kind, id)


def fuse(
    *,
    rankings: Sequence[Sequence[Candidate]],
    sessions: Mapping[Candidate, int],
    neighbours: Mapping[int, tuple[int | None, int | None]],
) -> list[tuple[Candidate, float]]:
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
        if kind == "message" and (before := neighbours.get(pk, (None, None))[0]) is not None:
            smoothed[candidate] += NEIGHBOUR_SHARE * fused.get(("message", before), 0.0)
    return sorted(smoothed.items(), key=lambda item: (-item[1], first_seen[item[0]]))


def with_a_new_session_last(
    ranked: Sequence[tuple[Candidate, float]],
    *,
    sessions: Mapping[Candidate, int],
    top_k: int,
    eligible: Collection[Candidate] | None = None,
) -> list[tuple[Candidate, float]]:
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
        if sessions.get(item[0], item[0]) not in shown and (eligible is None or item[0] in eligible):
            return [*head, item]
    return list(ranked[:top_k])
