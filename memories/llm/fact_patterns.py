"""The vocabulary of the offline fact rules (``memories.llm.fact_rules``, ``memories.llm.fact_mentions``):
regular-expression fragments (where an object ends, a name, kin, pets, diets, dates...), the ``Rule``
type and ``rule`` that makes one, and the slot and statement makers both lists of rules use.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "ADV",
    "CAP",
    "CAR_BRANDS",
    "CONDITIONS",
    "DATE",
    "DIETS",
    "EVENTS",
    "KIN",
    "MEDICINES",
    "NAME",
    "NAMED",
    "OBJ",
    "OCCUPATIONS",
    "PARTNER",
    "PARTNERS",
    "PET_SLOT",
    "PETS",
    "PLAN_SLOT",
    "plan_statement",
    "RELATIVE",
    "ROLE",
    "Rule",
    "rule",
    "STOP",
]

# Where an object ends: a clause break, or a word that starts another clause.
STOP = (
    r"(?=$|\s*[,;:!?()\u2014\u2013]|\s+(?:but|so|because|cause|since|though|although|which|who|while|when|where|"
    r"until|unless|if|whereas|and (?:the|it|that|this|he|she|they|we|I|my|his|her|our|their|its|there|so|then|now|"
    r"am|was|have|had|live|work|love|like|got|moved|started|also)|plus|except)\b)"
)
OBJ = rf"(?P<o>[^,;:!?()\u2014\u2013]+?){STOP}"
NAME = r"(?P<name>(?-i:[A-Z][\w'-]*(?: (?:[A-Z][\w'-]*)){0,2}))"
ADV = (
    r"(?:(?:also|now|currently|still|just|recently|finally|actually|really|officially|already|even|basically|"
    r"mostly|kind of|sort of|happily|proudly)\s+)*"
)
KIN = (
    r"(?P<kin>sister|brother|mom|mum|mother|dad|father|son|daughter|wife|husband|partner|boyfriend|girlfriend|"
    r"fianc[ée]e?|grandma|grandmother|grandpa|grandfather|grandson|granddaughter|aunt|uncle|cousin|niece|nephew|"
    r"best friend|twin|stepson|stepdaughter|stepmom|stepdad|parents|kids|children|baby|oldest|youngest|eldest)"
)
PARTNER = r"(?P<kin>wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|spouse)"
PETS = (
    r"(?P<pet>dog|puppy|pup|cat|kitten|guinea pig|hamster|rabbit|bunny|parrot|budgie|bird|fish|goldfish|turtle|"
    r"tortoise|horse|pony|snake|lizard|gecko|ferret|chinchilla|hedgehog|rat|pig|goat)"
)
DIETS = (
    r"(?P<o>vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|kosher|halal|gluten[- ]free|"
    r"lactose[- ]intolerant|plant[- ]based|dairy[- ]free)"
)
# Occupations by name: "I am a nurse" fills the job slot; other "I am a <-er/-ist>" do not ("a runner").
OCCUPATIONS = (
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
ROLE = r"(?:[a-z-]+(?:er|or|ist|ian|eur))"
DATE = (
    r"(?:on |for |at )?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|(?:the )?\d{1,2}(?:st|nd|rd|th)?"
    r"(?: of)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|"
    r"oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?\b|\d{1,2}/\d{1,2}(?:/\d{2,4})?)"
)
EVENTS = (
    r"(?P<event>flight|appointment|exam|test|interview|surgery|operation|wedding|trip|vacation|holiday|party|"
    r"concert|match|game|race|marathon|triathlon|tournament|competition|recital|meeting|presentation|deadline|"
    r"check-?up|graduation|ceremony|procedure|scan|"
    r"conference|move|defen[cs]e|audition|dentist|doctor|visit)"
)

RELATIVE = (
    r"(?P<kin>wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|sister|brother|son|daughter|mom|mum|mother|"
    r"dad|father|grandson|granddaughter|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|niece|nephew|"
    r"stepson|stepdaughter|twin|best friend)"
)
# A capitalised word that is not a sentence opener or a weekday: a name.
CAP = (
    r"(?-i:(?!(?:I|The|A|An|And|But|So|Or|My|He|She|It|We|They|You|What|Whats|Who|How|Why|When|Where|Which|That|"
    r"This|Yes|No|Oh|Ok|Okay|Thanks|Hi|Hello|Hey|Sorry|Please|Lol|Haha|Just|Also|Still|Now|Then|Today|Tomorrow|"
    r"Yesterday|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Is|Was|Has|Had|Will|Can|Did|Does)\b)"
    r"[A-Z][a-z\u00c0-\u017f'-]+)"
)
NAMED = rf"(?P<name>{CAP})"
CONDITIONS = (
    r"(?:type [12] )?diabetes|asthma|hay fever|celiac disease|coeliac disease|celiac|coeliac|adhd|autism|epilepsy|"
    r"arthritis|migraines?|gout|hypertension|high blood pressure|eczema|psoriasis|insomnia|atrial fibrillation|afib|"
    r"ibs|crohn's|lupus|anxiety|depression|dyslexia|sleep apnea|tinnitus|a bad back|a heart condition|"
    r"multiple sclerosis|fibromyalgia|endometriosis|pcos|thyroid problems|hypothyroidism|anemia|anaemia"
)
MEDICINES = (
    r"warfarin|insulin|metformin|levothyroxine|statins|blood thinners|antidepressants|beta blockers|an inhaler|"
    r"the pill|chemo|chemotherapy|dialysis|lithium|methotrexate|prednisone|steroids"
)
PARTNERS = frozenset("wife husband partner boyfriend girlfriend fiance fiancé fiancee fiancée".split())
CAR_BRANDS = (
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


def rule(
    pattern: str,
    slot: str | Callable[[re.Match[str]], str | None] | None,
    confidence: float,
    statement: Callable[[re.Match[str]], str] | None = None,
    **flags: bool,
) -> Rule:
    """A ``Rule`` of ``pattern`` (matched case aside) and ``slot``, a fixed name or made from the match."""
    slot_of = slot if callable(slot) else (lambda _m, s=slot: s)
    return Rule(re.compile(pattern, re.IGNORECASE), slot_of, confidence, statement, **flags)


def plan_statement(m: re.Match[str]) -> str:
    when = m["when"].strip()
    on = "" if re.match(r"(?:on|for|at)\b", when, re.I) else "on "
    return f"my {m['event']}{m['o'] or ''} is {on}{when}"


def PET_SLOT(m: re.Match[str]) -> str:  # a rule's slot, named like the other constants
    return f"pet:{m['name'].lower()}"


def PLAN_SLOT(m: re.Match[str]) -> str:
    return f"plan:{m['event'].lower()}"
