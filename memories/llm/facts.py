"""The offline heuristic that raises durable facts about the user from their own turns (no LLM).

Conservative rules: a clause becomes a fact only when the user says, in the first person, something
lasting about themselves (where they live or come from, their work, name, partner, diet, allergies,
pets and family, favourites, goals and passions, what they have been doing or are learning or working
on, likes), and its object is specific (not "stuff", "a lot", "all of it"). It is rewritten in the
third person with the speaker's name ("I live in Osaka now" -> "Caroline lives in Osaka now."), or
"The user" when the turn names no speaker. A sentence is skipped whole when it asks a question,
negates ("not", "never", ...), is hypothetical or about plans ("if", "would", "want to", ...), or is
about a passing moment ("today", "yesterday", ...); a clause that still speaks of "you" or "me" after
the rewrite is skipped too, since it is about the other speaker or cannot be rewritten cleanly.
Callers pass only the user's own turns.

Some facts fill a *slot* a person has one value of at a time (residence, job, name, partner, diet,
each favourite thing, a named pet's name): the newest fact in a slot supersedes older ones
(``memories.services.knowledge``). Facts without a slot (allergies, likes, possessions) accumulate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memories.llm.base import Fact
from memories.llm.text import split_sentences

__all__ = ["extract_facts_heuristic"]

_PETS = r"(?:dog|puppy|cat|kitten|guinea pig|hamster|rabbit|bunny|parrot|bird|fish|turtle|horse|snake|lizard)"
_KIN = r"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|grandkids)"
_RELATIONSHIP = r"(?:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse)"
_LIKES = {"love": "loves", "like": "likes", "enjoy": "enjoys", "adore": "adores", "hate": "hates"}


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    # Builds the third-person statement from the subject ("Caroline") and the match.
    rewrite: Callable[[str, re.Match[str]], str]
    slot: Callable[[re.Match[str]], str | None]
    confidence: float


def _rule(pattern: str, rewrite: Callable[[str, re.Match[str]], str], slot: str | None, confidence: float) -> _Rule:
    return _Rule(re.compile(pattern, re.I), rewrite, lambda _m: slot, confidence)


_RULES: list[_Rule] = [
    _rule(
        r"^I(?:'m| am)? (?:currently |still )?(?:live|living) in (?P<o>.+)",
        lambda s, m: f"{s} lives in {m['o']}",
        "residence",
        0.9,
    ),
    _rule(
        r"^I(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) to (?P<o>.+)",
        lambda s, m: f"{s} moved to {m['o']}",
        "residence",
        0.85,
    ),
    _rule(r"^I(?:'m| am) (?:originally )?from (?P<o>.+)", lambda s, m: f"{s} is from {m['o']}", "origin", 0.85),
    _rule(
        r"^I(?:'m| am)? (?:currently )?(?:work|working) (?P<p>as|at|for) (?P<o>.+)",
        lambda s, m: f"{s} works {m['p'].lower()} {m['o']}",
        "job",
        0.85,
    ),
    _rule(r"^my name is (?P<o>.+)", lambda s, m: f"{s}'s name is {m['o']}", "name", 0.95),
    _rule(r"^I(?:'m| am) allergic to (?P<o>.+)", lambda s, m: f"{s} is allergic to {m['o']}", None, 0.9),
    _rule(
        r"^I(?:'m| am) (?:a |an )?(?P<o>vegetarian|vegan|pescatarian)\b",
        lambda s, m: f"{s} is a {m['o'].lower()}",
        "diet",
        0.9,
    ),
    _rule(
        r"^I(?:'m| am) (?P<o>married|engaged|divorced|single)\b(?P<r>.*)",
        lambda s, m: f"{s} is {m['o'].lower()}{m['r']}",
        "partner",
        0.85,
    ),
    _rule(
        rf"^my (?P<k>{_RELATIONSHIP})(?:'s name)? is (?P<o>[A-Z][\w-]+(?: [A-Z][\w-]+)?)$",
        lambda s, m: f"{s}'s {m['k'].lower()} is {m['o']}",
        "partner",
        0.85,
    ),
    _Rule(
        re.compile(rf"^my (?P<k>{_PETS})(?:'s name is| is (?:named|called)) (?P<o>[A-Z][\w-]+)$", re.I),
        lambda s, m: f"{s}'s {m['k'].lower()} is named {m['o']}",
        lambda m: "pet_name:" + m["k"].lower(),
        0.85,
    ),
    _Rule(
        re.compile(r"^my (?:all-time )?favou?rite (?P<k>[a-z]+(?: [a-z]+)?) (?:is|are) (?P<o>.+)", re.I),
        lambda s, m: f"{s}'s favourite {m['k'].lower()} is {m['o']}",
        lambda m: "favourite:" + m["k"].lower(),
        0.85,
    ),
    _rule(
        rf"^I (?:have|own|'ve got|have got) (?P<o>(?:a|an|one|two|three|four|five|\d+) (?:[\w-]+ ){{0,2}}"
        rf"(?:{_PETS}s?|{_KIN})\b.*)",
        lambda s, m: f"{s} has {m['o']}",
        None,
        0.8,
    ),
    _rule(
        r"^I(?:'ve| have) been (?P<o>\w+ing\b.*\bfor (?:over |about |almost |nearly )?(?:a|\w+) "
        r"(?:years?|decades?))",
        lambda s, m: f"{s} has been {m['o']}",
        None,
        0.75,
    ),
    _rule(
        r"^my (?P<k>goal|passion|hobby|career|art|work) (?:is|has always been) (?P<o>.+)",
        lambda s, m: f"{s}'s {m['k'].lower()} is {m['o']}",
        None,
        0.7,
    ),
    _rule(
        r"^I(?:'m| am) (?:really |so |very |super )?"
        r"(?P<p>passionate about|interested in|keen on|a (?:big |huge )?fan of) (?P<o>.+)",
        lambda s, m: f"{s} is {m['p'].lower()} {m['o']}",
        None,
        0.65,
    ),
    _rule(
        r"^I(?:'m| am) (?:still |currently |now |also )?(?P<o>(?:learning|studying|training|volunteering|mentoring|"
        r"working on|looking into|taking|practicing|practising|teaching)\b.+)",
        lambda s, m: f"{s} is {m['o']}",
        None,
        0.6,
    ),
    _rule(
        r"^I(?:'ve| have) been (?P<o>(?!busy|so|really|thinking|feeling|wondering|meaning)\w+ing\b.+)",
        lambda s, m: f"{s} has been {m['o']}",
        None,
        0.6,
    ),
    _rule(
        r"^I (?:really |absolutely |just )?(?P<v>love|like|enjoy|adore|hate) (?!(?:that|it|this|those|these|them|"
        r"the way|how|what|when|where|seeing|hearing|to see|to hear|talking|chatting)\b)(?P<o>.+)",
        lambda s, m: f"{s} {_LIKES[m['v'].lower()]} {m['o']}",
        None,
        0.6,
    ),
]

_SKIP = re.compile(
    r"\?|\b(?:not|never|no|nobody|nothing|no longer|n't|if|would|could|might|maybe|perhaps|wish|hope|hoping|"
    r"someday|one day|plan|plans|planning|want|wanna|gonna|going to|will|should|imagine|dream|"
    r"today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening|week|weekend)|right now|last night|"
    r"just now|at the moment)\b|n't\b",
    re.I,
)
_FILLER = re.compile(
    r"^(?:yeah|yes|yep|oh|ah|wow|well|so|and|but|also|actually|honestly|btw|by the way|haha|lol|hey|hi|um|"
    r"anyway|plus|thanks|thank you|totally|true|right|definitely|absolutely|exactly)\b[,!.]?\s*",
    re.I,
)
_CLAUSE_BREAK = re.compile(r"\s*(?:[,;:!]|\s[-–—]\s|\s(?:and|but|so|because|since|which|though|although)\s)\s*")
_FIRST_OR_SECOND_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|we|us|our|ours|you|your|yours|y'all)\b", re.I)
_MAX_OBJECT_WORDS = 12
# Objects this vague say nothing lasting ("I love all of it", "I've been learning a ton", "... stuff").
_VAGUE = re.compile(
    r"\b(?:stuff|things?|a ton|a lot|lots|busy|all|everything|something|ambitions|recently|lately)\b", re.I
)


def _clauses(sentence: str) -> list[str]:
    """Each clause of ``sentence`` with leading fillers ("Yeah, ...", "Oh and ...") removed."""
    clauses = []
    for part in _CLAUSE_BREAK.split(sentence.strip().rstrip(".!")):
        while (stripped := _FILLER.sub("", part, count=1)) != part:
            part = stripped
        if part:
            clauses.append(part)
    return clauses


def _statement(subject: str, sentence: str) -> tuple[str, str | None, float] | None:
    """The third-person statement, slot and confidence of the first clause a rule matches, or ``None``."""
    if _SKIP.search(sentence):
        return None
    for clause in _clauses(sentence):
        for rule in _RULES:
            if not (match := rule.pattern.match(clause)):
                continue
            obj = match.groupdict().get("o") or ""
            if len(obj.split()) > _MAX_OBJECT_WORDS or _VAGUE.search(obj):
                return None
            text = rule.rewrite(subject, match)
            text = re.sub(r"\bmy\b", "their", text, flags=re.I)
            text = re.sub(r"\bmyself\b", "themselves", text, flags=re.I)
            if _FIRST_OR_SECOND_PERSON.search(text.removeprefix(subject)):
                return None
            return text.rstrip(" .") + ".", rule.slot(match), rule.confidence
    return None


def extract_facts_heuristic(
    *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]] = ()
) -> list[Fact]:
    """Durable facts the user states about themselves, rewritten in the third person.

    Args:
        messages: the user's own turns, ``(id, "Speaker: text")`` in order; a turn without a speaker,
            or whose speaker is the role ``user``, is attributed to "The user".
        known_facts: unused; superseding works by slot (``Fact.slot``).

    Returns:
        One ``Fact`` per matching clause (at most one per sentence), with its message id, slot and
        confidence; ``replaces_id`` is never set.
    """
    facts: list[Fact] = []
    for message_id, line in messages:
        speaker, _, text = line.partition(": ") if ": " in line else ("", "", line)
        subject = speaker.strip() if speaker.strip() and speaker.strip().lower() != "user" else "The user"
        for sentence in split_sentences(text):
            if found := _statement(subject, sentence):
                statement, slot, confidence = found
                facts.append(Fact(text=statement, message_ids=[message_id], slot=slot, confidence=confidence))
    return facts
