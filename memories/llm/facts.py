"""The offline heuristic that raises durable facts about the user from their own turns (no LLM).

Each sentence of a user's turn is cut into clauses at the points where a new subject starts ("I'm
allergic to shellfish, so no shrimp for me", "I quit the hospital and I work at Rakuten now"), and
each clause is matched against rules of what people say about themselves that lasts
(``memories.llm.fact_rules``: where they live and come from, work and studies, name, age,
birthday, partner, family and where they live, pets, diet, allergies and health, likes and
dislikes, favourites, pastimes, dated plans, and the end of a value: "I quit", "we broke up").
A matched clause becomes a third-person statement with the speaker's name ("I live in Osaka now"
-> "Caroline lives in Osaka now."), or "The user" when the turn names no speaker.

Skipped: a question; a sentence that is conditional or a wish ("if I ever moved to Canada...",
"I'd love to live by the sea"); a clause whose own words, up to the end of what the rule took,
negate it ("I'm not into football"; only rules about a "not", such as "I don't eat pork", take
those), speak of what may happen ("I might move", "I want to"; only rules about dated plans take
the future), of the past as past ("I used to live in Lyon", "back when..."), or of a passing
moment ("today", "right now") for facts without a slot; an object that is vague ("stuff", "a
lot") or long; and a statement that still speaks of "you" or "we" once rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memories.llm.base import Fact
from memories.llm.fact_mentions import ANYWHERE
from memories.llm.fact_patterns import Rule
from memories.llm.fact_rules import RULES
from memories.llm.person import third_person
from memories.llm.text import split_sentences

__all__ = ["extract_facts_heuristic"]

_CONTRACTIONS = {
    "i'm": "I am", "im": "I am", "i've": "I have", "ive": "I have", "i'd": "I would", "i'll": "I will",
    "we're": "we are", "we've": "we have", "we'd": "we would", "don't": "do not", "dont": "do not",
    "doesn't": "does not", "didn't": "did not", "can't": "cannot", "cant": "cannot", "won't": "will not",
    "isn't": "is not", "aren't": "are not", "wasn't": "was not", "haven't": "have not", "hasn't": "has not",
    "wouldn't": "would not", "couldn't": "could not", "shouldn't": "should not", "i": "I",
}  # fmt: skip
_CONTRACTION = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in _CONTRACTIONS) + r")(?![\w'])", re.I)
# Where a clause starts inside a sentence: a break, or a comma or conjunction before a new first-person subject.
_CLAUSE_BREAK = re.compile(
    r"\s*(?:;|\s[-\u2013\u2014]+\s|:\s|\.{2,}|\u2026)\s*"
    r"|(?:,\s*(?:(?:and|but|so|because|cause|since|though|although|plus|while|yet|then|now|also)\s+)*"
    r"|\s+(?:(?:and|but|so|because|cause|since|though|although|plus|while|yet|then|also)\s+)+)"
    r"(?=(?:I|my|we|our)\b)",
    re.I,
)
# A clause that opens with what the speaker did leaves out "I" ("Broke up with Tom last month").
_SUBJECTLESS = re.compile(
    r"^(?:just )?(?:broke up|split up|moved|started|quit|left|got|joined|switched|adopted|finished|went back|landed|"
    r"married|retired|graduated|handed in|booked|bought|rescued|signed up)\b",
    re.I,
)
# A relative the speaker names ("my husband Paweł"), and a sentence about them by pronoun ("He is a
# firefighter"): the pronoun is read as the relative last named in the same turn when it fits them.
_MALE_KIN = (
    "husband|boyfriend|fianc[eé]|brother|son|dad|father|grandpa|grandfather|grandson|uncle|nephew|stepson|stepdad"
)
_FEMALE_KIN = (
    "wife|girlfriend|fianc[eé]e|sister|daughter|mom|mum|mother|grandma|grandmother|granddaughter|aunt|niece|"
    "stepdaughter|stepmom"
)
_RELATIVE_NAMED = re.compile(
    rf"\bmy (?:(?P<male>{_MALE_KIN})|(?P<female>{_FEMALE_KIN})|partner|cousin|twin|best friend)\b"
    r"(?: (?-i:[A-Z][\w-]*)(?=[ ']))?"
    # "my son's coach", not "my wife's got a job" nor "my sister's moving"
    r"(?P<possessive>'s(?= )(?! (?:got|been|a|an|the|not|now|still|just|so|really|very|back|in|at|on|home|off|"
    r"[a-z]+ing)\b)|'(?= ))?",
    re.I,
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:(?P<he>he)|(?P<she>she))(?:'s(?! been)(?P<is>)|(?= (?:is|works|has been|just started)\b))", re.I
)
_GREETING_NAME = re.compile(
    r"^(?:hi|hello|hey)(?: there| all| everyone)?[,!.]*\s*(?:I am|this is) (?P<name>(?-i:[A-Z][a-z'-]+))(?:[,!.]|$)",
    re.I,
)
_FILLER = re.compile(
    r"^(?:yeah|yes|yep|yup|oh|ah|wow|well|so|and|but|also|actually|honestly|btw|by the way|haha|lol|hey|hi|hello|"
    r"um|uh|anyway|anyways|plus|ok|okay|thanks|thank you|totally|true|right|definitely|absolutely|exactly|sure|"
    r"fun fact|guess what|big news|news|update|quick update|fyi|just so you know|for the record|as you know|"
    r"funny enough|luckily|sadly|unfortunately|fortunately|finally|basically|then|now|these days|lately|"
    r"nowadays|at the moment|currently|since then|good news)\b[,!.:]?\s*",
    re.I,
)
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|whether|would|wish|hope|hoping|imagine|imagining|suppose|someday|one day|dream|dreaming|"
    r"wonder|wondering|were I|supposing|in case)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|never|no|nobody|nothing|no longer|n't|neither|nor|without|hardly)\b|n't\b", re.I)
_MAY_HAPPEN = re.compile(
    r"\b(?:might|may|maybe|perhaps|could|should|will|shall|want|wanna|gonna|going to|plan|plans|planning|"
    r"thinking about|thinking of|considering|hope|try to|trying to|need to|have to|gotta|'ll)\b",
    re.I,
)
_PAST = re.compile(
    r"\b(?:used to|back when|back in the day|when I was|as a (?:kid|child|teen)|in the past|once)\b", re.I
)
_PASSING = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening|week|weekend)|right now|last night|"
    r"just now|at the moment|for now)\b",
    re.I,
)
# When it happened, relative to when it was said: true then, misleading later ("drives a Honda yesterday").
_WHEN_SAID = re.compile(
    r"\s+(?:yesterday|today|tonight|this (?:morning|week|month|year)|last (?:night|week|weekend|month|year|spring|"
    r"summer|autumn|fall|winter)|(?:a|one|two|three|four|five|six|a few|\d+) (?:days?|weeks?|months?|years?) ago|"
    r"recently|lately|the other day)\b(?=[ ,.]*$)",
    re.I,
)
_OTHER_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|we|us|our|ours|you|your|yours|y'all|myself)\b", re.I)
_MAX_OBJECT_WORDS = 12
# Objects this vague say nothing lasting ("I love all of it", "I've been learning a ton", "... stuff").
_VAGUE = re.compile(
    r"\b(?:stuff|things?|a ton|a lot|lots|all|everything|something|anything|it all|that|this|those|these|them|"
    r"recently|lately|ambitions|whatever|etc)\b",
    re.I,
)


def _normalised(text: str) -> str:
    """``text`` with straight apostrophes, contractions spelled out ("I'm" -> "I am") and single spaces."""
    text = re.sub(r"[\u2018\u2019\u02bc]", "'", text)
    text = _CONTRACTION.sub(lambda m: _CONTRACTIONS[m[0].lower()], text)
    return " ".join(text.split())


def _clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence`` (normalised), fillers ("Yeah, ...", "Big news:") removed, "I" put back
    where the speaker left it out."""
    clauses = []
    for part in _CLAUSE_BREAK.split(sentence.rstrip(".!")):
        part = part.strip()
        while part and (stripped := _FILLER.sub("", part, count=1)) != part:
            part = stripped
        if part:
            clauses.append(f"I {part[0].lower()}{part[1:]}" if _SUBJECTLESS.match(part) else part)
    return clauses


def _skipped(said: str, *, rule: Rule, slot: str | None) -> bool:
    """Whether what a rule took (``said``) negates, speaks of what may happen, of the past, or of a
    passing moment (for a fact without a slot), as that rule cannot take."""
    return bool(
        (not rule.negated and _NEGATION.search(said))
        or (not rule.dated and _MAY_HAPPEN.search(said))
        or _PAST.search(said)
        or (slot is None and _PASSING.search(said))
    )


def _statements(sentence: str) -> list[tuple[str, str | None, float]]:
    """The first-person statements, slots and confidences the rules make of a normalised ``sentence``:
    for each clause, the first rule that matches its start; and every match of a rule that looks
    anywhere in the sentence ("..., my husband Giorgos only eats the tomatoes")."""
    found = []
    for clause in _clauses(sentence):
        for rule in RULES:
            if match := rule.pattern.match(clause):
                found.append((match, clause[: match.end()], rule))
                break
    found += [(m, m.group(0), rule) for rule in ANYWHERE for m in rule.pattern.finditer(sentence)]
    statements = []
    for match, said, rule in found:
        slot = rule.slot(match)
        obj = (match.groupdict().get("o") or "").strip()
        if _skipped(said, rule=rule, slot=slot) or len(obj.split()) > _MAX_OBJECT_WORDS or _VAGUE.search(obj):
            continue
        statement = _WHEN_SAID.sub("", (rule.statement(match) if rule.statement else said)).strip(" ,.")
        if all(statement != s and (slot is None or slot != other) for s, other, _ in statements):
            statements.append((statement, slot, rule.confidence))
    return statements


def _fits(pronoun: re.Match[str], relative: re.Match[str]) -> bool:
    """Whether "he" or "she" (``pronoun``) can be the ``relative`` named before (a partner or cousin: either)."""
    return not (pronoun["he"] and relative["female"]) and not (pronoun["she"] and relative["male"])


def extract_facts_heuristic(
    *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]] = ()
) -> list[Fact]:
    """Durable facts the user states about themselves, rewritten in the third person.

    Args:
        messages: the user's own turns, ``(id, "Speaker: text")`` in order; a turn without a speaker,
            or whose speaker is the role ``user``, is attributed to "The user".
        known_facts: unused; superseding works by slot (``Fact.slot``).

    Returns:
        One ``Fact`` per matching clause, with its message id, slot and confidence, in the order
        said; ``replaces_id`` is never set.
    """
    facts: list[Fact] = []
    for message_id, line in messages:
        speaker, _, text = line.partition(": ") if ": " in line else ("", "", line)
        subject = speaker.strip() if speaker.strip() and speaker.strip().lower() != "user" else "The user"
        relative = None  # the last relative the turn named ("my husband Paweł"), whom "he" or "she" is next
        for sentence in split_sentences(text):
            sentence = _normalised(sentence)
            if sentence.endswith("?") or _CONDITIONAL.search(sentence):
                continue
            if _SUBJECTLESS.match(sentence):
                sentence = f"I {sentence[0].lower()}{sentence[1:]}"
            if relative and (pronoun := _PRONOUN_SUBJECT.match(sentence)) and _fits(pronoun, relative):
                sentence = f"{relative[0]}{' is' if pronoun['is'] is not None else ''}{sentence[pronoun.end() :]}"
            if named := list(_RELATIVE_NAMED.finditer(sentence)):
                # "My son's coach came by. He's a firefighter.": "he" is the coach, not the son.
                relative = None if named[-1]["possessive"] else named[-1]
            found = [(f"my name is {g['name']}", "name", 0.85)] if (g := _GREETING_NAME.match(sentence)) else []
            found += _statements(sentence)
            for statement, slot, confidence in found:
                text_3p = third_person(statement, subject=subject)
                if _OTHER_PERSON.search(text_3p.removeprefix(subject)):
                    continue
                fact = Fact(text=text_3p + ".", message_ids=[message_id], slot=slot, confidence=confidence)
                if fact not in facts:  # a relative named again where "he" or "she" was read as them
                    facts.append(fact)
    return facts
