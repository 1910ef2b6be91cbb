"""The order memories are shown in, to a chatbot's prompt and in an offline answer: what holds now first.

Facts (knowledge) come first, the one said last first, then the turns, summaries and diaries,
newest first, so that a later statement of the same thing comes above an earlier one. A memory
said in a later session than a fact that names what the fact is about, or says that something
changed, or that tells about the topic asked about as the fact does (``Hit.topical``), comes right
above that fact, since it may have replaced it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memories.kinds import MemoryKind
from memories.search.hits import Hit

__all__ = ["in_prompt_order"]


def in_prompt_order(memories: list[Hit]) -> list[Hit]:
    """Facts first, as they hold now (those on the topic asked about first, then the others; in each, a
    value that holds before one that ended, and the one said last first), then the rest newest first: a
    later statement of the same thing comes above an earlier one.

    A turn that spoke of a fact's slot later (``Hit.changed_by``), and a turn or summary said in a later
    session than a fact that names what the fact is about (a content word of the fact, not the user's
    name), says that something changed ("we moved", "I quit") or tells about the topic asked about, as
    the fact does (``Hit.topical``), comes right above that fact: it may have replaced it ("They moved my
    operation to the 24th" above "Elena has an operation on September 10").
    """
    never = datetime.min.replace(tzinfo=UTC)
    newest_first = sorted(memories, key=lambda h: h.conversation_time or never, reverse=True)
    # The facts on the topic asked about come first: what holds of it now, not what was said last of anything.
    facts = [h for h in newest_first if h.kind == MemoryKind.KNOWLEDGE]
    # Stable: newest first within each group.
    facts = sorted(facts, key=lambda h: (not h.topical, h.ends))
    rest = [h for h in newest_first if h.kind != MemoryKind.KNOWLEDGE]
    ordered: list[Hit] = []
    for fact in facts:
        topic = _topic_words(fact)
        later = [
            h
            for h in rest
            if h.id == fact.changed_by
            and h.kind == MemoryKind.MESSAGE
            or (said := _said_after(h, fact))
            and (h.topical and fact.topical or topic & _words(said) or _CHANGE.search(said))
        ]
        ordered += later
        rest = [h for h in rest if h not in later]
        ordered.append(fact)
    return ordered + rest


_WORD = re.compile(r"[^\W\d_]{4,}")
# Words that say something changed ("we moved", "I quit", "switched to", "no longer"): a later turn
# saying one, found for the same query as a fact, may have replaced it.
_CHANGE = re.compile(
    r"\b(?:moved|moving|quit|left|switched|changed|instead|no longer|any ?more|broke up|sold"
    r"|new (?:job|home|house|flat|place)|postponed|rescheduled|cancell?ed)\b",
    re.IGNORECASE,
)
# Words that name no topic: function words, common verbs, time words.
_NO_TOPIC = frozenset(
    """about after again also been before being could does doing done from have having here just like
    more most much must need only really said says should some such than that their them then there these
    they this those very want were what when where which while will with would your yours named called
    user today tomorrow yesterday week weeks month months year years day days time january february march
    april june july august september october november december monday tuesday wednesday thursday friday
    saturday sunday""".split()
)


def _words(text: str) -> set[str]:
    """The lower-cased words of four letters or more in ``text`` that may name a topic."""
    return {w for w in (m.group().lower() for m in _WORD.finditer(text)) if w not in _NO_TOPIC}


def _topic_words(fact: Hit) -> set[str]:
    """What ``fact`` is about: its words, without the names of the people whose turns raised it."""
    names = {w.lower() for t in fact.turns for w in (t.speaker or "").split()} | {"user", "assistant"}
    return {w for w in _words(fact.content) if w not in names and w.removesuffix("s") not in names}


def _said_after(hit: Hit, fact: Hit) -> str:
    """What ``hit`` says that was said after ``fact`` in a later session (its turns after the fact's own)."""
    if None in (fact.conversation_time, hit.conversation_time) or hit.session_external_id == fact.session_external_id:
        return ""
    if hit.kind != MemoryKind.MESSAGE:
        return hit.content if hit.conversation_time > fact.conversation_time else ""
    sources = {t.id for t in fact.turns}
    return " ".join(t.content for t in hit.turns if t.created_at > fact.conversation_time and t.id not in sources)
