"""What a turn's vector holds.

A message's vector is the mean of its whole text's and each of its sentences' vectors, so each
thing a turn says counts, past the model's input length too.
"""

from __future__ import annotations

import numpy as np
import pytest

from memories.models import Message
from memories.services.embeddings import MAX_SENTENCE_PARTS, embedding_parts
from tests.fakes import HashingEmbedder

pytestmark = pytest.mark.django_db


def _mean_of(texts: list[str]) -> np.ndarray:
    vectors = np.asarray(HashingEmbedder().embed(texts).vectors)
    mean = vectors.mean(axis=0)
    return mean / np.linalg.norm(mean)


@pytest.mark.usefixtures("hashing_embedder")
def test_a_turns_vector_is_the_mean_of_its_whole_text_its_sentences_and_its_photo(add_messages):
    add_messages(
        "alice",
        "s1",
        [
            {
                "role": "user",
                "content": "I play the clarinet. My cat is called Luna!",
                "metadata": {"speaker": "Mel", "image_caption": "a cat on a rug"},
            },
            {"role": "user", "content": "Just one thing to say.", "metadata": {"speaker": "Mel"}},
        ],
    )
    long_turn, short_turn = Message.objects.order_by("pk")
    expected = _mean_of(
        [
            "Mel: I play the clarinet. My cat is called Luna! [shared a photo: a cat on a rug]",
            "Mel: I play the clarinet.",
            "Mel: My cat is called Luna!",
            "Mel shared a photo: a cat on a rug",
        ]
    )
    np.testing.assert_allclose(np.asarray(long_turn.embedding), expected, atol=1e-6)
    # One sentence and no photo: the text's own vector.
    np.testing.assert_allclose(np.asarray(short_turn.embedding), _mean_of(["Mel: Just one thing to say."]), atol=1e-6)


def test_a_statement_after_a_long_preamble_is_found_by_its_meaning(add_messages, search, settings):
    settings.SEARCH_MIN_SIMILARITY = 0.0  # the ranking is under test here, not the relevance gate
    # One sentence of over 256 tokens first: the local model reads no further than that in one text.
    preamble = "Well, " + ", ".join(f"the bus on day {i} was late and grey" for i in range(40)) + "."
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "I bought new running shoes.", "metadata": {"speaker": "Alice"}},
            {"role": "user", "content": "The printer at work is broken.", "metadata": {"speaker": "Alice"}},
            {"role": "user", "content": f"{preamble} My daughter is named Zoe.", "metadata": {"speaker": "Alice"}},
        ],
    )
    # No word of the question is in the turn (stop words aside): only its vector can find it.
    hits = search(userId="alice", query="How is my child called?", sources=["MESSAGE"], topK=3)["hits"]
    # The most similar by vector (not merely lifted by fusion): its own vector counts the statement.
    best = max(hits, key=lambda h: h["score"])
    assert best["content"].endswith("My daughter is named Zoe.")


def test_a_long_message_is_embedded_as_a_bounded_number_of_texts():
    sentences = [f"Fact number {i} is true." for i in range(10 * MAX_SENTENCE_PARTS + 3)]
    message = Message(role="user", content=" ".join(sentences), metadata={"speaker": "Mel"})

    parts = embedding_parts(message)

    assert MAX_SENTENCE_PARTS // 2 < len(parts) - 1 <= MAX_SENTENCE_PARTS
    # Every sentence is still in one of the runs, in order.
    assert " ".join(p.removeprefix("Mel: ") for p in parts[1:]) == " ".join(sentences)


def test_a_message_at_the_length_limit_is_embedded_as_a_bounded_number_of_texts(settings):
    message = Message(role="user", content="a. " * (settings.MAX_MESSAGE_CHARS // 3), metadata={"speaker": "Mel"})

    assert len(embedding_parts(message)) <= 1 + MAX_SENTENCE_PARTS


def test_a_one_sentence_message_is_one_text_whatever_its_surrounding_whitespace():
    message = Message(role="user", content="  Hello there.\n", metadata={"speaker": "Mel"})

    assert len(embedding_parts(message)) == 1
