"""The ``fake_openai`` and ``unreachable_openai_url`` fixtures, over ``bench.fake_openai``'s server.

Registered for every test by ``pytest_plugins`` in ``tests/conftest.py`` (its ``openai_settings``
fixture points both backends at the server)::

    def test_x(fake_openai):
        fake_openai.chat_reply = "Sushi."
        ...  # point OPENAI_BASE_URL at fake_openai.base_url
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.fake_openai import FakeOpenAI, closed_port_url

__all__ = ["FakeOpenAI", "fake_openai", "unreachable_openai_url"]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI server, stopped after the test."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def unreachable_openai_url() -> str:
    """A ``/v1`` base URL on 127.0.0.1 where nothing listens."""
    return closed_port_url()
