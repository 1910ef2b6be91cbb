"""The little syntax the reader's classifiers cannot do: where a clause starts, who it is about, and
how it reads in the third person.

A user's turn is cut into sentences (pySBD) and each sentence into clauses where a new first-person
subject starts ("I quit the hospital and I work at Rakuten now"). A clause is about:

- the speaker (``self``): it opens with "I", "we", "my"/"our" + a thing, leaves its subject out
  ("Got laid off last week"), or says "X and I"; or it speaks of the speaker anywhere ("Peanuts make
  me break out in hives") and names nobody else as its subject;
- a relative (``relative``): it opens with "my"/"our" + a kin word, with the relative's name when
  given ("my sister Priya"), or with "he"/"she" when the turn named a relative of that gender
  before ("my husband Idris ... He's a paramedic");
- someone else (``other``): another person ("my friend Tom", "Sara", "he" with no relative before).

The vocabulary of kin, pets and people is written once, here (``KIN``, ``PETS``, ``PEOPLE``); the
entity finder (``memories.llm.entities``) and the search topics use it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.llm.person import third_person, third_person_pronouns
from memories.llm.text import split_sentences

__all__ = [
    "KIN",
    "PARTNER_KIN",
    "PEOPLE",
    "PETS",
    "Subject",
    "clauses",
    "named_relatives",
    "names_in",
    "normalised",
    "sentences",
    "shortened",
    "statement",
    "subject_of",
]

# Kin words and the pronoun that may stand for them ("" for either).
KIN: dict[str, str] = {
    **dict.fromkeys("husband boyfriend fiance brother son dad daddy papa father appa abbu baba grandpa grandfather "
                    "grandson uncle nephew stepson stepdad stepfather".split(), "he"),
    **dict.fromkeys("wife girlfriend fiancee sister daughter mom mum mommy mummy mama mother amma ammi grandma "
                    "grandmother granny nan granddaughter aunt niece stepdaughter stepmom stepmum "
                    "stepmother".split(), "she"),
    **dict.fromkeys("partner spouse cousin twin sibling siblings parents grandparents kids children baby grandkids "
                    "grandchildren in-laws stepkids".split(), ""),
}  # fmt: skip
# The kin words of a partner: their facts are the speaker's ``partner`` slot.
PARTNER_KIN = frozenset("husband wife boyfriend girlfriend fiance fiancee partner spouse".split())
PETS = frozenset(
    "dog puppy pup cat kitten kitty guinea pig hamster rabbit bunny parrot budgie bird fish goldfish turtle tortoise "
    "horse pony snake lizard gecko ferret chinchilla hedgehog rat mouse pig goat beagle labrador lab poodle terrier "
    "retriever collie spaniel husky pug dachshund corgi tabby".split()
)
# People who are not kin: a clause about them is someone else's news.
PEOPLE = frozenset(
    "friend buddy pal mate bestie colleague coworker co-worker boss manager neighbour neighbor roommate flatmate "
    "housemate classmate teacher coach therapist doctor landlord ex teammate mentor student client customer".split()
)

_KIN_WORDS = "|".join(sorted((re.escape(k) for k in [*KIN, "fiancé", "fiancée", "best friend"]), key=len, reverse=True))
_KIN_MODIFIERS = r"(?:(?:little|big|older|younger|baby|twin|new|lovely|dear|late|eldest|oldest|youngest|middle) )?"
_NAME = r"(?-i:[A-Z][\w'\u00c0-\u017f-]*(?: (?:[A-Z][\w'\u00c0-\u017f-]*))?)"
# "my husband Idris", "our daughter, Mia", "my mum's", and where it ends.
_RELATIVE = re.compile(
    rf"^(?:(?P<my>my|our) {_KIN_MODIFIERS})?(?P<kin>{_KIN_WORDS})\b(?:,? (?P<name>{_NAME})(?=[ ,'.!]|$))?"
    rf"(?:'s? (?P<owned>[\w-]+))?",
    re.IGNORECASE,
)
# Kin a speaker names without "my" ("Dad retired", "mum got a puppy").
_BARE_KIN = frozenset("dad mum mom mam mama papa amma appa grandma grandpa nan nana granny".split())
# After "my sister's", a verb or a word of a clause ("my son's got", "my wife's not"), not something of hers.
_IS_OR_HAS = frozenset("got been a an the not now still just so really very back in at on home off going gone".split())
_PEOPLE_WORDS = "|".join(sorted((re.escape(p) for p in PEOPLE), key=len, reverse=True))
_OTHER = re.compile(rf"^(?:my|our|a|the|his|her|their) (?:[\w-]+ )?(?:{_PEOPLE_WORDS})s?\b", re.IGNORECASE)
# A relative named anywhere in a clause: "..., my partner Jules is asleep", "(my wife, Mei-Ling)".
_NAMED_RELATIVE = re.compile(
    rf"\b(?:my|our) {_KIN_MODIFIERS}(?P<kin>{_KIN_WORDS}),? (?P<name>{_NAME})(?=[ ,'.!?)]|$)", re.I
)
# Where a clause may be cut short of a tail ("I live in Austin, if that helps"): a comma or a conjunction.
_TAIL = re.compile(r",\s|\s[-\u2013\u2014]+\s|\s(?:so|but|because|cause|and|which|if|though)\s", re.IGNORECASE)
_MAX_TAILS = 3
_PRONOUN = re.compile(r"^(?P<pronoun>he|she)(?=\b)", re.IGNORECASE)
_THEY = re.compile(r"^(?:they|he|she|it|you|someone|somebody|everyone|people)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|us|our|ours)\b", re.IGNORECASE)
_SELF_START = re.compile(r"^(?:I|I'm|I've|I'd|I'll|Im|Ive|me|my|mine|myself|we|we're|we've|us|our)\b", re.IGNORECASE)
_WITH_ME = re.compile(rf"^(?P<other>{_NAME}|my \w+(?: {_NAME})?) and (?:I|me)\b", re.IGNORECASE)
# Words that may open a clause before its subject: fillers, interjections, adverbials.
_OPENER = re.compile(
    r"^(?:(?:oh|ah|um|uh|so|and|but|well|also|actually|honestly|anyway|anyways|btw|by the way|haha+|lol|ok|okay|yeah|"
    r"yes|yep|hey|hi|hello|guess what|fun fact|big news|quick update|update|news|fyi|plus|then|now|nowadays|"
    r"these days|lately|currently|since then|finally|luckily|sadly|unfortunately|fortunately|basically|ugh|wow|omg|"
    r"[\w-]+-wise|as of \w+|since \w+|for the record|just so you know)\b[,!.:]*\s+)+",
    re.IGNORECASE,
)
# A few words before a comma that lead into a first-person clause: whom the speaker addresses ("Maria, I've
# been busy") or how they frame it ("Sometimes, but I am allergic to peanuts").
_LEAD_IN = re.compile(
    r"^(?:[\w'-]+\s+){0,2}[\w'-]+,\s+(?:(?:but|and|so|yet|though)\s+)?(?=(?:I|I'm|I've|I'd|my|we|we're|our)\b)",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(
    r"\s*(?:;|\s[-\u2013\u2014]+\s|:\s|\.{2,}|\u2026)\s*"
    r"|(?:,\s*(?:(?:and|but|so|because|cause|since|though|although|plus|while|yet|then|now|also)\s+)*"
    r"|\s+(?:(?:and|but|so|because|cause|since|though|although|plus|while|yet|then|also)\s+)+)"
    r"(?=(?:I|I'm|I've|I'd|my|we|we're|our)\b)",
    re.IGNORECASE,
)
# A verb in the past or a participle: a clause that opens with one left out its subject ("Got the offer").
_VERB_FIRST = re.compile(
    r"^(?:just |finally |recently |officially )?(?:[a-z]+ed|[a-z]+ing|got|went|left|quit|took|made|met|began|became|"
    r"bought|sold|found|had|lost|moved|broke|split|joined|switched|started|landed|turned|gave|came|ran|won|"
    r"spent|put)\b",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    """I I'm I've I'd I'll The A An And But So Or My Our He She It We They You What Who How Why When Where Which That
    This Yes No Oh Ok Okay Thanks Hi Hello Hey Sorry Please Lol Haha Just Also Still Now Then Today Tomorrow Yesterday
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
    September October November December Mom Mum Dad Grandma Grandpa Nan Granny Christmas Easter""".split()
)
# A piece this short before a clause break belongs to the clause after it ("Tom and I ...").
_LEAD_WORDS = 3
_WORD = re.compile(r"(?-i:[A-Z][\w'\u00c0-\u017f-]*)")


@dataclass(frozen=True)
class Subject:
    """Who a clause is about: ``kind`` is ``self``, ``relative`` or ``other``; for a relative, the
    ``kin`` word (lower case) and the ``name`` when said ("Priya"); ``start``: where the clause's
    subject opens (what comes before it, "Oh btw, ", is left out of a fact)."""

    kind: str
    kin: str | None = None
    name: str | None = None
    start: int = 0


def normalised(text: str) -> str:
    """``text`` with straight apostrophes and quotes and single spaces."""
    text = re.sub(r"[\u2018\u2019\u02bc]", "'", text)
    text = re.sub(r"[\u201c\u201d]", '"', text)
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, normalised."""
    return [normalised(s) for s in split_sentences(text)]


def clauses(sentence: str) -> list[str]:
    """The clauses of one ``sentence``: cut where a new first-person subject starts after a conjunction
    or comma, or at a semicolon, dash, colon or ellipsis; end punctuation other than "?" dropped."""
    sentence = sentence.strip().rstrip(".!")
    cuts = [0, *(i for m in _CLAUSE_BREAK.finditer(sentence) for i in m.span()), len(sentence)]
    spans = [
        (cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2) if re.search(r"\w", sentence[cuts[i] : cuts[i + 1]])
    ]
    found: list[str] = []
    start = None
    for piece_start, piece_end in spans:
        start = piece_start if start is None else start
        if len(sentence[piece_start:piece_end].split()) > _LEAD_WORDS or (piece_start, piece_end) == spans[-1]:
            # A piece this short joins the clause after it ("Tom and I ...", "Career-wise, I'm ...").
            found.append(sentence[start:piece_end].strip())
            start = None
    return found


def _kin(word: str) -> str:
    word = word.lower()
    return {"fiancé": "fiance", "fiancée": "fiancee"}.get(word, word)


def subject_of(clause: str, *, relative: Subject | None = None) -> Subject:
    """Who ``clause`` is about (see the module docstring); ``relative``: the relative the turn named last,
    whom "he" or "she" stands for when their kin word fits. Only what syntax can tell is told here: a clause
    about someone the syntax cannot place is the speaker's, and the stance classifier judges it."""
    opener = _OPENER.match(clause) or _LEAD_IN.match(clause)
    start = opener.end() if opener else 0
    rest = clause[start:]
    if (match := _RELATIVE.match(rest)) and (match["my"] or match["kin"].lower() in _BARE_KIN):
        owned = (match["owned"] or "").lower()
        if owned in PEOPLE:  # "my son's coach": someone else
            return Subject("other", start=start)
        return Subject("relative", kin=_kin(match["kin"]), name=match["name"], start=start)
    if _WITH_ME.match(rest):
        return Subject("self", start=start)
    if _OTHER.match(rest):
        return Subject("other", start=start)
    if match := _PRONOUN.match(rest):
        gender = KIN.get(relative.kin or "", "") if relative else None
        if relative is not None and gender in ("", match["pronoun"].lower()):
            return Subject("relative", kin=relative.kin, name=relative.name, start=start)
        return Subject("other", start=start)
    if _THEY.match(rest) and not _FIRST_PERSON.search(rest):
        return Subject("other", start=start)
    return Subject("self", start=start)


def named_relatives(clause: str) -> list[tuple[str, str]]:
    """``(kin, name)`` of each relative ``clause`` names with their name ("my partner Jules": ``("partner",
    "Jules")``)."""
    return [(_kin(m["kin"]), m["name"]) for m in _NAMED_RELATIVE.finditer(clause) if m["name"] not in _NOT_NAMES]


def shortened(clause: str) -> list[str]:
    """``clause`` cut before each of its first ``_MAX_TAILS`` commas or conjunctions, where at least three
    words come before: what it may say before a tail ("I live in Austin" of "I live in Austin, if that helps")."""
    cuts = [m.start() for m in _TAIL.finditer(clause) if len(clause[: m.start()].split()) >= 3]
    return [clause[:cut].rstrip(" ,") for cut in cuts[:_MAX_TAILS]]


def names_in(text: str) -> list[str]:
    """Capitalised words that are not a sentence's first word nor a common capitalised word: names."""
    found = []
    for match in _WORD.finditer(text):
        word = re.sub(r"'s?$", "", match[0])
        before = text[: match.start()].rstrip()
        if word in _NOT_NAMES or not before or before[-1] in ".!?":
            continue
        found.append(word)
    return found


def statement(clause: str, *, subject: Subject, speaker: str) -> str:
    """``clause`` as a third-person statement about ``speaker`` ("The user" or their name): "Oh btw, I'm
    thirty-four" -> "The user is thirty-four."; "my sister Priya got a job" -> "The user's sister Priya got
    a job."; "we adopted a cat" -> "The user and others adopted a cat."; a clause without its subject gets
    one ("Got laid off" -> "The user got laid off."); one whose subject is not the speaker's is quoted
    ("The user said: ...")."""
    text = clause[subject.start :].strip().rstrip(" ,;:.!")
    if subject.kind == "relative" and not re.match(r"^(?:my|our|he|she)\b", text, re.IGNORECASE):
        text = f"my {text[:1].lower()}{text[1:]}"  # "Dad retired" -> "my dad retired"
    if subject.kind == "relative" and (pronoun := _PRONOUN.match(text)):
        verb = re.match(r"'s(?P<been> been)?", text[pronoun.end() :])
        rest = text[pronoun.end() + (verb.end() if verb else 0) :]
        be = (" has been" if verb["been"] else " is") if verb else ""
        text = f"my {subject.kin}" + (f" {subject.name}" if subject.name else "") + be + rest
    if match := re.match(r"^(?P<we>we|we're|we've|we'd|we'll)\b", text, re.IGNORECASE):
        verb = {"we're": " are", "we've": " have", "we'd": " would", "we'll": " will"}.get(match["we"].lower(), "")
        said = f"{speaker} and others{verb}{third_person_pronouns(text[match.end() :])}"
    elif match := _WITH_ME.match(text):
        said = f"{speaker} and {third_person_pronouns(match['other'])}{third_person_pronouns(text[match.end() :])}"
    else:
        text = re.sub(r"^our\b", "my", text, flags=re.IGNORECASE)
        if not _SELF_START.match(text) and subject.kind == "self":
            if not _VERB_FIRST.match(text):
                return _capitalised(_speaker_named(text, speaker=speaker))
            ing = text.split(" ", 1)[0].lower().endswith("ing")
            text = ("I am " if ing else "I ") + text[0].lower() + text[1:]
        said = third_person(text, subject=speaker)
    said = re.sub(r"\b(?:I'm|I am)\b", "they are", said)
    return _capitalised(re.sub(r"\bI\b", "they", said))


def _speaker_named(text: str, *, speaker: str) -> str:
    """A clause about the speaker whose subject is something else ("Peanuts make me break out in hives",
    "these days I earn my living ..."): the speaker's first pronoun becomes their name (a subject "I" with its
    verb agreeing), the others third-person pronouns."""
    match = re.search(r"\b(?P<word>I'm|I|me|my|mine|myself|us|our|ours)\b", text, re.IGNORECASE)
    if match is None:
        return f"{speaker} said: \u201c{text}.\u201d"
    name = speaker if match.start() == 0 or speaker != "The user" else "the user"
    word = match["word"].lower()
    if word in ("i", "i'm"):
        said = third_person(text[match.start() :], subject=name)
        return text[: match.start()] + re.sub(r"\bI\b", "they", said)
    named = {"my": f"{name}'s", "our": f"{name}'s", "mine": f"{name}'s", "ours": f"{name}'s"}
    rest = re.sub(r"\bI\b", "they", third_person_pronouns(text[match.end() :]))
    return text[: match.start()] + named.get(word, name) + rest


def _capitalised(said: str) -> str:
    said = said.strip()
    if said.endswith("\u201d"):
        return said[:1].upper() + said[1:]
    said = said.rstrip(" .!,;:")
    return said[:1].upper() + said[1:] + "."
