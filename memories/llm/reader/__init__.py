"""The offline reader: what a user's turn says about them, by meaning, not by phrasing.

Each sentence of a turn is embedded with the service's own model (the worker passes the vectors it
made for the turn, so a sentence is embedded once) and read by trained classifiers
(``memories.llm.reader.heads``): its dialogue act, and for each clause (``syntax.clauses``) whether
it states something lasting about the speaker or a relative of theirs (``stance``), what about
(``kind``: job, residence, partner, pet, plan...) and whether it ``ends`` a value (quit, moved out,
split up, passed away, cancelled). Who a clause is about is syntax (``syntax.subject_of``).

A clause read as a fact becomes one: the clause itself in the third person (``syntax.statement``),
with a *slot* when the speaker has one value of its kind at a time:

- ``job``, ``studies``, ``residence``, ``origin``, ``partner``, ``name``, ``age``, ``birthday``,
  ``diet``: one value at a time, the slot is the kind ("job"); a relative's is theirs ("sister
  priya:job"), a partner's relationship the speaker's own ("partner");
- ``pet``: per named pet, its facts matched by meaning ("pet:rufus:..."), and one that ends holding for
  all of them ("pet:rufus");
- ``plan``, ``hobby``, ``preference``, ``health``, ``allergy``, ``possession``, ``goal``, ``language``,
  ``family`` (``MEANING_SLOTS``): the bare kind; the knowledge service joins the fact to the slot of
  the user's fact of that kind nearest it in meaning, when near enough, so "the trip got moved to
  June 2nd" replaces "my flight to Lisbon is on May 14th" but not "dentist on Friday";
- ``event``, ``trait``: no slot, they accumulate.

A fact that ends a value fills the same slot, so the value stops being current even when no new
one is said; its text says what ended ("The user had to say goodbye to their dog Rufus."), never
the value as if it held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from memories.llm.base import Embedder, Fact
from memories.llm.reader import syntax
from memories.llm.reader.heads import Head, reader_heads
from memories.llm.reader.syntax import PARTNER_KIN, Subject

__all__ = [
    "FACT_THRESHOLD",
    "MENTION_THRESHOLD",
    "MEANING_SLOTS",
    "ONE_VALUE_KINDS",
    "Reading",
    "TurnReading",
    "sentence_acts",
    "read_facts",
    "read_turns",
    "reader_embedding",
    "slot_parts",
]

# A clause is a fact when the stance head gives "fact" at least this probability; it speaks of a slot (a
# value may have changed, ``TurnReading.slot``) from this one.
FACT_THRESHOLD = 0.6
MENTION_THRESHOLD = 0.25
# A fact takes a one-value slot outright (replacing what it held) when the kind head gives its kind at
# least this probability; a turn speaks of a slot (``TurnReading.slot``) only then too.
SURE_KIND = 0.8
# Slots are stored in columns of this many characters; a longer one (a very long name) is left out.
MAX_SLOT_CHARS = 100
# The confidence of a fact that syntax alone finds: a relative's name ("my husband Idris").
NAMED_RELATIVE_CONFIDENCE = 0.8
# Kinds of which a person has one value at a time.
ONE_VALUE_KINDS = frozenset("job studies residence origin partner name age birthday diet".split())
# Kinds whose facts share a slot when they speak of the same thing (decided by meaning, when stored).
MEANING_SLOTS = frozenset("plan hobby preference health allergy possession goal language family pet".split())

Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Reading:
    """One clause of a user's turn as read: ``stance`` and its ``fact_probability``; for a fact, its
    ``kind`` (and probability), whether it ``ends`` a value, its ``text`` in the third person and its
    ``slot`` (``None``: it accumulates)."""

    message_id: int
    clause: str
    subject: Subject
    stance: str
    fact_probability: float
    kind: str
    kind_probability: float
    ends: bool
    text: str
    slot: str | None
    by_meaning: bool

    @property
    def is_fact(self) -> bool:
        """Whether the clause states something lasting about the speaker or one of their relatives."""
        return (
            self.subject.kind in ("self", "relative")
            and self.fact_probability >= FACT_THRESHOLD
            and not self.clause.rstrip().endswith("?")
        )

    def fact(self) -> Fact:
        """This reading as a ``Fact`` of its message, with the fact probability as its confidence."""
        return Fact(
            text=self.text,
            message_ids=[self.message_id],
            slot=self.slot,
            confidence=round(self.fact_probability, 3),
            ends=self.ends,
            by_meaning=self.by_meaning,
        )


@dataclass(frozen=True)
class TurnReading:
    """A turn's dialogue act (``statement``, ``question`` or ``backchannel``) and its clauses' readings."""

    message_id: int
    act: str
    readings: tuple[Reading, ...]

    @property
    def slot(self) -> str:
        """The one-value slot ("job", "sister priya:residence") the turn speaks of most surely, or "": a clause
        about the speaker or a relative, of a kind they have one of at a time, read as a fact with at least
        ``MENTION_THRESHOLD`` probability (a fact or not: a change may be told too loosely to raise one)."""
        told = [
            r
            for r in self.readings
            if r.slot
            and not r.by_meaning
            and r.kind in ONE_VALUE_KINDS
            and r.subject.kind in ("self", "relative")
            and r.stance not in ("question", "wish")
            and not r.clause.rstrip().endswith("?")
            and r.fact_probability >= MENTION_THRESHOLD
            and r.kind_probability >= SURE_KIND
        ]
        return max(told, key=lambda r: r.fact_probability).slot if told else ""


def _slot(kind: str, subject: Subject, clause: str, *, ends: bool, sure: bool) -> tuple[str | None, bool]:
    """A fact's slot, and whether it is a kind to be matched by meaning when stored (``Fact.by_meaning``).

    A one-value kind read without being ``sure`` of it is matched by meaning too: it replaces only a near
    statement, not whatever the slot holds ("my old commute in Toronto" is no new home)."""
    by_meaning = kind not in ONE_VALUE_KINDS or not sure
    if subject.kind == "relative" and subject.kin:
        if kind == "partner" and subject.kin in PARTNER_KIN:
            return "partner", not sure
        who = subject.kin + (f" {subject.name.lower()}" if subject.name else "")
        if kind in ONE_VALUE_KINDS or kind in MEANING_SLOTS:
            return f"{who}:{kind}", by_meaning
        return None, False
    if kind == "pet" and (names := syntax.names_in(clause)):
        # A pet's facts share its slot by meaning; one that ends holds for all of them.
        return f"pet:{names[-1].lower()}", not ends
    if kind in ONE_VALUE_KINDS or kind in MEANING_SLOTS:
        return kind, by_meaning
    return None, False


def _vectors(keys: Sequence[str], *, embed: Embed, known: Mapping[str, Sequence[float]] | None) -> np.ndarray:
    """One vector per key: from ``known`` when it has it, the rest embedded in one call."""
    if not keys:
        return np.empty((0, 0), dtype=np.float32)
    known = known or {}
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    made = dict(zip(missing, embed(missing), strict=True)) if missing else {}
    return np.asarray([known[k] if k in known else made[k] for k in keys], dtype=np.float32).reshape(len(keys), -1)


def _turn_act(acts: Sequence[str], readings: Sequence[Reading], *, read: bool) -> str:
    """A turn's act from its sentences' (``acts``): a backchannel when all are; a question when it asks and
    tells nothing: for a user's turn read for facts (``read``), when it asks and no clause is a fact ("Do
    you remember which choir I sing in? My wife bet you don't."), for another, when every sentence asks."""
    said = [a for a in acts if a != "backchannel"]
    if not acts:
        return "statement"
    if not said:
        return "backchannel"
    asks = "question" in said if read else all(a == "question" for a in said)
    return "question" if asks and not any(r.is_fact for r in readings) else "statement"


def read_turns(
    turns: Sequence[tuple[int, str | None, str]],
    *,
    embed: Embed,
    vectors: Mapping[str, Sequence[float]] | None = None,
    speaker_subject: str = "The user",
    facts: bool = True,
) -> list[TurnReading]:
    """Read ``turns``: each ``(message id, named speaker or None, text)``.

    Args:
        embed: texts -> unit vectors of the service's embedding model, shape ``(n, dimensions)``.
        vectors: vectors already made, by the text embedded: a sentence as the worker embeds it
            (``"Ana: I moved to Lisbon."`` for a named speaker, the sentence alone otherwise).
        speaker_subject: how a fact names a speaker the turn does not name.
        facts: read clauses for facts (a user's turns); ``False``: dialogue acts only (an assistant's).

    Returns:
        One ``TurnReading`` per turn, in order; a turn's readings in the order said.

    Raises:
        ModelBackendError: ``embed`` failed.
    """
    heads = reader_heads()
    plan: list[tuple[int, str, int, list[str]]] = []  # per turn: its id, prefix, sentences and clauses
    sentence_keys: list[str] = []
    sentence_texts: list[str] = []
    clause_keys: list[str] = []
    for message_id, speaker, text in turns:
        prefix = f"{speaker}: " if speaker else ""
        sentences = syntax.split_sentences(text)
        clauses: list[str] = []
        for sentence in sentences:
            sentence_keys.append(prefix + sentence)
            sentence_texts.append(sentence)
            parts = syntax.clauses(syntax.normalised(sentence)) if facts else []
            clauses += [prefix + (sentence if len(parts) == 1 else part) for part in parts]
        clause_keys += clauses
        plan.append((message_id, prefix, len(sentences), clauses))
    keys = list(dict.fromkeys(sentence_keys + clause_keys))
    by_key = dict(zip(keys, _vectors(keys, embed=embed, known=vectors), strict=True))
    acts = _argmax(heads.act, np.asarray([by_key[k] for k in sentence_keys]), sentence_texts)
    # A clause read as no fact may say one before a tail ("I live in Austin, if that helps"): its shortened
    # forms are embedded and read too, unless it is a wish or hypothetical, which holds for the whole clause.
    shorter: dict[str, list[str]] = {}
    if clause_keys:
        prefixes = {key: prefix for _, prefix, _, clauses in plan for key in clauses}
        texts = [key[len(prefixes[key]) :] for key in clause_keys]
        stance = heads.stance.probabilities(np.asarray([by_key[k] for k in clause_keys]), heads.present(texts))
        fact, wish = heads.stance.classes.index("fact"), heads.stance.classes.index("wish")
        for key, text, row in zip(clause_keys, texts, stance, strict=True):
            if row[fact] < FACT_THRESHOLD and row[wish] <= row[fact]:
                shorter[key] = [prefixes[key] + short for short in syntax.shortened(syntax.normalised(text))]
        more = list(dict.fromkeys(k for ks in shorter.values() for k in ks if k not in by_key))
        by_key |= dict(zip(more, _vectors(more, embed=embed, known=vectors), strict=True))
    results: list[TurnReading] = []
    position = 0
    for message_id, prefix, count, clauses in plan:
        turn_acts = acts[position : position + count]
        position += count
        readings = []
        if clauses:
            candidates = [[(k[len(prefix) :], by_key[k]) for k in [key, *shorter.get(key, [])]] for key in clauses]
            readings = _read_clauses(message_id, candidates, subject_name=prefix[:-2] or speaker_subject)
        results.append(
            TurnReading(message_id=message_id, act=_turn_act(turn_acts, readings, read=facts), readings=tuple(readings))
        )
    return results


@cache
def _shipped_embedder() -> Embedder:
    from memories.llm.local import LocalEmbedder

    return LocalEmbedder.from_settings(model=LocalEmbedder.model_name)


def reader_embedding(embedder: Embedder) -> tuple[Embed, bool]:
    """How the reader embeds a text, and whether ``embedder``'s own vectors are what its classifiers read:
    they are when it is the model they were trained on; otherwise the reader embeds with that model, which
    ships with the service (so any configured embedding model works, at the cost of a second embedding)."""
    reuse = embedder.model_name == reader_heads().model_name
    model = embedder if reuse else _shipped_embedder()
    return (lambda texts: np.asarray(model.embed(texts).vectors, dtype=np.float32)), reuse


def sentence_acts(vectors: np.ndarray, texts: Sequence[str]) -> list[str]:
    """The dialogue act of each sentence of ``texts`` (as said, no speaker), whose vectors (``(n, dimensions)``,
    of the shipped model) are given."""
    return _argmax(reader_heads().act, vectors, texts)


def _argmax(head: Head, vectors: np.ndarray, texts: Sequence[str]) -> list[str]:
    if not len(vectors):
        return []
    return [head.classes[i] for i in head.probabilities(vectors, reader_heads().present(texts)).argmax(axis=1)]


def _read_clauses(message_id: int, clauses: list[list[tuple[str, np.ndarray]]], *, subject_name: str) -> list[Reading]:
    """Read each clause (given as its candidates: the clause, then its shortened forms, each with its vector):
    the longest candidate read as a fact is the fact; without one, the candidate most like one is reported."""
    heads = reader_heads()
    matrix = np.stack([v for candidates in clauses for _, v in candidates])
    present = heads.present([text for candidates in clauses for text, _ in candidates])
    stance = heads.stance.probabilities(matrix, present)
    kind = heads.kind.probabilities(matrix, present)
    change = heads.change.probabilities(matrix, present)
    fact_column = heads.stance.classes.index("fact")
    ends_column = heads.change.classes.index("ends")
    other_column = heads.stance.classes.index("other_person")
    wish_column = heads.stance.classes.index("wish")
    readings = []
    relative: Subject | None = None
    row = 0
    for candidates in clauses:
        rows = range(row, row + len(candidates))
        row += len(candidates)
        subject = syntax.subject_of(candidates[0][0], relative=relative)
        if subject.kind == "relative":
            relative = subject
            # Whose news it is, syntax has told: a relative's, not someone else's.
            stance[rows.start : rows.stop, other_column] = 0.0
            stance[rows.start : rows.stop] /= stance[rows.start : rows.stop].sum(axis=1, keepdims=True)
        if stance[rows.start, wish_column] > stance[rows.start, fact_column]:
            rows = range(rows.start, rows.start + 1)  # a wish or a hypothetical holds for the whole clause
        facts = [i for i in rows if stance[i, fact_column] >= FACT_THRESHOLD]
        i = facts[0] if facts else max(rows, key=lambda r: stance[r, fact_column])
        clause = candidates[i - rows.start][0]
        kind_index = int(kind[i].argmax())
        kind_name = heads.kind.classes[kind_index]
        ends = bool(change[i, ends_column] >= 0.5)
        sure = float(kind[i, kind_index]) >= SURE_KIND
        slot, by_meaning = _slot(kind_name, subject, clause, ends=ends, sure=sure)
        if slot and len(slot) > MAX_SLOT_CHARS:
            slot, by_meaning = None, False
        readings.append(
            Reading(
                message_id=message_id,
                clause=clause,
                subject=subject,
                stance=heads.stance.classes[int(stance[i].argmax())],
                fact_probability=float(stance[i, fact_column]),
                kind=kind_name,
                kind_probability=float(kind[i, kind_index]),
                ends=ends,
                text=syntax.statement(clause, subject=subject, speaker=subject_name),
                slot=slot,
                by_meaning=by_meaning,
            )
        )
        for kin, name in syntax.named_relatives(candidates[0][0]):
            readings.append(_named_relative(message_id, kin, name, speaker=subject_name))
    return readings


def _named_relative(message_id: int, kin: str, name: str, *, speaker: str) -> Reading:
    """The fact that a relative has a name ("my partner Jules" -> "The user's partner is named Jules.")."""
    partner = kin in PARTNER_KIN
    return Reading(
        message_id=message_id,
        clause=f"my {kin} {name}",
        subject=Subject("self"),
        stance="fact",
        fact_probability=NAMED_RELATIVE_CONFIDENCE,
        kind="partner" if partner else "family",
        kind_probability=1.0,
        ends=False,
        text=f"{speaker}'s {kin} is named {name}.",
        slot="partner" if partner else f"{kin} {name.lower()}:name",
        by_meaning=False,
    )


def read_facts(
    messages: Sequence[tuple[int, str]], *, embed: Embed, vectors: Mapping[str, Sequence[float]] | None = None
) -> list[Fact]:
    """The facts of a user's turns given as ``(id, "Speaker: text")`` (``ChatModel.extract_facts``'s form; a
    speaker that is only the role, ``user``, is "The user"), in the order said."""
    turns = []
    for message_id, line in messages:
        speaker, _, text = line.partition(": ") if ": " in line else ("", "", line)
        named = speaker.strip() if speaker.strip() and speaker.strip().lower() != "user" else None
        turns.append((message_id, named, text))
    found: list[Fact] = []
    for turn in read_turns(turns, embed=embed, vectors=vectors):
        for reading in turn.readings:
            if reading.is_fact and (fact := reading.fact()) not in found:
                found.append(fact)
    return found


def slot_parts(slot: str | None) -> tuple[str | None, str | None]:
    """``(whose, kind)`` of a slot: ``"job"`` -> ``(None, "job")``, ``"pet:rufus"`` -> ``(None, "pet")``,
    ``"sister priya:job"`` -> ``("sister priya", "job")``, ``"son:allergy:3f2a"`` -> ``("son", "allergy")``."""
    if not slot:
        return None, None
    head, _, rest = slot.partition(":")
    if not rest or head in ONE_VALUE_KINDS or head in MEANING_SLOTS:
        return None, head
    return head, rest.partition(":")[0]
