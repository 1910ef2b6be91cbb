"""The offline heuristic that raises durable facts from a conversation (no LLM).

A sentence becomes a fact when the user states something lasting about themselves in the
first person: where they live, their work, name, diet, relationship status, favourites,
allergies, possessions, likes and dislikes ("I moved to Osaka", "I'm allergic to peanuts",
"My favourite food is ramen"). Questions, and sentences about a passing moment ("today",
"yesterday", "right now", ...), are left out.

Some facts fill a *slot* a person has only one of at a time (residence, job, name, diet,
relationship, each favourite thing): a new fact in a slot replaces the known fact in the
same slot. Facts without a slot (allergies, likes, possessions) accumulate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memories.llm.base import Fact
from memories.llm.text import split_sentences

__all__ = ["extract_facts_heuristic", "fact_slot"]

_SLOTS: list[tuple[str, re.Pattern[str]]] = [
    ("residence", re.compile(r"\bI(?: have|'ve)? (?:live|lived|moved|relocated)\b|\bmy (?:home|hometown) is\b", re.I)),
    ("job", re.compile(r"\bI (?:work|worked) (?:at|as|for|in)\b|\bmy job is\b|\bI(?:'m| am) employed\b", re.I)),
    ("name", re.compile(r"\bmy name is\b|\bcall me\b", re.I)),
    ("diet", re.compile(r"\bI(?:'m| am) (?:a )?(?:vegetarian|vegan|pescatarian)\b|\bI don'?t eat\b", re.I)),
    ("relationship", re.compile(r"\bI(?:'m| am| got) (?:married|single|divorced|engaged)\b", re.I)),
]
_FAVOURITE = re.compile(r"\bmy (?:all-time )?favou?rite ([a-z]+(?: [a-z]+)?)\b", re.I)
_UNSLOTTED = re.compile(
    r"\bI(?:'m| am) allergic to\b|\bI (?:have|own) (?:a|an|two|three|\d+) \w+"
    r"|\bI (?:love|like|enjoy|hate|prefer|dislike)\b|\bI(?:'m| am) (?:a|an) (?!bit|little|lot)\w+"
    r"|\bI(?:'ve| have) been (?:a|an) \w+",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening|week)|right now|last night|"
    r"just now|at the moment)\b",
    re.I,
)
_MIN_WORDS, _MAX_WORDS = 4, 40


def fact_slot(text: str) -> str | None:
    """The slot a fact fills (``residence``, ``favourite:food``, ...), or ``None``."""
    for slot, pattern in _SLOTS:
        if pattern.search(text):
            return slot
    if match := _FAVOURITE.search(text):
        return "favourite:" + match.group(1).lower().split()[0]
    return None


def _is_fact(sentence: str) -> bool:
    words = len(sentence.split())
    if not _MIN_WORDS <= words <= _MAX_WORDS or sentence.rstrip().endswith("?") or _TRANSIENT.search(sentence):
        return False
    return fact_slot(sentence) is not None or bool(_UNSLOTTED.search(sentence))


def extract_facts_heuristic(
    *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]]
) -> list[Fact]:
    """Facts stated by the user in ``messages`` (``(id, "Speaker: text")``), each as ``"Speaker: sentence"``.

    A fact replaces the most recent known fact (``known_facts`` is oldest first) in its slot.
    """
    slots = {slot: fact_id for fact_id, text in known_facts if (slot := fact_slot(text))}
    facts: list[Fact] = []
    for message_id, line in messages:
        speaker, _, text = line.partition(": ") if ": " in line else ("", "", line)
        for sentence in split_sentences(text):
            if _is_fact(sentence):
                slot = fact_slot(sentence)
                facts.append(
                    Fact(
                        text=f"{speaker}: {sentence}" if speaker else sentence,
                        message_ids=[message_id],
                        replaces_id=slots.get(slot) if slot else None,
                    )
                )
    return facts
