"""The local model in a child process (the web server's default): same vectors, no mix-ups, restarts."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from memories.llm import ModelBackendError, model_process
from memories.llm.local import LocalEmbedder

TEXTS = ["What is my favourite food?", "I love eating sushi more than any other dish.", "The train left at noon."]


@pytest.fixture(scope="module")
def in_child():
    """A child process of its own for this module's tests (loading the model takes a few seconds)."""
    embedder = LocalEmbedder(threads=1, own_process=True, channels=4)
    embedder.embed(["warm up"])
    return embedder


def test_child_gives_the_vectors_this_process_gives(in_child):
    here = LocalEmbedder(threads=1).embed(TEXTS).vectors
    there = in_child.embed(TEXTS).vectors
    assert in_child._process.pid not in (None, os.getpid())
    np.testing.assert_allclose(there, here, atol=1e-5)


def test_concurrent_callers_each_get_their_own_texts_vectors(in_child):
    expected = {text: np.asarray(vector) for text, vector in zip(TEXTS, in_child.embed(TEXTS).vectors, strict=True)}
    results: dict[int, list] = {}

    def call(i: int) -> None:
        text = TEXTS[i % len(TEXTS)]
        results[i] = [(text, in_child.embed([text]).vectors[0]) for _ in range(5)]

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]  # more callers than pipes
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6
    for calls in results.values():
        for text, vector in calls:
            np.testing.assert_allclose(vector, expected[text], atol=1e-5)


def test_an_answer_nobody_read_does_not_reach_the_next_caller(in_child):
    # A search that fails before it asks for its query's vector leaves an answer in the pipe.
    for _ in range(in_child._process.channels + 1):
        in_child.embed_later(["The train left at noon."])  # dropped unread
    (vector,) = in_child.embed(["What is my favourite food?"]).vectors
    (expected,) = LocalEmbedder(threads=1).embed(["What is my favourite food?"]).vectors
    np.testing.assert_allclose(vector, expected, atol=1e-5)


def test_a_cancelled_call_hands_its_pipe_back_at_once(in_child):
    # search_memories cancels the query's embedding when the end-user lookup fails.
    long_call = in_child.embed_later([f"{i} {TEXTS[1]}" for i in range(256)])
    started = time.perf_counter()
    assert long_call.cancel() is True
    assert time.perf_counter() - started < 0.1  # not waiting for 256 texts to be embedded
    for _ in range(in_child._process.channels + 1):
        assert in_child.embed_later(["The train left at noon."]).cancel() is True
    (vector,) = in_child.embed(["What is my favourite food?"]).vectors
    (expected,) = LocalEmbedder(threads=1).embed(["What is my favourite food?"]).vectors
    np.testing.assert_allclose(vector, expected, atol=1e-5)


def test_a_timeout_leaves_the_call_and_the_child_as_they_were(in_child):
    pid = in_child._process.pid
    texts = [f"{i} {TEXTS[1]}" for i in range(64)]
    started = in_child.embed_later(texts)
    with pytest.raises(TimeoutError):
        started.result(timeout=0)
    vectors = started.result()
    assert len(vectors.vectors) == 64
    np.testing.assert_allclose(vectors.vectors[5], in_child.embed([texts[5]]).vectors[0], atol=1e-5)
    assert in_child._process.pid == pid


def test_model_errors_are_reported_and_the_child_goes_on(in_child):
    with pytest.raises(ModelBackendError) as error:
        in_child.embed([None])  # the tokenizer refuses it
    assert error.value.code == "MODEL_BACKEND_ERROR"
    assert len(in_child.embed(["still here"]).vectors) == 1


def test_a_child_that_died_is_started_again(in_child, monkeypatch):
    monkeypatch.setattr(model_process, "RESTART_INTERVAL_SECONDS", 0)
    old_pid = in_child._process.pid
    os.kill(old_pid, signal.SIGKILL)
    with pytest.raises(ModelBackendError) as error:
        in_child.embed(["anyone there?"])
    assert error.value.code == "MODEL_BACKEND_UNAVAILABLE"
    assert len(in_child.embed(["anyone there?"]).vectors[0]) == 384
    assert in_child._process.pid not in (None, old_pid)


def test_callers_in_flight_when_the_child_dies_all_get_an_answer_or_an_error(in_child, monkeypatch):
    monkeypatch.setattr(model_process, "RESTART_INTERVAL_SECONDS", 0)
    (expected,) = in_child.embed([TEXTS[0]]).vectors
    outcomes: list[str] = []

    def call() -> None:
        for _ in range(15):
            try:
                (vector,) = in_child.embed([TEXTS[0]]).vectors
            except ModelBackendError as exc:
                outcomes.append(exc.code)
            else:
                np.testing.assert_allclose(vector, expected, atol=1e-5)
                outcomes.append("ok")

    threads = [threading.Thread(target=call) for _ in range(6)]  # more callers than pipes (4)
    for thread in threads:
        thread.start()
    os.kill(in_child._process.pid, signal.SIGKILL)
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a caller never got an answer"
    assert len(outcomes) == 6 * 15
    assert set(outcomes) <= {"ok", "MODEL_BACKEND_UNAVAILABLE"}
    assert outcomes[-1] == "ok"  # the restarted child answers


def test_a_caller_waiting_for_a_pipe_when_the_child_dies_is_not_left_waiting(monkeypatch):
    monkeypatch.setattr(model_process, "RESTART_INTERVAL_SECONDS", 0)
    embedder = LocalEmbedder(threads=1, own_process=True, channels=1)
    embedder.embed(["warm up"])
    holding = embedder.embed_later([f"{i} {TEXTS[1]}" for i in range(512)])  # the only pipe, for seconds
    outcome: list[object] = []

    def wait_for_the_pipe() -> None:
        try:
            outcome.append(len(embedder.embed([TEXTS[0]]).vectors[0]))
        except ModelBackendError as exc:
            outcome.append(exc.code)

    waiter = threading.Thread(target=wait_for_the_pipe)
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive()  # waiting for the pipe the long call holds
    os.kill(embedder._process.pid, signal.SIGKILL)
    with pytest.raises(ModelBackendError):
        holding.result()
    waiter.join(timeout=60)
    assert not waiter.is_alive(), "the waiting caller was never woken"
    assert outcome == [384]  # it started the child again and was answered
    assert len(embedder.embed([TEXTS[2]]).vectors[0]) == 384  # and gave the new pipe back
