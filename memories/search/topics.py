"""Topics: which of a user's facts answer a request that does not share their words.

"What do I do for a living?" and "I am a paralegal at Henson & Ruiz." have few words and little
meaning in common for an embedding model, yet the fact is the answer; "Any dinner idea for me?"
names no fact, yet a bot needs to know that the user is vegetarian. A topic is a kind of request
(``asked``: how people ask about it) and the facts that answer it: those of some slots (``slots``,
by a slot's first word: ``job``; ``pet`` for ``pet:rex``; ``sister`` for ``sister aiko:residence``),
or, for requests for advice, those most like ``known`` (what people say about themselves that bears
on it).

A request asks about the topic whose examples' mean embedding it is most similar to, when that is
a topic and not the examples of other requests, and by at least ``TOPIC_MARGIN`` (a request for
advice) or ``PERSONAL_TOPIC_MARGIN`` (a question about the user) (the
nearest-centroid classifier: Manning, Raghavan & Schütze, "Introduction to Information Retrieval",
2008, section 14.2, "Rocchio classification"); a request about the user themselves must speak of
them ("my", "I"). A fact bears on an advice topic when it is nearer that topic's ``known`` examples
than any other topic's and than the examples of other facts.

A request is also answered by what the user said about its topic in their own words, which rarely
shares words or much meaning with it ("Two weeks at the new place now" for "where do I work?"): the
topic's ``said`` examples (how people tell it), or for advice its ``known`` ones, stand in for the
answer, and the user's statements nearest their mean, and nearer it than any other class's, are
searched for (``telling``; a fixed form of HyDE: Gao, Ma, Lin & Callan, "Precise Zero-Shot Dense
Retrieval without Relevance Labels", 2022, which embeds a written answer, not the question).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from memories.llm import get_embedder
from memories.llm.reader.syntax import KIN, PARTNER_KIN

__all__ = [
    "PARTNERS",
    "PERSONAL_TOPIC_MARGIN",
    "RELATIVES",
    "TOPICS",
    "TOPIC_MARGIN",
    "Topic",
    "fact_classes",
    "Telling",
    "telling",
    "topic_asked",
]

# Cosine similarity by which a request must be nearer its topic than the examples of other requests, with
# all-MiniLM-L6-v2: a request for advice 0.25 (a meal idea is 0.3 and more nearer, a question that only
# touches food, "a wine stain on the carpet", less); a question about oneself, which must also say "my"
# or "I", 0.17 ("remind me what I do for work" 0.2, "why do we have leap years?" 0.15).
TOPIC_MARGIN = 0.25
PERSONAL_TOPIC_MARGIN = 0.17
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|me|my|mine|myself|we|our|us)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Topic:
    """``asked``: requests of this kind; the facts that answer them: those of ``slots``, or those most like
    ``known`` (or like the ``known`` of the advice topics named in ``also``), or, for a topic of neither,
    those most like ``said``; ``personal``: a request must speak of the user to ask about it; ``said``: how
    people tell it in conversation (the user's statements nearest these answer it too); ``relatives``: a
    relative's facts hold it too ("my brother's job"), so a request naming one asks about theirs."""

    name: str
    asked: tuple[str, ...]
    slots: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    personal: bool = True
    said: tuple[str, ...] = ()
    relatives: bool = False


# Slot heads of what the user says of a partner: "partner" (who it is), "husband paweł:job"...
PARTNERS = tuple(sorted(PARTNER_KIN))
_FAMILY = tuple(sorted(set(KIN) - PARTNER_KIN))
RELATIVES = PARTNERS + _FAMILY

TOPICS: tuple[Topic, ...] = (
    Topic(
        "job",
        ("What is my job?", "What do I do for a living?", "Where do I work?", "Who do I work for?",
         "What is my profession?", "Which company am I at now?"),
        slots=("job",),
        relatives=True,
        said=("I work as a nurse at the city hospital.", "I just started a new job at a software company.",
              "My first week in the new role is done.", "I'm a teacher at a primary school.",
              "I got hired by a bank downtown.", "I handed in my notice and joined a startup."),
    ),
    Topic(
        "home",
        ("Where do I live?", "Which city am I living in now?", "What neighbourhood do I live in?",
         "Where is my home these days?"),
        slots=("residence",),
        relatives=True,
        said=("I live in a flat in Lisbon.", "We moved to a new apartment across town last month.",
              "We finally settled into our new house.", "I've been living in the city centre for a year.",
              "We bought a place near the lake and moved in."),
    ),
    Topic(
        "origin",
        ("Where am I from originally?", "Where did I grow up?", "What is my hometown?"),
        slots=("origin",),
        said=("I'm originally from Porto.", "I grew up in a small town by the sea.", "My hometown is Leeds.",
              "That's where I was born and raised."),
    ),
    Topic(
        "partner",
        ("Who is my partner?", "What is my wife's name?", "What is my husband's name?", "Who am I dating?",
         "What is my boyfriend's name?", "What is my girlfriend called?", "Am I married?"),
        slots=PARTNERS,
        relatives=True,
        said=("My boyfriend is called Tom.", "I've been seeing someone new for a few weeks.",
              "My wife and I have been married for ten years.", "We started dating in the spring.",
              "My girlfriend moved in with me.", "We split up last month."),
    ),
    Topic(
        "family",
        ("What are my kids called?", "What is my daughter's name?", "How old is my son?", "Where does my sister live?",
         "What does my brother do?", "Where do my parents live?"),
        slots=_FAMILY,
        relatives=True,
        said=("My sister lives in Madrid with her husband.", "My mum is coming to stay with us for a week.",
              "Our son just turned eight.", "My parents still live in the village I grew up in.",
              "My brother is a chef in Glasgow."),
    ),
    Topic(
        "pets",
        ("What is my dog's name?", "What pets do I have?", "What is my cat called?"),
        slots=("pet",),
        said=("We adopted a rescue dog called Max.", "My cat is asleep on my keyboard again.",
              "I brought home a puppy from the shelter."),
    ),
    Topic(
        "name", ("What is my name?", "Do you remember my name?", "What do people call me?"), slots=("name",),
        relatives=True,
    ),
    Topic(
        "age", ("How old am I?", "When is my birthday?", "What is my date of birth?"), slots=("age", "birthday"),
        relatives=True,
    ),
    Topic(
        "studies",
        ("What am I studying?", "What is my major?", "Which university do I go to?", "What course am I taking?"),
        slots=("studies",),
        said=("I'm studying law at the university.", "I changed my major to economics.",
              "My new courses start in the autumn.", "I'm in my second year of a nursing degree.",
              "I enrolled in a master's programme."),
    ),
    Topic("car", ("What car do I drive?", "What is my car?"), slots=("car",)),
    Topic(
        "languages",
        ("What languages do I speak?", "Which language do I know?"),
        slots=("languages",),
        said=("I speak Spanish and a little French.", "My German lessons are on Mondays.",
              "I've been learning Korean for a year."),
    ),
    Topic(
        "plans",
        ("When is my flight?", "When is my appointment?", "When is my exam?", "What plans do I have coming up?",
         "When is my trip?", "What date is my wedding?"),
        slots=("plan",),
        said=("My flight leaves on Friday morning.", "The wedding is on the third of June.",
              "My exam was moved to next week.", "We booked a trip to Spain for August.",
              "The appointment got pushed back to the 14th."),
    ),
    Topic(
        "favourites",
        ("What is my favourite food?", "What is my favourite colour?", "What is my favourite band?"),
        slots=("favourite",),
    ),
    Topic(
        "hobbies",
        ("What are my hobbies?", "What do I do in my free time?", "Which sports do I do?",
         "How do I like to unwind?", "What games am I into?"),
        said=("I play tennis every Sunday morning.", "I've been knitting a scarf in the evenings.",
              "Chess club tonight, I won two games.", "I go climbing with friends twice a week.",
              "I paint watercolours to unwind."),
    ),
    Topic(
        "food",
        ("What should I eat?", "Any ideas for dinner, lunch or breakfast?",
         "Suggest a recipe or a dish for me to cook.", "Which restaurant should I go to, and what should I order?",
         "Ideas for a dessert, a drink or a snack."),
        known=("I am vegetarian.", "I am allergic to peanuts.", "I cannot eat gluten.", "I hate cilantro.",
               "I am lactose intolerant.", "I do not eat pork.", "My favourite food is sushi."),
        also=("health",),  # what one may eat depends on one's health too (diabetes, gout)
        personal=False,
    ),
    Topic(
        "health",
        ("Is this safe for my health?", "Any advice for my pain or my symptoms?", "Can I take this medicine?",
         "Tips for exercising safely.", "I feel sick, what should I do?"),
        known=("I have asthma.", "I take medication every day.", "I have a heart condition.", "I have diabetes.",
               "I get migraines.", "I have high blood pressure.", "I am allergic to pollen and cats."),
        personal=False,
    ),
)  # fmt: skip
# Requests about no topic, and facts of no advice topic: the classes a match must be nearer its topic than.
_OTHER_ASKED = (
    "Tell me a joke.",
    "Why is the sky blue?",
    "Explain how this works.",
    "What is the capital of that country?",
    "Who wrote this book?",
    "How old is the universe?",
    "Can you recommend a movie?",
    "Help me write an email.",
    "What is the weather like today?",
    "How do I fix this?",
)
_OTHER_KNOWN = (
    "I work as a teacher.",
    "I live in Berlin now.",
    "My sister is named Anna.",
    "I drive a Toyota.",
    "My flight is on Friday.",
    "I speak French.",
)
_ADVICE = tuple(t for t in TOPICS if t.known)
_TOLD = tuple(t for t in TOPICS if t.said)
# What people say about other things: a turn nearer these than any topic's ``said`` tells no topic.
_OTHER_SAID = (
    "I had such a long day today.",
    "The weather has been grey and rainy all week.",
    "I'm making pasta for dinner tonight.",
    "We watched a really good film last night.",
    "My back hurts after the gym.",
    "The traffic this morning was terrible.",
    "I finally finished that book.",
)


@cache
def _centroids(model_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit centroids of every topic's ``asked`` examples (other requests last), of every advice topic's
    ``known`` examples (other facts last), and of every ``said`` topic's examples (other statements last,
    ``_TOLD`` order); one embedding call per process and model."""
    groups = [
        *(t.asked for t in TOPICS),
        _OTHER_ASKED,
        *(t.known for t in _ADVICE),
        _OTHER_KNOWN,
        *(t.said for t in _TOLD),
        _OTHER_SAID,
    ]
    texts = [text for group in groups for text in group]
    vectors = np.asarray(get_embedder().embed(texts).vectors, dtype=np.float64)
    centroids, start = [], 0
    for group in groups:
        mean = vectors[start : start + len(group)].mean(axis=0)
        centroids.append(mean / np.linalg.norm(mean))
        start += len(group)
    known_from = len(TOPICS) + 1
    said_from = known_from + len(_ADVICE) + 1
    return (
        np.asarray(centroids[:known_from]),
        np.asarray(centroids[known_from:said_from]),
        np.asarray(centroids[said_from:]),
    )


def topic_asked(query: str, vector: Sequence[float]) -> Topic | None:
    """The topic a request (its text and embedding) asks about, or ``None``: nearest the other requests,
    not nearer its topic than them by ``TOPIC_MARGIN``, or about the user without speaking of them.

    Raises:
        ModelBackendError: embedding the examples failed (the first call of a process only).
    """
    asked, _, _ = _centroids(get_embedder().model_name)
    similarity = asked @ np.asarray(vector, dtype=np.float64)
    nearest = int(np.argmax(similarity))
    if nearest == len(TOPICS):
        return None
    topic = TOPICS[nearest]
    if topic.personal and not _FIRST_PERSON.search(query):
        return None
    margin = PERSONAL_TOPIC_MARGIN if topic.personal else TOPIC_MARGIN
    return topic if similarity[nearest] - similarity[-1] >= margin else None


def fact_classes(topic: Topic) -> tuple[list[list[float]], list[list[float]]]:
    """For an advice topic (with ``known``): the centroids of the facts that bear on it (its own, and those
    of the topics it names in ``also``), to rank a user's facts by; and every fact class's centroid (the
    advice topics', then other facts'), to tell which class a fact is nearest.

    Raises:
        ValueError: ``topic`` answers by slots, not by ``known``.
    """
    if not topic.known:
        raise ValueError(f"The topic {topic.name!r} is answered by slots.")
    _, known, _ = _centroids(get_embedder().model_name)
    names = [t.name for t in _ADVICE]
    wanted = [known[names.index(name)].tolist() for name in (topic.name, *topic.also)]
    return wanted, known.tolist()


@dataclass(frozen=True, eq=False)
class Telling:
    """How a user's own statements tell a topic: ``classes``, unit centroids (rows) a statement is
    classified among by the nearest one, and ``wanted``, the rows that are the topic's."""

    classes: np.ndarray
    wanted: tuple[int, ...]

    @property
    def centroids(self) -> list[list[float]]:
        """The topic's own centroids, to search the user's statements by."""
        return [self.classes[i].tolist() for i in self.wanted]

    def tells(self, vectors: Sequence[Sequence[float]]) -> list[bool]:
        """For each statement embedding: whether its nearest class is one of the topic's."""
        if not len(vectors):
            return []
        nearest = np.argmax(np.asarray(vectors, dtype=np.float64) @ self.classes.T, axis=1)
        return [int(i) in self.wanted for i in nearest]


def telling(topic: Topic) -> Telling | None:
    """How the user tells ``topic`` in their own words: by its ``said`` examples, among every topic's and
    other statements'; for an advice topic, by the ``known`` examples of it and of the topics it names in
    ``also``, among every fact class and other statements. ``None`` for a topic of neither.

    Raises:
        ModelBackendError: embedding the examples failed (the first call of a process only).
    """
    if not topic.said and not topic.known:
        return None
    _, known, said = _centroids(get_embedder().model_name)
    if topic.said:
        return Telling(classes=said, wanted=(_TOLD.index(topic),))
    names = [t.name for t in _ADVICE]
    wanted = tuple(names.index(name) for name in (topic.name, *topic.also))
    return Telling(classes=np.vstack([known, said[-1:]]), wanted=wanted)
