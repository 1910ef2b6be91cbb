"""The rules of the offline fact extractor (``memories.llm.facts``): what a first-person clause says
about its speaker that lasts, and which *slot* it fills.

Each rule matches the start of a normalised first-person clause (contractions spelled out: "I am",
"I have"; "I work as a nurse at Saint Luke's", "my sister Aiko lives in Osaka", "sushi is my
favourite food") and says how to word it as a first-person statement (``statement``; by default
the matched text itself), its slot and the extractor's confidence. The extractor puts the
statement in the third person (``memories.llm.person.third_person``).

A slot is an attribute a person has one value of at a time (``residence``, ``job``, ``diet``,
``partner``, ``favourite:food``, ``sister aiko:residence``, ``plan:flight``...): the newest fact in a
slot replaces the older ones (``memories.services.knowledge``). A statement that a value ended ("I
quit the hospital", "we broke up", "I eat meat again") fills the slot too, so the old value stops
being current even when the new one is not said. Facts without a slot (allergies, likes, what
someone has or does) accumulate.

These rules match the start of a clause; those matching anywhere in it are ``memories.llm.fact_mentions``,
and the vocabulary both use is ``memories.llm.fact_patterns``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memories.llm.fact_patterns import (
    ADV,
    CAP,
    DATE,
    DIETS,
    EVENTS,
    KIN,
    NAME,
    OBJ,
    OCCUPATIONS,
    PARTNER,
    PET_SLOT,
    PETS,
    PLAN_SLOT,
    ROLE,
    STOP,
    Rule,
    plan_statement,
    rule,
)

__all__ = ["RULES"]

_EVENT = EVENTS.replace("(?P<event>", "(?:")


def _kin_slot(attribute: str) -> Callable[[re.Match[str]], str]:
    return lambda m: (
        " ".join(filter(None, [m["kin"].lower(), (m.groupdict().get("name") or "").lower()])) + ":" + attribute
    )


def _favourite(m: re.Match[str]) -> str:
    kind = re.sub(r"colou?rs?$", "colour", m["k"].lower().strip())
    return "favourite:" + re.sub(r"(?<=[^s])s$", "", kind)


def _works(m: re.Match[str]) -> str:
    """ "I work as/at ..." for what a "got a job ..." or "started ..." clause took."""
    obj = m["o"]
    return f"I work as {obj}" if re.match(r"(?:a|an)\b", obj, re.I) else f"I work at {obj}"


RULES: list[Rule] = [
    # Where they live, and where they come from.
    rule(
        rf"^(?:I|we) {ADV}(?:live|am living|are living|have been living|reside) "
        rf"(?P<prep>in|near|outside(?: of)?|close to) {OBJ}",
        "residence",
        0.9,
        lambda m: f"I live {m['prep']} {m['o']}",
    ),
    rule(
        # Not "we moved to the 21 March ceremony".
        rf"^(?:I|we) {ADV}(?:moved|relocated|have moved|finally moved) (?:back )?to "
        rf"(?!(?:the|my|our) (?:[\w-]+ ){{0,3}}{_EVENT}\b){OBJ}",
        "residence",
        0.85,
        lambda m: f"I moved to {m['o']}",
    ),
    rule(rf"^I am {ADV}based (?:in|out of) {OBJ}", "residence", 0.85, lambda m: f"I live in {m['o']}"),
    rule(
        rf"^(?:I|we) {ADV}(?:moved into|are renting|rent|have rented|rented) (?:a|an|the|our|my) (?:new )?"
        rf"(?:[\w-]+ )?(?:flat|house|apartment|place|home|condo|studio) (?P<prep>in|near) {OBJ}",
        "residence",
        0.8,
        lambda m: f"I live {m['prep']} {m['o']}",
    ),
    rule(rf"^I am back in {NAME}(?= for good| now|$)", "residence", 0.75, lambda m: f"I live in {m['name']}"),
    rule(rf"^{NAME} is (?:my )?home now", "residence", 0.8, lambda m: f"I live in {m['name']} now"),
    rule(rf"^I am {ADV}(?:originally )?from {OBJ}", "origin", 0.85),
    rule(rf"^I (?:grew up|was born and raised|was raised|was born) in {OBJ}", "origin", 0.8),
    # Work and studies.
    rule(rf"^I {ADV}(?:work|am working|have been working) (?:as|at|for|in) {OBJ}", "job", 0.85),
    rule(
        rf"^I am {ADV}(?P<o>(?:a|an|the) (?:[\w-]+ ){{0,3}}{OCCUPATIONS}s?"
        rf"(?: (?:at|for|in|with) [^,;:!?]+?)?){STOP}",
        "job",
        0.8,
    ),
    rule(
        rf"^I {ADV}(?:got|landed|accepted|took|started|have) (?:a |the |my )?(?:new )?(?:job|position|role|internship)"
        rf" (?:as|at|with|in) {OBJ}",
        "job",
        0.85,
        _works,
    ),
    rule(
        # "I'm head chef at Zum Grünen Hirsch": a title without an article names where ("I'm meeting the
        # manager at Tesco" has a verb and an article before it).
        rf"^I am {ADV}(?P<o>(?:(?!(?:the|a|an|my|your|his|her|their|our|designated)\b)[\w-]+ ){{0,2}}"
        rf"{OCCUPATIONS} (?:at|for|with) (?:the )?{CAP}[^,;:!?]*?){STOP}",
        "job",
        0.75,
        lambda m: f"I work as {m['o']}",
    ),
    rule(
        rf"^I {ADV}(?:start|am starting|will start) (?:work |working )?at (?P<o>(?:the )?{CAP}[^,;:!?]*?)"
        rf"(?: (?:on|next|this|in|tomorrow|today)\b[^,;:!?]*)?{STOP}",
        "job",
        0.65,
        lambda m: f"I work at {m['o']}",
    ),
    rule(
        rf"^I {ADV}(?:started|began|joined|have started|have joined) (?:working |work )?(?:as |at |for )?"
        rf"(?P<o>(?:a|an) [^,;:!?]+? at [^,;:!?]+?|(?-i:[A-Z])[^,;:!?]*?){STOP}",
        "job",
        0.7,
        _works,
    ),
    rule(
        rf"^I {ADV}(?:switched|transferred|moved) to (?P<o>(?:the )?[^,;:!?]*?\b(?:shift|job|team|department|"
        rf"role|position|company|firm|office)\b[^,;:!?]*?){STOP}",
        "job",
        0.7,
        lambda m: f"I work on {m['o']}",
    ),
    rule(rf"^I {ADV}(?:teach|tutor|have been teaching|have been tutoring) {OBJ}", "job", 0.75),
    rule(
        # Not "seeing Dr Okafor for my back", nor "seeing Fleetwood Mac posters everywhere".
        rf"^I (?:am (?:now )?|have been |(?:have )?started )(?:seeing|dating|in a relationship with|going out with) "
        rf"(?P<o>someone(?: new)?|a (?:guy|girl|man|woman)|(?!(?:Dr|Doctor|Prof|Professor|Mr|Mrs|Ms|Miss)\b){CAP}"
        rf"(?: {CAP})?)\b(?! [a-z]+s\b)(?!(?-i: [A-Z]))",
        "partner",
        0.7,
    ),
    rule(rf"^I {ADV}(?:started|began|joined|took up|signed up for|have started|have joined) {OBJ}", None, 0.6),
    rule(
        rf"^I {ADV}(?:give|run|teach|host) (?P<o>(?:[\w-]+ ){{0,3}}(?:classes|lessons|workshops|courses)\b"
        rf"[^,;:!?]*?){STOP}",
        "job",
        0.7,
    ),
    rule(
        rf"^I have been (?:a |an )?(?!friends|married|together|dating)(?P<o>(?:[\w-]+ ){{1,3}}(?:at|with|for) {CAP}"
        rf"[^,;:!?]*?) for (?:over |about |almost |nearly |more than )?(?:a|an|\w+) (?:years?|months?)",
        "job",
        0.7,
        lambda m: f"I work as {m['o']}",
    ),
    rule(
        rf"^I (?:quit|left|resigned from|handed in my notice at|was laid off from|got laid off from|retired from|"
        rf"was fired from|got fired from) (?:my job at |my job as |my job |the job at |working at |working for )?{OBJ}",
        "job",
        0.75,
        lambda m: (
            "I quit my job" if re.fullmatch(r"(?:my |the |a )?job", m["o"], re.I) else f"I no longer work at {m['o']}"
        ),
    ),
    rule(
        r"^I am (?:now |currently )?(?P<o>retired|unemployed|between jobs|out of work|on maternity leave)\b", "job", 0.8
    ),
    rule(
        rf"^{NAME} (?:just |finally )?(?:hired me|took me on)(?: as (?P<o>(?:a|an) [^,;:!?]+?))?{STOP}",
        "job",
        0.7,
        lambda m: f"I work at {m['name']}" + (f" as {m['o']}" if m["o"] else ""),
    ),
    rule(
        # "the offer from Shopify", not "the offer from Sam to help with the move"
        rf"^I {ADV}(?:accepted|took) (?:the |their )?(?P<kind>job |position )?offer from {NAME}"
        rf"(?(kind)|(?=$| as\b))",
        "job",
        0.7,
        lambda m: f"I work at {m['name']}",
    ),
    rule(
        rf"^I {ADV}(?:got|was|have been) promoted to (?P<o>(?:[\w-]+ ){{0,3}}{OCCUPATIONS}[^,;:!?]*?){STOP}",
        "job",
        0.75,
        lambda m: f"I work as {m['o']}",
    ),
    rule(rf"^I {ADV}(?:study|am studying|major in|am majoring in) {OBJ}", "studies", 0.75),
    rule(
        rf"^I am {ADV}(?:a )?(?:student|freshman|sophomore|grad student|phd student|undergrad(?:uate)?) "
        rf"(?:at|in|of) {OBJ}",
        "studies",
        0.75,
    ),
    rule(
        r"^I am {ADV}in (?P<o>(?:grad|graduate|law|medical|med|dental|nursing|high|middle|art|culinary|business) "
        r"school|college|university|uni)\b".replace("{ADV}", ADV),
        "studies",
        0.75,
    ),
    rule(
        rf"^I {ADV}(?:go to|attend) (?P<o>[^,;:!?]*?\b(?:university|college|school|academy|institute|uni)\b"
        rf"[^,;:!?]*?){STOP}",
        "studies",
        0.7,
    ),
    # Who they are.
    rule(rf"^my name is {NAME}", "name", 0.95),
    rule(rf"^(?:please )?call me {NAME}", "name", 0.9, lambda m: f"my name is {m['name']}"),
    rule(r"^I am (?P<o>\d{1,3})(?: years old| yrs old| year old)?$", "age", 0.85, lambda m: f"I am {m['o']} years old"),
    rule(r"^I am (?P<o>\d{1,3}) (?:years old|yrs old|year old)\b", "age", 0.85, lambda m: f"I am {m['o']} years old"),
    rule(r"^I (?:just )?turned (?P<o>\d{1,3})\b", "age", 0.8, lambda m: f"I am {m['o']} years old"),
    rule(rf"^my birthday is {OBJ}", "birthday", 0.9),
    rule(rf"^I was born on {OBJ}", "birthday", 0.85, lambda m: f"my birthday is {m['o']}"),
    rule(rf"^I {ADV}speak (?P<o>{CAP}(?:,? (?:and )?{CAP})*)", "languages", 0.75),
    # Partner, family, pets.
    rule(
        rf"^I am {ADV}(?P<o>married|engaged|divorced|single|widowed|a widow|a widower|separated)\b(?: to {NAME})?",
        "partner",
        0.85,
    ),
    rule(
        rf"^I (?:just )?(?:got married to|married|got engaged to) {NAME}",
        "partner",
        0.85,
        lambda m: f"I am married to {m['name']}",
    ),
    rule(rf"^my {PARTNER}(?:'s name)? is (?:called |named )?{NAME}$", "partner", 0.85),
    rule(
        rf"^{NAME} and I (?:broke up|split up|separated|divorced|got divorced|split)",
        "partner",
        0.8,
        lambda m: f"I broke up with {m['name']}",
    ),
    rule(
        rf"^I (?:broke up with|split up with|split from|separated from|divorced|left) (?:my {PARTNER} )?{NAME}",
        "partner",
        0.8,
        lambda m: f"I broke up with {m['name']}",
    ),
    rule(
        r"^I (?:just |finally )?met someone(?: new| special)?(?=$|, (?:and|we|he|she)\b)",
        "partner",
        0.65,
        lambda m: "I am seeing someone new",
    ),
    rule(
        rf"^my {KIN}(?: {NAME})? {ADV}(?:lives|is living|moved|has moved|relocated) (?:in|to|near) {OBJ}",
        _kin_slot("residence"),
        0.8,
    ),
    rule(rf"^my {KIN}(?: {NAME})? {ADV}(?:works|is working) (?:as|at|for|in) {OBJ}", _kin_slot("job"), 0.75),
    rule(
        rf"^my {KIN}(?: {NAME})? is {ADV}(?P<o>(?:a|an) (?:[\w-]+ ){{0,3}}{OCCUPATIONS}"
        rf"(?: (?:at|for|in|with) [^,;:!?]+?)?){STOP}",
        _kin_slot("job"),
        0.75,
    ),
    rule(rf"^my {KIN}(?: {NAME})? is (?:now )?(?P<o>\d{{1,3}})(?: years old)?{STOP}", _kin_slot("age"), 0.8),
    rule(rf"^my {KIN}(?:'s name is| is (?:called|named)) {NAME}", lambda m: f"{m['kin'].lower()}:name", 0.8),
    rule(
        rf"^I {ADV}(?:have|have got|own) (?P<o>(?:a|an|one|two|three|four|five|six|\d+) (?:[\w-]+ ){{0,2}}"
        rf"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|grandkids|"
        rf"grandsons?|granddaughters?|twins|stepkids)\b[^,;:!?]*?){STOP}",
        None,
        0.8,
    ),
    rule(
        rf"^(?:I|we) {ADV}(?:have|have got|own|adopted|got|rescued|brought home) (?:a|an|one|two|three|\d+|our|my) "
        rf"(?:[\w-]+ ){{0,2}}?{PETS}s?,? (?:named|called) {NAME}",
        PET_SLOT,
        0.85,
        lambda m: f"I have a {m['pet']} named {m['name']}",
    ),
    rule(
        rf"^I {ADV}(?:have|have got|own) (?P<o>(?:a|an|one|two|three|four|\d+) (?:[\w-]+ ){{0,2}}?{PETS}s?)\b",
        None,
        0.75,
    ),
    rule(
        rf"^my {PETS}(?:'s name is|,| is (?:named|called)|) {NAME}$",
        PET_SLOT,
        0.8,
        lambda m: f"I have a {m['pet']} named {m['name']}",
    ),
    rule(
        rf"^(?:we|I) (?:had to )?(?:rehomed?|re-homed?|gave away|give away|put down|lost) (?:our |my )?"
        rf"(?:{PETS} )?{NAME}",
        PET_SLOT,
        0.7,
        lambda m: f"I no longer have {m['name']}",
    ),
    # Food, health.
    rule(rf"^I am {ADV}(?:a |an )?{DIETS}", "diet", 0.9, lambda m: f"I am {m['o'].lower()}"),
    rule(
        r"^I (?:went back to eating|started eating|eat|am eating) (?P<o>meat|fish|dairy|eggs|pork|beef|chicken)"
        r"(?: again)?\b",
        "diet",
        0.8,
        lambda m: f"I eat {m['o']} again",
    ),
    rule(
        rf"^I am no longer (?:a |an )?{DIETS}", "diet", 0.8, lambda m: f"I am no longer {m['o'].lower()}", negated=True
    ),
    rule(rf"^I (?:do not|never|cannot|can not) (?:eat|drink|have) {OBJ}", None, 0.8, negated=True),
    rule(rf"^I am {ADV}(?:severely |very |super |deathly |mildly )?allergic to {OBJ}", None, 0.9),
    rule(
        r"^I {ADV}have (?:a |an )?(?:severe |bad |mild )?(?P<o>[\w -]+?) allergy\b".replace("{ADV}", ADV),
        None,
        0.85,
        lambda m: f"I am allergic to {m['o']}",
    ),
    rule(
        rf"^I {ADV}(?:have|suffer from|was diagnosed with|live with) (?P<o>(?:type [12] )?(?:diabetes|asthma|celiac|"
        rf"coeliac|adhd|autism|epilepsy|arthritis|migraines|anxiety|depression|ibs|crohn's|lupus|a heart condition|"
        rf"high blood pressure|eczema|psoriasis|insomnia|chronic pain|multiple sclerosis|cancer|dyslexia))\b",
        None,
        0.8,
    ),
    rule(
        rf"^I {ADV}(?:take|am taking|am on) (?P<o>[^,;:!?]*?\b(?:medication|meds|pills|insulin|inhaler|tablets|mg|"
        rf"blockers|inhibitors|antidepressants|metformin|levothyroxine|statins?)\b[^,;:!?]*?){STOP}",
        None,
        0.7,
    ),
    # Likes, dislikes, favourites, pastimes.
    rule(
        rf"^my (?:all-time |absolute )?favou?rite (?P<k>[a-z]+(?: [a-z]+)?) (?:is|are|has to be|would be) {OBJ}",
        _favourite,
        0.85,
    ),
    rule(
        r"^(?P<o>[^,;:!?]+?) (?:is|are) (?:definitely |probably )?my (?:all-time |absolute |new )?favou?rite "
        r"(?P<k>[a-z]+(?: [a-z]+)?)\b",
        _favourite,
        0.8,
        lambda m: f"my favourite {m['k']} is {m['o']}",
    ),
    rule(
        rf"^my (?:new )?(?P<k>hobby|hobbies|passion|dream job|career|goal) (?:is|are|has always been) {OBJ}", None, 0.7
    ),
    rule(
        rf"^I {ADV}(?:love|like|enjoy|adore|prefer) (?!(?:that|it|this|those|these|them|the way|how|what|when|where|"
        rf"seeing|hearing|to see|to hear|talking|chatting|you|your)\b){OBJ}",
        None,
        0.6,
    ),
    rule(
        rf"^I am {ADV}(?:really |so |very |super |pretty |quite |a )?(?:passionate about|interested in|keen on|"
        rf"into|obsessed with|crazy about|(?:big |huge )?fan of) {OBJ}",
        None,
        0.65,
    ),
    rule(rf"^I (?:really )?(?:hate|dislike|cannot stand|detest|loathe) {OBJ}", None, 0.65),
    rule(rf"^I (?:really )?do not (?:really )?(?:like|enjoy|care for) {OBJ}", None, 0.6, negated=True),
    rule(
        rf"^I am (?:not|never been) (?:really |much of |a big |that )?(?:a fan of|into) {OBJ}", None, 0.6, negated=True
    ),
    rule(
        rf"^I {ADV}(?:play|have been playing) (?P<o>(?:the )?[\w -]+?)"
        r"(?=$| (?:every|on|with|at|for|since|when)\b|[,;:!?])",
        None,
        0.6,
    ),
    rule(rf"^I {ADV}(?:go|went) (?P<o>\w+ing)(?: every| on| at| most| whenever| each| twice| once)", None, 0.55),
    rule(rf"^I {ADV}(?:drive|own) (?:a|an) {OBJ}", None, 0.7),
    rule(
        r"^I have been (?P<o>(?!busy|so|really|thinking|feeling|wondering|meaning|trying|going|having|getting)"
        r"\w+ing\b[^,;:!?]*?\bfor (?:over |about |almost |nearly |more than )?(?:a|an|\w+) (?:years?|decades?))",
        None,
        0.7,
    ),
    rule(rf"^I am {ADV}(?P<o>(?:a|an) (?:[\w-]+ ){{0,2}}{ROLE}){STOP}", None, 0.55),
    # Plans with a date.
    rule(
        rf"^my {EVENTS}(?P<o>[^,;:!?]*?) (?:is|will be) (?P<when>{DATE}[^,;:!?]*)",
        PLAN_SLOT,
        0.8,
        plan_statement,
        dated=True,
    ),
    rule(
        rf"^(?:my |the |our )?{EVENTS}(?P<o>[^,;:!?]*?) (?:got|was|has been|is being|is) (?:moved|rescheduled|"
        rf"pushed|postponed|brought forward|changed) (?:back )?to (?P<when>{DATE}[^,;:!?]*)",
        PLAN_SLOT,
        0.8,
        plan_statement,
        dated=True,
    ),
    rule(
        rf"^I (?:have|have got) (?:a|an|my) (?:[\w-]+ ){{0,2}}{EVENTS}(?P<o>[^,;:!?]*?) (?P<when>{DATE}[^,;:!?]*)",
        PLAN_SLOT,
        0.75,
        lambda m: f"I have a {m.group(0).split(' ', 3)[-1]}",
        dated=True,
    ),
    rule(
        rf"^I am (?:flying|going|travell?ing|heading|leaving) (?:to|for) (?P<o>[^,;:!?]+?) (?P<when>{DATE}[^,;:!?]*)",
        "plan:trip",
        0.75,
        dated=True,
    ),
]
