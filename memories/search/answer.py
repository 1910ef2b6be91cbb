"""Answers from retrieved hits: the supporting turns verbatim offline, or an LLM's answer that cites them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from memories.kinds import MemoryKind
from memories.llm import ChatModel, Usage
from memories.metrics import counted_call
from memories.search.hits import Hit, Turn
from memories.search.order import in_prompt_order

__all__ = ["NOT_FOUND", "Answer", "answer_question"]

NOT_FOUND = "Not found in memory."
# Supporting hits quoted by an offline answer.
_QUOTED = 3
# An LLM's citation: "[2]", or several numbers in one bracket, "[2, 5]", as models often write despite the prompt.
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


@dataclass(frozen=True)
class Answer:
    """``text`` answers the question; ``mode`` is ``extractive`` (quoted) or ``generated`` (an LLM wrote it).

    ``cited`` are the positions (0-based) in the hits given of the ones the answer rests on.
    """

    text: str
    mode: str
    found: bool
    cited: tuple[int, ...] = ()
    usage: Usage = field(default_factory=Usage)


def answer_question(
    *,
    question: str,
    hits: Sequence[Hit],
    relevant: Sequence[Hit],
    chat: ChatModel,
    multi_user: bool = False,
    zone: tzinfo = UTC,
) -> Answer:
    """Answer ``question`` from ``hits``, or say it is not in memory when no hit is ``relevant``.

    Offline (``chat.mode == "extractive"``) the answer quotes the best relevant hits, facts first, each
    newest first: facts ("Known: ... (said on 3 June 2024: “<the turn it was raised from>”)") and turns
    with their speaker and date ("On 8 May 2023 Caroline said: ..."), the day as it was in ``zone``
    (the caller's time zone), each quote after its end user's id ("[user u1] On ...") when
    ``multi_user``; never a turn whose fact a later one replaced; nothing is generated. A question is
    quoted by the reply after it, and one that has no reply is not quoted: with nothing left to quote
    the answer is "not found". An LLM gets the hits as numbered blocks and cites the numbers it used
    ("[2][5]" or "[2, 5]").

    Raises:
        ModelBackendError: the chat backend failed.
    """
    if not relevant:
        return Answer(text=NOT_FOUND, mode=chat.mode, found=False)
    if chat.mode == "extractive":
        quoted = _supporting(relevant, multi_user=multi_user, zone=zone)
        if not quoted:
            return Answer(text=NOT_FOUND, mode=chat.mode, found=False)
        return Answer(
            text="\n".join(text for text, _ in quoted),
            mode=chat.mode,
            found=True,
            cited=tuple(dict.fromkeys(hits.index(hit) for _, hit in quoted)),
        )
    blocks = [f"[{i}] {hit.block(multi_user=multi_user)}" for i, hit in enumerate(hits, 1)]
    with counted_call("answer"):
        reply = chat.answer(question=question, blocks=blocks)
    if not reply.sufficient:
        return Answer(text=NOT_FOUND, mode=reply.mode, found=False, usage=reply.usage)
    numbers = {int(n) for group in _CITATION.findall(reply.text) for n in group.split(",")}
    cited = tuple(i - 1 for i in range(1, len(hits) + 1) if i in numbers)
    return Answer(text=reply.text, mode=reply.mode, found=True, cited=cited, usage=reply.usage)


def _supporting(relevant: Sequence[Hit], *, multi_user: bool = False, zone: tzinfo = UTC) -> list[tuple[str, Hit]]:
    """Up to ``_QUOTED`` distinct quotes with the hit each comes from: the facts and the user's statements on
    the topic asked about (``Hit.topical``), then the best facts and turns, never a turn whose fact a later
    one replaced, facts first and each newest first (``memories.search.order``); only without either,
    summaries and diaries (which retell the turns). With several end users searched, each quote names its
    user."""
    current = [h for h in relevant if h.replaced_at is None]
    # What is on the topic asked about answers it ("What do I do for a living?": the job), then the best.
    said = [h for h in current if h.topical] + [
        h for h in current if h.kind in (MemoryKind.KNOWLEDGE, MemoryKind.MESSAGE) and not h.topical
    ]
    retold = [h for h in current if h.kind not in (MemoryKind.KNOWLEDGE, MemoryKind.MESSAGE)]
    quotes: dict[str, Hit] = {}
    for group in (said, retold):
        for hit in group:
            if len(quotes) == _QUOTED:
                break
            if (quote := _quote(hit, zone)) is not None:
                user = hit.user_external_id
                quotes.setdefault(f"[user {user}] {quote}" if multi_user and user else quote, hit)
        if quotes:
            break
    # Facts, as they hold now, first; a later turn about a fact's topic above it.
    order = {id(hit): i for i, hit in enumerate(in_prompt_order(list(dict.fromkeys(quotes.values()))))}
    return sorted(quotes.items(), key=lambda item: order[id(item[1])])


def _answering_turn(hit: Hit) -> Turn | None:
    """The hit's own turn, or, when it asks a question (which answers nothing), the reply after it;
    ``None`` for a question with no reply shown."""
    position = next(i for i, t in enumerate(hit.turns) if t.is_hit)
    own = hit.turns[position]
    if not own.content.rstrip().endswith("?"):
        return own
    return hit.turns[position + 1] if position + 1 < len(hit.turns) else None


def _quote(hit: Hit, zone: tzinfo) -> str | None:
    if hit.kind == MemoryKind.MESSAGE:
        if (turn := _answering_turn(hit)) is None:
            return None
        return f"On {_day(turn.created_at, zone)} {turn.speaker} said: \u201c{turn.content}\u201d"
    if hit.kind == MemoryKind.SUMMARY:
        return f"From the conversation of {_day(hit.conversation_time, zone)}: {hit.content}"
    if hit.kind == MemoryKind.DIARY:
        return f"Diary, {_day(hit.conversation_time, UTC)}: {hit.content}"  # a diary's date is already local
    sources = "; ".join(f"\u201c{t.content}\u201d" for t in hit.turns)
    if hit.changed_at is not None:  # a later turn spoke of its slot: what was said then, not what is known now
        return f"Said on {_day(hit.conversation_time, zone)}: {hit.content}" + (f" ({sources})" if sources else "")
    when = f"said on {_day(hit.conversation_time, zone)}" if hit.conversation_time else ""
    said = ": ".join(filter(None, [when, sources]))
    return f"Known: {hit.content}" + (f" ({said})" if said else "")


def _day(value: datetime | None, zone: tzinfo) -> str:
    if value is None:
        return "an unknown date"
    try:
        local = value.astimezone(zone)
    except OverflowError:  # past year 1 or 9999 in that zone: the UTC day
        local = value
    return f"{local.day} {local:%B %Y}"
