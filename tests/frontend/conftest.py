"""The service as a browser frontend meets it: ``manage.py serve web worker`` on the test database, with
the offline embedding model and a CORS allow-list naming the example chat page's origin.

Shared by the TypeScript client's tests (Node against the live service) and the example page's
browser test, once per test process.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django_q.models import OrmQ

from memories.models import Message
from memories.services.api_keys import api_key_create
from tests.ops.live import database_url, environment, free_port, start_serve, stop, wait_for, wait_until_served

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Service:
    """The served API (``url``) and the origin its CORS allow-list names (``page_origin``, on ``page_port``)."""

    url: str
    page_port: int

    @property
    def page_origin(self) -> str:
        return f"http://127.0.0.1:{self.page_port}"


@pytest.fixture(scope="package")
def service(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Service]:
    port, page_port = free_port(), free_port()
    with django_db_blocker.unblock():
        env = environment(
            DATABASE_URL=database_url(),
            EMBEDDING_BACKEND="local",
            CORS_ALLOWED_ORIGINS=f"http://127.0.0.1:{page_port}",
            SUMMARY_SWEEP_MINUTES="1",
        )
    log = tmp_path_factory.mktemp("frontend") / "serve.log"
    served = start_serve("web", "worker", port=port, env=env, log=log)
    try:
        wait_until_served(served, port, timeout=120)
        yield Service(url=f"http://127.0.0.1:{port}/graphql/", page_port=page_port)
    finally:
        stop(served)


@pytest.fixture
def backend_key(transactional_db) -> Iterator[str]:
    """The key of the chatbot's backend: all users, may curate. After the test, the service's worker is let
    finish what the test queued (embedding and reading turns), so the test database is emptied under no task."""
    yield api_key_create(name="frontend backend", all_users=True, may_curate=True)[1]
    wait_for(
        lambda: not OrmQ.objects.exists() and not Message.objects.filter(embedding__isnull=True).exists(),
        120,
        "the worker to finish",
    )
