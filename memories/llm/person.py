"""Grammatical person: a user's statement about themselves in the third person, and back.

Facts are stored in the third person ("Mei works at Rakuten now."), the way a bot reads them about
its user; people ask about themselves in the first person ("Where do I work these days?"). An
embedding model compares a first-person question with a first-person statement far better than
with the same statement about "the user" (all-MiniLM-L6-v2: 0.36 against 0.12 for that pair), so a
fact about its owner is embedded in the first person (``first_person``), and the offline extractor
writes what the user says in the third person (``third_person``).

English verb agreement only: the present tense's third-person "-s" (works / work, studies /
study, watches / watch), the irregular be / have / do, and the possessive and object pronouns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["first_person", "third_person", "third_person_pronouns"]

# Words that may stand between a subject and its verb ("The user also works ...").
_ADVERBS = (
    r"(?:(?:also|now|still|currently|recently|just|already|usually|often|always|never|sometimes|finally|"
    r"no longer|mostly|really|actually|even|only|then|[a-z]+ly(?<!fly)(?<!ply)(?<!rely))\s+)*"
)
_TO_FIRST = {"is": "am", "has": "have", "does": "do", "was": "was", "isn't": "am not", "hasn't": "haven't",
             "doesn't": "don't", "wasn't": "wasn't"}  # fmt: skip
_TO_THIRD = {"am": "is", "'m": "is", "have": "has", "'ve": "has", "do": "does", "don't": "doesn't",
             "haven't": "hasn't", "'d": "would", "'ll": "will", "can't": "can't", "won't": "won't"}  # fmt: skip
# Forms the same in every person: modals, and the simple past of irregular verbs.
_SAME_IN_EVERY_PERSON = frozenset(
    """can could will would shall should must might may did was had were went got grew met left took made found
    began became bought brought came drove fell felt flew gave heard kept knew lost ran said sat saw sold sent
    spent stood taught thought told understood won wrote broke chose ate drank swam sang slept built caught
    fought forgot held hurt lent meant paid rode rose shook spoke struck threw wore woke quit used""".split()
)
# Verbs in the present that end like a past tense.
_PRESENT_IN_ED = frozenset("feed need bleed breed speed succeed proceed exceed seed heed weed shed wed embed".split())
_PRONOUNS_TO_FIRST = {"their": "my", "theirs": "mine", "themselves": "myself", "themself": "myself", "them": "me"}
_PRONOUNS_TO_THIRD = {
    "my": "their",
    "mine": "theirs",
    "myself": "themselves",
    "me": "them",
    "our": "their",
    "ours": "theirs",
    "us": "them",
    "ourselves": "themselves",
}
_NOT_VERBS = frozenset("a an the to of in on at for with and or but as".split())


def _base_form(verb: str) -> str:
    """The base form of a third-person present verb: ``works`` -> ``work``, ``studies`` -> ``study``."""
    lower = verb.lower()
    if lower in _TO_FIRST:
        return _TO_FIRST[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return verb[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|z|o)es$", lower):
        return verb[:-2]
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 2:
        return verb[:-1]
    return verb


def _third_form(verb: str) -> str:
    """The third-person present of a base verb: ``work`` -> ``works``, ``study`` -> ``studies``."""
    lower = verb.lower()
    if lower in _TO_THIRD:
        return _TO_THIRD[lower]
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    return verb + "s"


def _swap_pronouns(text: str, table: dict[str, str]) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        new = table[word.lower()]
        return new.capitalize() if word[0].isupper() else new

    return re.sub(r"\b(?:" + "|".join(table) + r")\b", swap, text, flags=re.IGNORECASE)


def third_person_pronouns(text: str) -> str:
    """``text`` with the first-person possessive and object pronouns in the third person ("my" -> "their",
    "me" -> "them"); subjects and verbs unchanged."""
    return _swap_pronouns(text, _PRONOUNS_TO_THIRD)


def first_person(statement: str, *, subjects: Iterable[str]) -> str:
    """``statement`` as its subject would say it, when it opens with one of ``subjects`` (names of the
    user, or "The user"); else unchanged.

    ``first_person("Mei works at Rakuten now.", subjects=["Mei"])`` -> ``"I work at Rakuten now."``;
    ``"The user's sister lives in Osaka."`` -> ``"My sister lives in Osaka."``.
    """
    names = sorted({s.strip() for s in subjects if s and s.strip()}, key=len, reverse=True)
    if not names:
        return statement
    alternatives = "|".join(re.escape(n) for n in names)
    match = re.match(rf"^(?:{alternatives})(?P<possessive>'s?|\u2019s?)?\b\s*", statement, flags=re.IGNORECASE)
    if match is None:
        return statement
    rest = _swap_pronouns(statement[match.end() :], _PRONOUNS_TO_FIRST)
    if match["possessive"]:
        return f"My {rest}"
    verb = re.match(rf"^(?P<adverbs>{_ADVERBS})(?P<verb>[A-Za-z']+)", rest, flags=re.IGNORECASE)
    if verb is None or verb["verb"].lower() in _NOT_VERBS:
        return f"I {rest}"
    return f"I {verb['adverbs']}{_base_form(verb['verb'])}{rest[verb.end() :]}"


def third_person(clause: str, *, subject: str) -> str:
    """A first-person ``clause`` ("I work at Rakuten now", "My sister lives in Osaka") about ``subject``
    ("The user", or their name) in the third person; a clause not opening with "I" or "my" keeps its
    subject and only its pronouns change."""
    clause = clause.strip()
    if match := re.match(r"^my\b\s*", clause, flags=re.IGNORECASE):
        return f"{subject}'s {_swap_pronouns(clause[match.end() :], _PRONOUNS_TO_THIRD)}"
    match = re.match(r"^I(?P<contraction>'m|'ve|'d|'ll)?\b\s*", clause)
    if match is None:
        return _swap_pronouns(clause, _PRONOUNS_TO_THIRD)
    rest = _swap_pronouns(clause[match.end() :], _PRONOUNS_TO_THIRD)
    if match["contraction"]:
        return f"{subject} {_third_form(match['contraction'])} {rest}"
    verb = re.match(rf"^(?P<adverbs>{_ADVERBS})(?P<verb>[A-Za-z']+)", rest, flags=re.IGNORECASE)
    if verb is None:
        return f"{subject} {rest}"
    word = verb["verb"]
    # Only the present changes with the person ("moved", "went", "can", "being" do not; "need" does).
    past = word.lower().endswith(("ed", "ing")) and word.lower() not in _PRESENT_IN_ED
    if past or word.lower() in _SAME_IN_EVERY_PERSON:
        return f"{subject} {rest}"
    return f"{subject} {verb['adverbs']}{_third_form(word)}{rest[verb.end() :]}"
