"""The offline fact rules said anywhere in a clause, not only at its start (``memories.llm.fact_rules``
has those of a clause's start): people, pets and employers by name, dated plans."""

from __future__ import annotations

import re

from memories.llm.fact_patterns import (
    ADV,
    CAP,
    CAR_BRANDS,
    CONDITIONS,
    DATE,
    DIETS,
    EVENTS,
    MEDICINES,
    NAME,
    NAMED,
    OBJ,
    OCCUPATIONS,
    PARTNERS,
    PET_SLOT,
    PETS,
    PLAN_SLOT,
    RELATIVE,
    STOP,
    Rule,
    plan_statement,
    rule,
)

__all__ = ["ANYWHERE"]


def _pet_named(m: re.Match[str]) -> str:
    return f"I have a {m['pet']} named {m['name']}"


def _lives_now(m: re.Match[str]) -> str:
    return f"I live in {m['name']} now"


def _birthday(m: re.Match[str]) -> str:
    return f"my birthday is {m['o']}"


def _relative_slot(m: re.Match[str]) -> str:
    kin = m["kin"].lower()
    return "partner" if kin in PARTNERS else f"{kin} {m['name'].lower()}:name"


def _relative(m: re.Match[str]) -> str:
    name = re.sub(r"'s?$", "", m["name"])
    return f"my {m['kin'].lower()} is named {name}"


# Said anywhere in a clause, not only at its start: people, pets and employers by name, dated plans.
ANYWHERE: list[Rule] = [
    rule(
        rf"\bmy (?:little |big |older |younger |baby |twin |new |lovely |dear |late )?{RELATIVE},? {NAMED}",
        _relative_slot,
        0.8,
        _relative,
    ),
    rule(rf"\b{NAMED},? \(?my {RELATIVE}\)?", _relative_slot, 0.75, _relative),
    rule(rf"\b(?:my|our) (?:[\w-]+ )?{PETS},? {NAMED}", PET_SLOT, 0.8, _pet_named),
    rule(
        rf"\bour (?P<kin>twins|kids|children|sons|daughters|boys|girls),? (?P<o>{CAP}(?:,? (?:and )?{CAP})+)",
        None,
        0.75,
        lambda m: f"my {m['kin'].lower()} are {m['o']}",
    ),
    rule(
        r"\b(?:first|second|third|last) (?:day|week|month) (?:at|with) "
        r"(?P<name>(?-i:[A-Z][\w&'.-]*(?: [A-Z][\w&'.-]*){0,2}))",
        "job",
        0.7,
        lambda m: f"I work at {m['name']}",
    ),
    rule(
        # "Week two at Buckeye Logistics.", "Two weeks at Allegro now": the speaker's time at a place that
        # goes on is a job; "Week one at Yellowstone was amazing" and "two weeks at Grandma's now" are not.
        r"^(?:(?:so|ok|okay|well|and|also|anyway),? )*(?:(?:day|week|month) (?:one|two|three|four|five|\d)|"
        r"(?:two|three|four|five|six|a few|a couple of|\d+) (?:weeks|months)) at "
        r"(?!(?:Grandma|Grandpa|Granny|Nana|Mum|Mom|Dad)\b)(?P<name>(?-i:[A-Z][\w&'.-]*(?: [A-Z][\w&'.-]*){0,2}))"
        r"(?=\s*(?:[.!]*$|,?\s*(?:now\b(?! that)|done\b|already\b|so far\b|and counting\b)))",
        "job",
        0.7,
        lambda m: f"I work at {m['name']}",
    ),
    rule(
        rf"\bI was (?:a|an) (?:[\w-]+ ){{0,2}}{OCCUPATIONS}(?P<o>(?: (?:for|at|in) [^,;:!?]+?)?){STOP}",
        None,
        0.7,
        lambda m: m.group(0).strip(),
    ),
    rule(
        rf"\bI (?:just )?(?:bought|got|picked up) (?:a |an |my )?(?:new |used |second-hand |secondhand )?(?:\d{{4}} )?"
        rf"(?P<o>{CAR_BRANDS}(?: [\w-]+){{0,2}})",
        "car",
        0.75,
        lambda m: f"I drive a {m['o']}",
    ),
    rule(
        rf"\b(?:(?:my|the|a) (?:[\w-]+ ){{0,2}})?{EVENTS}(?P<o> (?:to|in|at|with|for) [^,;:!?]+?)? (?:is )?"
        rf"(?P<when>on {DATE}[^,;:!?]*?){STOP}",
        PLAN_SLOT,
        0.7,
        plan_statement,
        dated=True,
    ),
    rule(
        # "I switched to the November 17 race instead" ("the May 4 game was a disaster" is not a plan)
        rf"\b(?:my|the) (?P<when>{DATE}) {EVENTS}(?P<o>)\b(?! (?:was|were|got cancell?ed)\b)",
        PLAN_SLOT,
        0.7,
        plan_statement,
        dated=True,
    ),
    rule(rf"\b(?:I am|we are) (?:now )?(?:in|living in) {NAME} now\b", "residence", 0.75, _lives_now),
    rule(rf"\bI am {NAME}(?: by the way|, nice to meet you| btw)\b", "name", 0.85, lambda m: f"my name is {m['name']}"),
    rule(
        rf"\b{NAME} is (?:officially |now )?(?:my |our )?(?:new )?home(?: now)?\b",
        "residence",
        0.75,
        lambda m: f"I live in {m['name']} now",
    ),
    rule(
        rf"\bI am {ADV}(?:severely |very |super |deathly |mildly )?allergic to {OBJ}",
        None,
        0.9,
        lambda m: f"I am allergic to {m['o']}",
    ),
    rule(rf"\bI (?:am|have been) {ADV}(?:a |an )?{DIETS}", "diet", 0.85, lambda m: f"I am {m['o'].lower()}"),
    rule(
        rf"\b(?:my|I have|I have got|I suffer from|diagnosed with|I live with|I am on \w+ for) (?P<o>{CONDITIONS})\b",
        None,
        0.8,
        lambda m: f"I have {m['o']}",
    ),
    rule(rf"\bI am on (?P<o>{MEDICINES})\b", None, 0.75, lambda m: f"I take {m['o']}"),
    # Going to, starting at, accepted at a school: what one studies where.
    rule(
        rf"\bI am (?:now |officially )?(?:going|headed|heading|off|moving|transferring|switching) to (?:the )?"
        rf"(?P<o>{CAP}(?: (?:of|de|{CAP}))*? (?:University|College|Academy|Institute|School)"
        rf"(?: of {CAP}(?: {CAP})?)?|(?:University|College) of {CAP}(?: {CAP})?)",
        "studies",
        0.75,
        lambda m: f"I study at {m['o']}",
        dated=True,  # "I'm going to" a school is a decision taken
    ),
    rule(
        rf"\bI (?:got into|was accepted (?:at|to|into)|start(?:ed)? (?:classes )?at) (?:the )?"
        rf"(?P<o>(?:University|College) of {CAP}(?: {CAP})?|{CAP}(?: {CAP})*? (?:University|College))",
        "studies",
        0.7,
        lambda m: f"I study at {m['o']}",
    ),
    rule(rf"\bmy birthday(?: is|,| on| falls on)? (?P<o>{DATE})", "birthday", 0.85, _birthday),
    rule(
        rf"\b(?:changed|moved|rescheduled|pushed|switched|postponed) (?:my |the |our )?(?:[\w-]+ ){{0,2}}{EVENTS}"
        rf"(?P<o>) to (?P<when>{DATE})",
        PLAN_SLOT,
        0.75,
        plan_statement,
        dated=True,
    ),
    rule(
        rf"\bI (?:have )?(?:always )?support(?:ed)? (?P<o>{CAP}(?: {CAP}){{0,2}})",
        "team",
        0.7,
        lambda m: f"I support {m['o']}",
    ),
    rule(
        rf"\bI {ADV}(?:knit|crochet|paint|sew|garden|surf|ski|snowboard|climb|hike|swim|cycle|skate|dance|sing|draw|"
        rf"bake|meditate|volunteer|run)(?: [\w-]+){{0,3}}? (?P<o>every (?:day|evening|morning|night|week|weekend|"
        rf"sunday|saturday|monday|tuesday|wednesday|thursday|friday)|on (?:weekends|sundays|saturdays)|daily)\b",
        None,
        0.6,
        lambda m: m.group(0).strip(),
    ),
]
