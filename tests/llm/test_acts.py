"""Dialogue acts of the turns people write: what is a memory, what only asks."""

from __future__ import annotations

import pytest

from memories.llm.acts import QUESTION, STATEMENT, dialogue_act


@pytest.mark.parametrize(
    ("said", "act"),
    [
        ("Do you remember which race I'm doing? Testing you.", QUESTION),
        ("Got a question. You remember where I work?", QUESTION),
        ("Do you remember where I work? They fired me today.", STATEMENT),
        ("Do you remember where I live? We moved.", STATEMENT),
        ("Remember what I said about my knee? Surgery is booked for June 3.", STATEMENT),
        ("I'm thinking of quitting my job at Ikea, do you remember what I said about my boss?", STATEMENT),
        ("Do you remember my sister? She just moved to Lyon.", STATEMENT),
        ("Suggest a dessert I could eat myself.", QUESTION),
    ],
)
def test_a_check_of_the_bots_memory_asks_but_news_beside_it_is_a_statement(said, act):
    assert dialogue_act(said) == act
