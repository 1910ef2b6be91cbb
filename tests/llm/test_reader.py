"""The offline reader: what a user's turn says about them, in any words, and what a bot's turn does."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from memories.llm import get_embedder
from memories.llm.reader import read_facts, read_turns, slot_parts
from memories.llm.reader.heads import reader_heads
from memories.llm.reader.syntax import clauses, statement, subject_of
from memories.llm.reader.training import ACTS, FACT_KINDS, NOT_FACTS, examples_digest, load_examples


def _embed(texts: list[str]) -> np.ndarray:
    return np.asarray(get_embedder().embed(texts).vectors, dtype=np.float32)


def _facts(text: str, speaker: str = "user"):
    return read_facts([(1, f"{speaker}: {text}")], embed=_embed)


def test_the_shipped_classifiers_were_trained_on_the_examples_in_the_repository():
    heads = reader_heads()
    assert heads.examples_digest == examples_digest(), "examples changed: run `manage.py train_reader`"
    assert heads.model_name == get_embedder().model_name
    examples = load_examples()
    per_class = Counter(e.kind or e.act for e in examples)
    assert min(per_class[c] for c in (*FACT_KINDS, *NOT_FACTS, *ACTS)) >= 100, per_class


@pytest.mark.parametrize(
    ("said", "kind", "value"),
    [
        ("I work as a nurse at St Mary's hospital.", "job", "nurse"),
        ("Nowadays I earn my living fixing bikes at a shop in Utrecht", "job", "bikes"),
        ("My new place is a loft in Montreal", "residence", "Montreal"),
        ("I'm allergic to peanuts.", "allergy", "peanuts"),
        ("Peanuts make me break out in hives", "allergy", "Peanuts"),
        ("I'm thirty-four", "age", "thirty-four"),
        ("My flight to Lisbon is on May 14th.", "plan", "May 14th"),
        ("Career-wise, I'm a dental hygienist", "job", "dental hygienist"),
    ],
)
def test_a_lasting_statement_in_ordinary_words_becomes_a_fact_of_its_kind(said, kind, value):
    facts = _facts(said)
    assert [slot_parts(f.slot)[1] for f in facts] == [kind]
    assert value in facts[0].text
    assert facts[0].text.startswith(("The user", "Peanuts make the user"))
    assert not facts[0].ends


def test_a_fact_names_its_speaker_and_is_the_clause_in_the_third_person():
    (fact,) = _facts("I can't stand cilantro", speaker="Aiko")
    assert fact.text == "Aiko can't stand cilantro."


@pytest.mark.parametrize(
    ("said", "slot", "not_said"),
    [
        ("I quit my job at the bakery.", "job", "works"),
        ("We had to say goodbye to our dog Rufus last week.", "pet:rufus", "has a dog"),
        ("Tom and I called it quits after six years", "partner", "is with"),
    ],
)
def test_an_ending_fills_the_slot_and_never_asserts_the_value(said, slot, not_said):
    (fact,) = [f for f in _facts(said) if f.slot == slot]
    assert fact.ends
    assert not_said not in fact.text


def test_a_change_of_job_in_one_turn_is_read_as_the_end_then_the_new_value():
    facts = _facts("I left the hospital. I'm now working as a data analyst at Spotify.")
    assert [(f.slot, f.ends) for f in facts] == [("job", True), ("job", False)]
    assert "Spotify" in facts[-1].text


def test_a_relatives_fact_is_theirs_and_their_name_is_known():
    facts = _facts("My sister Priya just got a job as an architect.")
    assert {f.slot for f in facts} == {"sister priya:job", "sister priya:name"}
    assert "The user's sister is named Priya." in [f.text for f in facts]


@pytest.mark.parametrize(
    "said",
    [
        "I wish I lived in Lisbon.",
        "My coworker just moved to Berlin.",
        "Is it bad to give dogs grapes?",
        "I'm so tired today.",
        "Where do I work?",
    ],
)
def test_wishes_questions_passing_moments_and_other_peoples_news_raise_nothing(said):
    assert _facts(said) == []


@pytest.mark.parametrize(
    ("said", "act"),
    [
        ("Sure, I'll remind you.", "backchannel"),
        ("Great! Biscuit sounds adorable.", "backchannel"),
        ("Oh no, I'm sorry to hear that.", "backchannel"),
        ("Where do I work?", "question"),
        ("Do you remember which race I'm doing? Testing you.", "question"),
        ("The Louvre is closed on Tuesdays.", "statement"),
    ],
)
def test_a_turns_dialogue_act(said, act):
    assert read_turns([(1, None, said)], embed=_embed, facts=False)[0].act == act


def test_a_user_turn_that_tells_something_and_asks_is_a_statement():
    (turn,) = read_turns([(1, None, "I'm allergic to nuts, any dessert ideas?")], embed=_embed)
    assert turn.act == "statement"


def test_a_turn_about_a_slot_is_marked_even_as_a_question_is_not():
    told, asked = read_turns([(1, None, "I'm a dental hygienist now."), (2, None, "Where do I work?")], embed=_embed)
    assert (told.slot, asked.slot) == ("job", "")


def test_the_sentences_vectors_the_worker_made_are_reused():
    said = "I moved to Lisbon last month."
    calls = []

    def embed(texts):
        calls.append(texts)
        return _embed(texts)

    read_turns([(1, "Ana", said)], embed=embed, vectors={f"Ana: {said}": _embed([f"Ana: {said}"])[0]})
    assert calls == []


@pytest.mark.parametrize(
    ("clause", "kind", "kin", "text"),
    [
        ("Oh btw, I moved to Lisbon last month", "self", None, "The user moved to Lisbon last month."),
        ("Got laid off last week", "self", None, "The user got laid off last week."),
        ("We took in a stray tabby", "self", None, "The user and others took in a stray tabby."),
        ("my sister Priya got a job", "relative", "sister", "The user's sister Priya got a job."),
        ("Dad retired from the post office", "relative", "dad", "The user's dad retired from the post office."),
        ("my son's coach is a firefighter", "other", None, None),
        ("my friend Tom moved to Berlin", "other", None, None),
    ],
)
def test_who_a_clause_is_about_and_how_it_reads_in_the_third_person(clause, kind, kin, text):
    subject = subject_of(clause)
    assert (subject.kind, subject.kin) == (kind, kin)
    if text:
        assert statement(clause, subject=subject, speaker="The user") == text


def test_he_or_she_is_the_relative_named_before_when_they_fit():
    husband = subject_of("My husband Idris works nights")
    assert subject_of("He's a paramedic", relative=husband).name == "Idris"
    assert subject_of("She's a paramedic", relative=husband).kind == "other"
    assert statement("He's a paramedic", subject=subject_of("He's a paramedic", relative=husband), speaker="Mia") == (
        "Mia's husband Idris is a paramedic."
    )


def test_a_sentence_is_cut_where_a_new_subject_starts_not_inside_tom_and_i():
    assert clauses("I quit the hospital and I work at Rakuten now") == ["I quit the hospital", "I work at Rakuten now"]
    assert clauses("Tom and I called it quits after six years") == ["Tom and I called it quits after six years"]
