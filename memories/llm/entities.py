"""The offline rules that find the people, pets, places and organisations a text names (no LLM).

Conservative: a name is one to three capitalised words in a telling position, never a bare
capitalised word. "my friend Sarah", "my sister, Ana", "a dog named Rex", "works at Google", "a data
analyst at Rakuten", "first week at NetEase", "lives in Osaka", "is from Sweden", and the speaker's own
name ("my name is Mei", "Hi, I'm Mei"). Run over a user's own turns and over the facts raised from
them ("Caroline has a dog named Rex." -> pet Rex).
"""

from __future__ import annotations

import re

from memories.llm.base import EntityMention
from memories.llm.reader.syntax import KIN, PEOPLE, PETS

__all__ = ["find_entities"]

# Case-sensitive inside the otherwise case-insensitive patterns: a name starts with a capital.
_NAME = r"(?P<name>(?-i:[A-Z][\w'-]*(?: (?:[A-Z][\w'-]*|de|van|von|of)){0,2}))"
_PEOPLE = "(?:" + "|".join(sorted(map(re.escape, {*KIN, *PEOPLE, "best friend"}), key=len, reverse=True)) + ")"
_PETS = "(?:" + "|".join(sorted(map(re.escape, {*PETS, "pet"}), key=len, reverse=True)) + ")"
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_PETS}s?,? (?:named|called) {_NAME}", re.I), "pet"),
    (re.compile(rf"\bmy {_PETS}(?:'s name is|,| is (?:named|called))? {_NAME}", re.I), "pet"),
    (re.compile(rf"\b{_PEOPLE}s?,? (?:named|called) {_NAME}", re.I), "person"),
    (re.compile(rf"\bmy (?:\w+ )?{_PEOPLE}(?:'s name is|,| is (?:named|called))? {_NAME}", re.I), "person"),
    (
        re.compile(
            rf"\b(?:works?|working|worked|employed|interns?|interning|studies|study|studying) (?:at|for) {_NAME}", re.I
        ),
        "organisation",
    ),
    (
        re.compile(
            rf"\b(?:job|internship|position|role|offer|interview|shift|week|day|month) (?:at|with) {_NAME}", re.I
        ),
        "organisation",
    ),
    (
        re.compile(
            rf"\b(?:works?|working|worked|employed) as (?:a |an |the )?(?:[\w-]+ ){{1,4}}(?:at|for|with) {_NAME}", re.I
        ),
        "organisation",
    ),
    (
        re.compile(rf"\b(?:joined|started at|left|quit|resigned from|laid off from|hired by|hired at) {_NAME}", re.I),
        "organisation",
    ),
    (re.compile(rf"\b(?:I am|I'm|I am a|I'm a|I am an|I'm an) (?:[\w-]+ ){{1,3}}at {_NAME}", re.I), "organisation"),
    # The speaker's own name.
    (re.compile(rf"\b(?:my name is|call me|name's) {_NAME}", re.I), "person"),
    (re.compile(rf"^(?:hi|hello|hey)[,!.]*\s*(?:I am|I'm|this is) {_NAME}", re.I), "person"),
    (
        re.compile(
            rf"\b(?:lives?|living|lived|moved|moving|relocated|grew up|born|based) (?:in|to) {_NAME}"
            rf"|\b(?:am|is|are|'m|come|comes|originally) from {_NAME.replace('?P<name>', '?P<place>')}",
            re.I,
        ),
        "place",
    ),
]
# Capitalised words that start a sentence or name a time, not an entity.
_NOT_NAMES = frozenset(
    "I The A An My His Her Their Our This That It He She They We You Monday Tuesday Wednesday Thursday Friday "
    "Saturday Sunday January February March April May June July August September October November December "
    "Christmas Easter".split()
)


def find_entities(text: str) -> list[EntityMention]:
    """The entities ``text`` names by the rules above, each once, in order of first appearance.

    A leading ``"Speaker: "`` prefix is ignored (the speaker is the user, not an entity they talk
    about). A name loses trailing words that are not names ("Sarah Lee" stays, "Rex The" -> "Rex").

    Returns:
        ``EntityMention(name, kind)`` with kind ``person``, ``pet``, ``place`` or ``organisation``.
    """
    if ": " in text[:60]:
        text = text.partition(": ")[2]
    found: dict[str, EntityMention] = {}
    for pattern, kind in _RULES:
        for match in pattern.finditer(text):
            raw = match.groupdict().get("name") or match.groupdict().get("place") or ""
            words = raw.split()
            while words and (words[-1] in _NOT_NAMES or words[-1] in {"de", "van", "von", "of"}):
                words.pop()
            if not words or words[0] in _NOT_NAMES:
                continue
            name = re.sub(r"'s?$", "", " ".join(words))
            found.setdefault(name.lower(), EntityMention(name=name, kind=kind))
    return list(found.values())
