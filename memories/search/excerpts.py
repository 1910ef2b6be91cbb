"""Results a bot can afford: a long turn is shown by the parts of it that match the query.

A chatbot pastes what a search returns into a prompt of limited size; an assistant's answers can run
to thousands of tokens, and a hit shows its neighbouring turns too. When the hits' blocks together
pass the budget, every turn longer than a cap is cut to its best-matching fragments (PostgreSQL's
``ts_headline``, https://www.postgresql.org/docs/16/textsearch-controls.html#TEXTSEARCH-HEADLINE), the
cap lowered step by step until the blocks fit; if they still do not, the hits lose the turns shown
around them (and a fact the turns it cites), from the last hit up, and then hits are left out, last
first.
"""

from __future__ import annotations

from dataclasses import replace

from memories.kinds import MemoryKind
from memories.search.hits import Hit
from memories.search.prompt import count_tokens
from memories.search.retrievers import excerpts

__all__ = ["fit_to_budget"]

# Tokens a turn is cut to, tried largest first; the smallest still shows a sentence or two.
_CAPS = (400, 250, 160, 100, 60)
# Words per token of English text by the WordPiece tokenizer, and the fragments an excerpt holds.
_WORDS_PER_TOKEN = 0.75
_FRAGMENTS = 2


def fit_to_budget(hits: list[Hit], *, query: str, max_tokens: int) -> list[Hit]:
    """``hits`` (best first) whose blocks (``Hit.block``) take at most ``max_tokens`` tokens together.

    Turns over a cap are shown by their fragments matching ``query`` (``Turn.excerpt``); the cap is
    the largest of 400, 250, 160, 100 and 60 tokens that makes the blocks fit, by the turns' own
    lengths; then hits lose their neighbouring (or cited) turns, from the last up, and then hits are
    left out, last first, until they do. Hits that fit already come back as they are.
    """
    if not hits or sum(count_tokens([h.block() for h in hits])) <= max_tokens:
        return hits
    turns = {t.id: t for h in hits for t in h.turns if h.kind == MemoryKind.MESSAGE}
    lengths = dict(zip(turns, count_tokens([t.content for t in turns.values()]), strict=True))
    total = sum(count_tokens([h.block() for h in hits]))
    cap = _CAPS[-1]
    for candidate in _CAPS:
        if total - sum(max(0, n - candidate) for n in lengths.values()) <= max_tokens:
            cap = candidate
            break
    long_turns = [pk for pk, n in lengths.items() if n > cap]
    cut = excerpts(message_ids=long_turns, query=query, words=int(cap * _WORDS_PER_TOKEN / _FRAGMENTS),
                   fragments=_FRAGMENTS)  # fmt: skip
    shortened = []
    for hit in hits:
        if hit.kind == MemoryKind.MESSAGE and any(t.id in cut for t in hit.turns):
            new_turns = tuple(
                replace(t, content=cut[t.id], text=f"{t.speaker}: {cut[t.id]}", excerpt=True) if t.id in cut else t
                for t in hit.turns
            )
            hit = replace(hit, turns=new_turns, content=cut.get(hit.id, hit.content))
        shortened.append(hit)
    # Then the turns around the hits (and the turns a fact cites), from the last hit up; then hits, last first.
    tokens = count_tokens([h.block() for h in shortened])
    for position in reversed(range(len(shortened))):
        if sum(tokens) <= max_tokens:
            break
        hit = shortened[position]
        alone = tuple(t for t in hit.turns if t.is_hit and hit.kind == MemoryKind.MESSAGE)
        if alone != hit.turns:
            shortened[position] = replace(hit, turns=alone)
            tokens[position] = sum(count_tokens([shortened[position].block()]))
    while shortened and sum(tokens) > max_tokens:
        shortened.pop()
        tokens.pop()
    return shortened
