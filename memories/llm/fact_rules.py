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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ANYWHERE", "RULES", "Rule"]

# Where an object ends: a clause break, or a word that starts another clause.
_STOP = (
    r"(?=$|\s*[,;:!?()\u2014\u2013]|\s+(?:but|so|because|cause|since|though|although|which|who|while|when|where|"
    r"until|unless|if|whereas|and (?:the|it|that|this|he|she|they|we|I|my|his|her|our|their|its|there|so|then|now|"
    r"am|was|have|had|live|work|love|like|got|moved|started|also)|plus|except)\b)"
)
_O = rf"(?P<o>[^,;:!?()\u2014\u2013]+?){_STOP}"
_NAME = r"(?P<name>(?-i:[A-Z][\w'-]*(?: (?:[A-Z][\w'-]*)){0,2}))"
_ADV = (
    r"(?:(?:also|now|currently|still|just|recently|finally|actually|really|officially|already|even|basically|"
    r"mostly|kind of|sort of|happily|proudly)\s+)*"
)
_KIN = (
    r"(?P<kin>sister|brother|mom|mum|mother|dad|father|son|daughter|wife|husband|partner|boyfriend|girlfriend|"
    r"fianc[ée]e?|grandma|grandmother|grandpa|grandfather|grandson|granddaughter|aunt|uncle|cousin|niece|nephew|"
    r"best friend|twin|stepson|stepdaughter|stepmom|stepdad|parents|kids|children|baby|oldest|youngest|eldest)"
)
_PARTNER = r"(?P<kin>wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|spouse)"
_PETS = (
    r"(?P<pet>dog|puppy|pup|cat|kitten|guinea pig|hamster|rabbit|bunny|parrot|budgie|bird|fish|goldfish|turtle|"
    r"tortoise|horse|pony|snake|lizard|gecko|ferret|chinchilla|hedgehog|rat|pig|goat)"
)
_DIETS = (
    r"(?P<o>vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|kosher|halal|gluten[- ]free|"
    r"lactose[- ]intolerant|plant[- ]based|dairy[- ]free)"
)
# Occupations by name: "I am a nurse" fills the job slot; other "I am a <-er/-ist>" do not ("a runner").
_OCCUPATIONS = (
    r"(?:nurse|doctor|physician|surgeon|dentist|vet|veterinarian|pharmacist|paramedic|midwife|therapist|"
    r"psychologist|counsell?or|teacher|professor|lecturer|tutor|librarian|lawyer|attorney|judge|paralegal|"
    r"accountant|auditor|banker|analyst|consultant|engineer|developer|programmer|designer|architect|scientist|"
    r"researcher|technician|mechanic|electrician|plumber|carpenter|builder|welder|farmer|chef|cook|baker|"
    r"butcher|barista|bartender|waiter|waitress|server|cashier|clerk|receptionist|secretary|assistant|manager|"
    r"director|supervisor|administrator|coordinator|officer|agent|broker|realtor|firefighter|soldier|"
    r"police officer|cop|detective|pilot|flight attendant|driver|trucker|courier|journalist|reporter|editor|"
    r"writer|author|photographer|artist|illustrator|animator|musician|singer|actor|actress|dancer|model|"
    r"athlete|coach|trainer|instructor|hairdresser|stylist|barber|tailor|janitor|cleaner|nanny|"
    r"babysitter|caregiver|social worker|housewife|homemaker|stay-at-home (?:mom|dad|parent)|ceo|cto|"
    r"founder|entrepreneur|freelancer|contractor|intern|apprentice|guide|translator|interpreter|"
    r"economist|statistician|data scientist|marketer|salesman|saleswoman|salesperson|recruiter|"
    r"student|pastor|priest|rabbi|imam|missionary|miner|fisherman|lifeguard|zookeeper|surveyor)"
)
_ROLE = r"(?:[a-z-]+(?:er|or|ist|ian|eur))"
_DATE = (
    r"(?:on |for |at )?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|(?:the )?\d{1,2}(?:st|nd|rd|th)?"
    r"(?: of)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|"
    r"oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?\b|\d{1,2}/\d{1,2}(?:/\d{2,4})?)"
)
_EVENTS = (
    r"(?P<event>flight|appointment|exam|test|interview|surgery|operation|wedding|trip|vacation|holiday|party|"
    r"concert|match|game|race|marathon|recital|meeting|presentation|deadline|check-?up|graduation|"
    r"conference|move|defen[cs]e|audition|dentist|doctor|visit)"
)

_RELATIVE = (
    r"(?P<kin>wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|sister|brother|son|daughter|mom|mum|mother|"
    r"dad|father|grandson|granddaughter|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|niece|nephew|"
    r"stepson|stepdaughter|twin|best friend)"
)
# A capitalised word that is not a sentence opener or a weekday: a name.
_CAP = (
    r"(?-i:(?!(?:I|The|A|An|And|But|So|Or|My|He|She|It|We|They|You|What|Whats|Who|How|Why|When|Where|Which|That|"
    r"This|Yes|No|Oh|Ok|Okay|Thanks|Hi|Hello|Hey|Sorry|Please|Lol|Haha|Just|Also|Still|Now|Then|Today|Tomorrow|"
    r"Yesterday|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Is|Was|Has|Had|Will|Can|Did|Does)\b)"
    r"[A-Z][a-z\u00c0-\u017f'-]+)"
)
_NAMED = rf"(?P<name>{_CAP})"
_CONDITIONS = (
    r"(?:type [12] )?diabetes|asthma|hay fever|celiac disease|coeliac disease|celiac|coeliac|adhd|autism|epilepsy|"
    r"arthritis|migraines?|gout|hypertension|high blood pressure|eczema|psoriasis|insomnia|atrial fibrillation|afib|"
    r"ibs|crohn's|lupus|anxiety|depression|dyslexia|sleep apnea|tinnitus|a bad back|a heart condition|"
    r"multiple sclerosis|fibromyalgia|endometriosis|pcos|thyroid problems|hypothyroidism|anemia|anaemia"
)
_MEDICINES = (
    r"warfarin|insulin|metformin|levothyroxine|statins|blood thinners|antidepressants|beta blockers|an inhaler|"
    r"the pill|chemo|chemotherapy|dialysis|lithium|methotrexate|prednisone|steroids"
)
_PARTNERS = frozenset("wife husband partner boyfriend girlfriend fiance fiancé fiancee fiancée".split())
_CAR_BRANDS = (
    r"(?:toyota|honda|ford|bmw|mercedes|audi|volkswagen|vw|tesla|hyundai|kia|nissan|mazda|subaru|chevrolet|chevy|"
    r"jeep|volvo|suzuki|mitsubishi|peugeot|renault|fiat|skoda|lexus|porsche|mini|dacia|seat|opel|citro[eë]n|"
    r"jaguar|land rover|range rover|byd|polestar|ram|dodge|gmc|cadillac|buick|lincoln|alfa romeo|proton|perodua|"
    r"tata|mahindra|maruti)"
)


@dataclass(frozen=True)
class Rule:
    """One way of saying something lasting: ``pattern`` matches the start of a normalised first-person
    clause; ``statement`` words it in the first person (default: the matched text); ``slot`` names
    the attribute it fills (``None``: it accumulates); ``negated``: the rule itself is about a
    "not" ("I do not eat pork"), so a negation does not skip it; ``dated``: it is about a plan
    with a date, so the future tense does not skip it."""

    pattern: re.Pattern[str]
    slot: Callable[[re.Match[str]], str | None]
    confidence: float
    statement: Callable[[re.Match[str]], str] | None = None
    negated: bool = False
    dated: bool = False


def _r(
    pattern: str,
    slot: str | Callable[[re.Match[str]], str | None] | None,
    confidence: float,
    statement: Callable[[re.Match[str]], str] | None = None,
    **flags: bool,
) -> Rule:
    slot_of = slot if callable(slot) else (lambda _m, s=slot: s)
    return Rule(re.compile(pattern, re.IGNORECASE), slot_of, confidence, statement, **flags)


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


def _plan(m: re.Match[str]) -> str:
    when = m["when"].strip()
    on = "" if re.match(r"(?:on|for|at)\b", when, re.I) else "on "
    return f"my {m['event']}{m['o'] or ''} is {on}{when}"


def _PET_SLOT(m: re.Match[str]) -> str:  # a rule's slot, named like the other constants
    return f"pet:{m['name'].lower()}"


def _PLAN_SLOT(m: re.Match[str]) -> str:
    return f"plan:{m['event'].lower()}"


RULES: list[Rule] = [
    # Where they live, and where they come from.
    _r(
        rf"^(?:I|we) {_ADV}(?:live|am living|are living|have been living|reside) "
        rf"(?P<prep>in|near|outside(?: of)?|close to) {_O}",
        "residence",
        0.9,
        lambda m: f"I live {m['prep']} {m['o']}",
    ),
    _r(
        rf"^(?:I|we) {_ADV}(?:moved|relocated|have moved|finally moved) (?:back )?to {_O}",
        "residence",
        0.85,
        lambda m: f"I moved to {m['o']}",
    ),
    _r(rf"^I am {_ADV}based (?:in|out of) {_O}", "residence", 0.85, lambda m: f"I live in {m['o']}"),
    _r(rf"^{_NAME} is (?:my )?home now", "residence", 0.8, lambda m: f"I live in {m['name']} now"),
    _r(rf"^I am {_ADV}(?:originally )?from {_O}", "origin", 0.85),
    _r(rf"^I (?:grew up|was born and raised|was raised|was born) in {_O}", "origin", 0.8),
    # Work and studies.
    _r(rf"^I {_ADV}(?:work|am working|have been working) (?:as|at|for|in) {_O}", "job", 0.85),
    _r(
        rf"^I am {_ADV}(?P<o>(?:a|an|the) (?:[\w-]+ ){{0,3}}{_OCCUPATIONS}s?"
        rf"(?: (?:at|for|in|with) [^,;:!?]+?)?){_STOP}",
        "job",
        0.8,
    ),
    _r(
        rf"^I {_ADV}(?:got|landed|accepted|took|started|have) (?:a |the |my )?(?:new )?(?:job|position|role|internship)"
        rf" (?:as|at|with|in) {_O}",
        "job",
        0.85,
        _works,
    ),
    _r(
        rf"^I {_ADV}(?:started|began|joined) (?:working |work )?(?:as |at |for )?"
        rf"(?P<o>(?:a|an) [^,;:!?]+? at [^,;:!?]+?|(?-i:[A-Z])[^,;:!?]*?){_STOP}",
        "job",
        0.7,
        _works,
    ),
    _r(
        rf"^I {_ADV}(?:switched|transferred|moved) to (?P<o>(?:the )?[^,;:!?]*?\b(?:shift|job|team|department|"
        rf"role|position|company|firm|office)\b[^,;:!?]*?){_STOP}",
        "job",
        0.7,
        lambda m: f"I work on {m['o']}",
    ),
    _r(rf"^I {_ADV}(?:teach|tutor|have been teaching|have been tutoring) {_O}", "job", 0.75),
    _r(rf"^I {_ADV}(?:started|began|joined|took up|signed up for|have started|have joined) {_O}", None, 0.6),
    _r(
        rf"^I {_ADV}(?:give|run|teach|host) (?P<o>(?:[\w-]+ ){{0,3}}(?:classes|lessons|workshops|courses)\b"
        rf"[^,;:!?]*?){_STOP}",
        "job",
        0.7,
    ),
    _r(
        rf"^I have been (?:a |an )?(?!friends|married|together|dating)(?P<o>(?:[\w-]+ ){{1,3}}(?:at|with|for) {_CAP}"
        rf"[^,;:!?]*?) for (?:over |about |almost |nearly |more than )?(?:a|an|\w+) (?:years?|months?)",
        "job",
        0.7,
        lambda m: f"I work as {m['o']}",
    ),
    _r(
        rf"^I (?:quit|left|resigned from|handed in my notice at|was laid off from|got laid off from|retired from|"
        rf"was fired from|got fired from) (?:my job at |my job as |my job |the job at |working at |working for )?{_O}",
        "job",
        0.75,
        lambda m: (
            "I quit my job" if re.fullmatch(r"(?:my |the |a )?job", m["o"], re.I) else f"I no longer work at {m['o']}"
        ),
    ),
    _r(
        r"^I am (?:now |currently )?(?P<o>retired|unemployed|between jobs|out of work|on maternity leave)\b", "job", 0.8
    ),
    _r(rf"^I {_ADV}(?:study|am studying|major in|am majoring in) {_O}", "studies", 0.75),
    _r(
        rf"^I am {_ADV}(?:a )?(?:student|freshman|sophomore|grad student|phd student|undergrad(?:uate)?) "
        rf"(?:at|in|of) {_O}",
        "studies",
        0.75,
    ),
    _r(
        r"^I am {_ADV}in (?P<o>(?:grad|graduate|law|medical|med|dental|nursing|high|middle|art|culinary|business) "
        r"school|college|university|uni)\b".replace("{_ADV}", _ADV),
        "studies",
        0.75,
    ),
    _r(
        rf"^I {_ADV}(?:go to|attend) (?P<o>[^,;:!?]*?\b(?:university|college|school|academy|institute|uni)\b"
        rf"[^,;:!?]*?){_STOP}",
        "studies",
        0.7,
    ),
    # Who they are.
    _r(rf"^my name is {_NAME}", "name", 0.95),
    _r(rf"^(?:please )?call me {_NAME}", "name", 0.9, lambda m: f"my name is {m['name']}"),
    _r(r"^I am (?P<o>\d{1,3})(?: years old| yrs old| year old)?$", "age", 0.85, lambda m: f"I am {m['o']} years old"),
    _r(r"^I am (?P<o>\d{1,3}) (?:years old|yrs old|year old)\b", "age", 0.85, lambda m: f"I am {m['o']} years old"),
    _r(r"^I (?:just )?turned (?P<o>\d{1,3})\b", "age", 0.8, lambda m: f"I am {m['o']} years old"),
    _r(rf"^my birthday is {_O}", "birthday", 0.9),
    _r(rf"^I was born on {_O}", "birthday", 0.85, lambda m: f"my birthday is {m['o']}"),
    _r(rf"^I {_ADV}speak (?P<o>{_CAP}(?:,? (?:and )?{_CAP})*)", "languages", 0.75),
    # Partner, family, pets.
    _r(
        rf"^I am {_ADV}(?P<o>married|engaged|divorced|single|widowed|a widow|a widower|separated)\b(?: to {_NAME})?",
        "partner",
        0.85,
    ),
    _r(
        rf"^I (?:just )?(?:got married to|married|got engaged to) {_NAME}",
        "partner",
        0.85,
        lambda m: f"I am married to {m['name']}",
    ),
    _r(rf"^my {_PARTNER}(?:'s name)? is (?:called |named )?{_NAME}$", "partner", 0.85),
    _r(
        rf"^{_NAME} and I (?:broke up|split up|separated|divorced|got divorced|split)",
        "partner",
        0.8,
        lambda m: f"I broke up with {m['name']}",
    ),
    _r(
        rf"^I (?:broke up with|split up with|split from|separated from|divorced|left) (?:my {_PARTNER} )?{_NAME}",
        "partner",
        0.8,
        lambda m: f"I broke up with {m['name']}",
    ),
    _r(
        rf"^I am (?:now )?(?:seeing|dating|in a relationship with|going out with) (?P<o>someone(?: new)?|"
        rf"a (?:guy|girl|man|woman)|{_CAP}(?: {_CAP})?)\b",
        "partner",
        0.7,
    ),
    _r(
        rf"^my {_KIN}(?: {_NAME})? {_ADV}(?:lives|is living|moved|has moved|relocated) (?:in|to|near) {_O}",
        _kin_slot("residence"),
        0.8,
    ),
    _r(rf"^my {_KIN}(?: {_NAME})? {_ADV}(?:works|is working) (?:as|at|for|in) {_O}", _kin_slot("job"), 0.75),
    _r(rf"^my {_KIN}(?: {_NAME})? is (?:now )?(?P<o>\d{{1,3}})(?: years old)?{_STOP}", _kin_slot("age"), 0.8),
    _r(rf"^my {_KIN}(?:'s name is| is (?:called|named)) {_NAME}", lambda m: f"{m['kin'].lower()}:name", 0.8),
    _r(
        rf"^I {_ADV}(?:have|have got|own) (?P<o>(?:a|an|one|two|three|four|five|six|\d+) (?:[\w-]+ ){{0,2}}"
        rf"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|grandkids|"
        rf"grandsons?|granddaughters?|twins|stepkids)\b[^,;:!?]*?){_STOP}",
        None,
        0.8,
    ),
    _r(
        rf"^(?:I|we) {_ADV}(?:have|have got|own|adopted|got|rescued|brought home) (?:a|an|one|two|three|\d+|our|my) "
        rf"(?:[\w-]+ ){{0,2}}?{_PETS}s?,? (?:named|called) {_NAME}",
        _PET_SLOT,
        0.85,
        lambda m: f"I have a {m['pet']} named {m['name']}",
    ),
    _r(
        rf"^I {_ADV}(?:have|have got|own) (?P<o>(?:a|an|one|two|three|four|\d+) (?:[\w-]+ ){{0,2}}?{_PETS}s?)\b",
        None,
        0.75,
    ),
    _r(
        rf"^my {_PETS}(?:'s name is|,| is (?:named|called)|) {_NAME}$",
        _PET_SLOT,
        0.8,
        lambda m: f"I have a {m['pet']} named {m['name']}",
    ),
    _r(
        rf"^(?:we|I) (?:had to )?(?:rehomed?|re-homed?|gave away|give away|put down|lost) (?:our |my )?"
        rf"(?:{_PETS} )?{_NAME}",
        _PET_SLOT,
        0.7,
        lambda m: f"I no longer have {m['name']}",
    ),
    # Food, health.
    _r(rf"^I am {_ADV}(?:a |an )?{_DIETS}", "diet", 0.9, lambda m: f"I am {m['o'].lower()}"),
    _r(
        r"^I (?:went back to eating|started eating|eat|am eating) (?P<o>meat|fish|dairy|eggs|pork|beef|chicken)"
        r"(?: again)?\b",
        "diet",
        0.8,
        lambda m: f"I eat {m['o']} again",
    ),
    _r(
        rf"^I am no longer (?:a |an )?{_DIETS}", "diet", 0.8, lambda m: f"I am no longer {m['o'].lower()}", negated=True
    ),
    _r(rf"^I (?:do not|never|cannot|can not) (?:eat|drink|have) {_O}", None, 0.8, negated=True),
    _r(rf"^I am {_ADV}(?:severely |very |super |deathly |mildly )?allergic to {_O}", None, 0.9),
    _r(
        r"^I {_ADV}have (?:a |an )?(?:severe |bad |mild )?(?P<o>[\w -]+?) allergy\b".replace("{_ADV}", _ADV),
        None,
        0.85,
        lambda m: f"I am allergic to {m['o']}",
    ),
    _r(
        rf"^I {_ADV}(?:have|suffer from|was diagnosed with|live with) (?P<o>(?:type [12] )?(?:diabetes|asthma|celiac|"
        rf"coeliac|adhd|autism|epilepsy|arthritis|migraines|anxiety|depression|ibs|crohn's|lupus|a heart condition|"
        rf"high blood pressure|eczema|psoriasis|insomnia|chronic pain|multiple sclerosis|cancer|dyslexia))\b",
        None,
        0.8,
    ),
    _r(
        rf"^I {_ADV}(?:take|am taking|am on) (?P<o>[^,;:!?]*?\b(?:medication|meds|pills|insulin|inhaler|tablets|mg|"
        rf"blockers|inhibitors|antidepressants|metformin|levothyroxine|statins?)\b[^,;:!?]*?){_STOP}",
        None,
        0.7,
    ),
    # Likes, dislikes, favourites, pastimes.
    _r(
        rf"^my (?:all-time |absolute )?favou?rite (?P<k>[a-z]+(?: [a-z]+)?) (?:is|are|has to be|would be) {_O}",
        _favourite,
        0.85,
    ),
    _r(
        r"^(?P<o>[^,;:!?]+?) (?:is|are) (?:definitely |probably )?my (?:all-time |absolute |new )?favou?rite "
        r"(?P<k>[a-z]+(?: [a-z]+)?)\b",
        _favourite,
        0.8,
        lambda m: f"my favourite {m['k']} is {m['o']}",
    ),
    _r(rf"^my (?:new )?(?P<k>hobby|hobbies|passion|dream job|career|goal) (?:is|are|has always been) {_O}", None, 0.7),
    _r(
        rf"^I {_ADV}(?:love|like|enjoy|adore|prefer) (?!(?:that|it|this|those|these|them|the way|how|what|when|where|"
        rf"seeing|hearing|to see|to hear|talking|chatting|you|your)\b){_O}",
        None,
        0.6,
    ),
    _r(
        rf"^I am {_ADV}(?:really |so |very |super |pretty |quite |a )?(?:passionate about|interested in|keen on|"
        rf"into|obsessed with|crazy about|(?:big |huge )?fan of) {_O}",
        None,
        0.65,
    ),
    _r(rf"^I (?:really )?(?:hate|dislike|cannot stand|detest|loathe) {_O}", None, 0.65),
    _r(rf"^I (?:really )?do not (?:really )?(?:like|enjoy|care for) {_O}", None, 0.6, negated=True),
    _r(rf"^I am (?:not|never been) (?:really |much of |a big |that )?(?:a fan of|into) {_O}", None, 0.6, negated=True),
    _r(
        rf"^I {_ADV}(?:play|have been playing) (?P<o>(?:the )?[\w -]+?)"
        r"(?=$| (?:every|on|with|at|for|since|when)\b|[,;:!?])",
        None,
        0.6,
    ),
    _r(rf"^I {_ADV}(?:go|went) (?P<o>\w+ing)(?: every| on| at| most| whenever| each| twice| once)", None, 0.55),
    _r(rf"^I {_ADV}(?:drive|own) (?:a|an) {_O}", None, 0.7),
    _r(
        r"^I have been (?P<o>(?!busy|so|really|thinking|feeling|wondering|meaning|trying|going|having|getting)"
        r"\w+ing\b[^,;:!?]*?\bfor (?:over |about |almost |nearly |more than )?(?:a|an|\w+) (?:years?|decades?))",
        None,
        0.7,
    ),
    _r(rf"^I am {_ADV}(?P<o>(?:a|an) (?:[\w-]+ ){{0,2}}{_ROLE}){_STOP}", None, 0.55),
    # Plans with a date.
    _r(
        rf"^my {_EVENTS}(?P<o>[^,;:!?]*?) (?:is|will be) (?P<when>{_DATE}[^,;:!?]*)", _PLAN_SLOT, 0.8, _plan, dated=True
    ),
    _r(
        rf"^(?:my |the |our )?{_EVENTS}(?P<o>[^,;:!?]*?) (?:got|was|has been|is being|is) (?:moved|rescheduled|"
        rf"pushed|postponed|brought forward|changed) (?:back )?to (?P<when>{_DATE}[^,;:!?]*)",
        _PLAN_SLOT,
        0.8,
        _plan,
        dated=True,
    ),
    _r(
        rf"^I (?:have|have got) (?:a|an|my) (?:[\w-]+ ){{0,2}}{_EVENTS}(?P<o>[^,;:!?]*?) (?P<when>{_DATE}[^,;:!?]*)",
        _PLAN_SLOT,
        0.75,
        lambda m: f"I have a {m.group(0).split(' ', 3)[-1]}",
        dated=True,
    ),
    _r(
        rf"^I am (?:flying|going|travell?ing|heading|leaving) (?:to|for) (?P<o>[^,;:!?]+?) (?P<when>{_DATE}[^,;:!?]*)",
        "plan:trip",
        0.75,
        dated=True,
    ),
]


def _pet_named(m: re.Match[str]) -> str:
    return f"I have a {m['pet']} named {m['name']}"


def _lives_now(m: re.Match[str]) -> str:
    return f"I live in {m['name']} now"


def _birthday(m: re.Match[str]) -> str:
    return f"my birthday is {m['o']}"


def _relative_slot(m: re.Match[str]) -> str:
    kin = m["kin"].lower()
    return "partner" if kin in _PARTNERS else f"{kin} {m['name'].lower()}:name"


def _relative(m: re.Match[str]) -> str:
    name = re.sub(r"'s?$", "", m["name"])
    return f"my {m['kin'].lower()} is named {name}"


# Said anywhere in a clause, not only at its start: people, pets and employers by name, dated plans.
ANYWHERE: list[Rule] = [
    _r(
        rf"\bmy (?:little |big |older |younger |baby |twin |new |lovely |dear |late )?{_RELATIVE},? {_NAMED}",
        _relative_slot,
        0.8,
        _relative,
    ),
    _r(rf"\b{_NAMED},? \(?my {_RELATIVE}\)?", _relative_slot, 0.75, _relative),
    _r(rf"\b(?:my|our) (?:[\w-]+ )?{_PETS},? {_NAMED}", _PET_SLOT, 0.8, _pet_named),
    _r(
        rf"\bour (?P<kin>twins|kids|children|sons|daughters|boys|girls),? (?P<o>{_CAP}(?:,? (?:and )?{_CAP})+)",
        None,
        0.75,
        lambda m: f"my {m['kin'].lower()} are {m['o']}",
    ),
    _r(
        r"\b(?:first|second|third|last) (?:day|week|month) (?:at|with) "
        r"(?P<name>(?-i:[A-Z][\w&'.-]*(?: [A-Z][\w&'.-]*){0,2}))",
        "job",
        0.7,
        lambda m: f"I work at {m['name']}",
    ),
    _r(
        rf"\bI was (?:a|an) (?:[\w-]+ ){{0,2}}{_OCCUPATIONS}(?P<o>(?: (?:for|at|in) [^,;:!?]+?)?){_STOP}",
        None,
        0.7,
        lambda m: m.group(0).strip(),
    ),
    _r(
        rf"\bI (?:just )?(?:bought|got|picked up) (?:a |an |my )?(?:new |used |second-hand |secondhand )?(?:\d{{4}} )?"
        rf"(?P<o>{_CAR_BRANDS}(?: [\w-]+){{0,2}})",
        "car",
        0.75,
        lambda m: f"I drive a {m['o']}",
    ),
    _r(
        rf"\b(?:my |the |a )?{_EVENTS}(?P<o> (?:to|in|at|with|for) [^,;:!?]+?)? (?:is )?(?P<when>on {_DATE}[^,;:!?]*)",
        _PLAN_SLOT,
        0.7,
        _plan,
        dated=True,
    ),
    _r(rf"\b(?:I am|we are) (?:now )?(?:in|living in) {_NAME} now\b", "residence", 0.75, _lives_now),
    _r(rf"\bI am {_NAME}(?: by the way|, nice to meet you| btw)\b", "name", 0.85, lambda m: f"my name is {m['name']}"),
    _r(
        rf"\b{_NAME} is (?:officially |now )?(?:my |our )?(?:new )?home(?: now)?\b",
        "residence",
        0.75,
        lambda m: f"I live in {m['name']} now",
    ),
    _r(
        rf"\bI am {_ADV}(?:severely |very |super |deathly |mildly )?allergic to {_O}",
        None,
        0.9,
        lambda m: f"I am allergic to {m['o']}",
    ),
    _r(rf"\bI (?:am|have been) {_ADV}(?:a |an )?{_DIETS}", "diet", 0.85, lambda m: f"I am {m['o'].lower()}"),
    _r(
        rf"\b(?:my|I have|I have got|I suffer from|diagnosed with|I live with|I am on \w+ for) (?P<o>{_CONDITIONS})\b",
        None,
        0.8,
        lambda m: f"I have {m['o']}",
    ),
    _r(rf"\bI am on (?P<o>{_MEDICINES})\b", None, 0.75, lambda m: f"I take {m['o']}"),
    # Going to, starting at, accepted at a school: what one studies where.
    _r(
        rf"\bI am (?:now |officially )?(?:going|headed|heading|off|moving|transferring|switching) to (?:the )?"
        rf"(?P<o>{_CAP}(?: (?:of|de|{_CAP}))*? (?:University|College|Academy|Institute|School)"
        rf"(?: of {_CAP}(?: {_CAP})?)?|(?:University|College) of {_CAP}(?: {_CAP})?)",
        "studies",
        0.75,
        lambda m: f"I study at {m['o']}",
        dated=True,  # "I'm going to" a school is a decision taken
    ),
    _r(
        rf"\bI (?:got into|was accepted (?:at|to|into)|start(?:ed)? (?:classes )?at) (?:the )?"
        rf"(?P<o>(?:University|College) of {_CAP}(?: {_CAP})?|{_CAP}(?: {_CAP})*? (?:University|College))",
        "studies",
        0.7,
        lambda m: f"I study at {m['o']}",
    ),
    _r(rf"\bmy birthday(?: is|,| on| falls on)? (?P<o>{_DATE})", "birthday", 0.85, _birthday),
    _r(
        rf"\b(?:changed|moved|rescheduled|pushed|switched|postponed) (?:my |the |our )?(?:[\w-]+ ){{0,2}}{_EVENTS}"
        rf"(?P<o>) to (?P<when>{_DATE})",
        _PLAN_SLOT,
        0.75,
        _plan,
        dated=True,
    ),
    _r(
        rf"\bI (?:have )?(?:always )?support(?:ed)? (?P<o>{_CAP}(?: {_CAP}){{0,2}})",
        "team",
        0.7,
        lambda m: f"I support {m['o']}",
    ),
    _r(
        rf"\bI {_ADV}(?:knit|crochet|paint|sew|garden|surf|ski|snowboard|climb|hike|swim|cycle|skate|dance|sing|draw|"
        rf"bake|meditate|volunteer|run)(?: [\w-]+){{0,3}}? (?P<o>every (?:day|evening|morning|night|week|weekend|"
        rf"sunday|saturday|monday|tuesday|wednesday|thursday|friday)|on (?:weekends|sundays|saturdays)|daily)\b",
        None,
        0.6,
        lambda m: m.group(0).strip(),
    ),
]
