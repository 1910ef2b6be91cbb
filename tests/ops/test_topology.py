"""The deployable topology, without containers: 2 web processes and 2 workers on one PostgreSQL,
with Redis as the task broker (a redis-server this test starts on a free port)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings

from memories.management.commands.serve import procfile_processes
from memories.models import Message, Session, Summary
from memories.services.api_keys import api_key_create
from tests.ops.live import database_url, free_port, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REPO = Path(settings.BASE_DIR)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (make test installs Debian's redis-server)")
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _connects(port), 10, "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(10)


def _connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


@pytest.fixture
def topology(redis_url: str, tmp_path: Path) -> Iterator[list[str]]:
    """Two web processes and two workers, as the Procfile runs them; yields the web base URLs."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryproject.settings",
        "DATABASE_URL": database_url(),
        "Q_BROKER": "redis",
        "REDIS_URL": redis_url,
        "Q_WORKERS": "1",
        "EMBEDDING_BACKEND": "tests.fakes.HashingEmbedder",
        "EMBEDDING_MODEL": "hashing",
        "WEB_THREADS": "4",
    }
    commands = procfile_processes(REPO / "Procfile")
    ports = [free_port(), free_port()]
    processes = [
        subprocess.Popen(
            commands["web"],
            shell=True,
            cwd=REPO,
            env={**env, "HOST": "127.0.0.1", "PORT": str(port)},
            stdout=(tmp_path / f"web{port}.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for port in ports
    ]
    processes += [
        subprocess.Popen(
            commands["worker"],
            shell=True,
            cwd=REPO,
            env=env,
            stdout=(tmp_path / f"worker{i}.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for i in range(2)
    ]
    try:
        for port in ports:
            wait_for(lambda port=port: _connects(port), 60, f"the web process on {port}")
        yield [f"http://127.0.0.1:{port}" for port in ports]
    finally:
        # SIGTERM to each process alone, as serve does: django-q2's cluster stops its own processes,
        # and hangs if they get the signal too. Then whatever is left of each group.
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):  # the group is gone already
                os.killpg(process.pid, signal.SIGKILL)


def _graphql(base: str, key: str, query: str, variables: dict) -> dict:
    request = urllib.request.Request(
        f"{base}/graphql/",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


ADD = """mutation($u: String!, $s: String!, $m: [MessageInput!]!) {
  addMessages(userId: $u, sessionId: $s, messages: $m) { __typename }
}"""
SUMMARISE = "mutation($u: String!) { createSummaries(userId: $u) { __typename } }"
SEARCH = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { hits { kind id } } } }"


def test_two_web_processes_and_two_workers_on_one_database_with_redis(topology):
    _, key = api_key_create(name="topology", user_external_ids=[], all_users=True)
    calls = [
        (
            topology[i % 2],
            f"user-{i % 4}",
            f"s-{i % 8}",
            [{"role": "user", "content": f"Note {i} about topic {i % 5}."}],
        )
        for i in range(80)
    ]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda c: _graphql(c[0], key, ADD, {"u": c[1], "s": c[2], "m": c[3]}), calls))
    assert all(a["data"]["addMessages"]["__typename"] == "AddMessagesResult" for a in answers), answers

    # Every message embedded once, by whichever worker took its task.
    wait_for(lambda: not Message.objects.filter(embedding__isnull=True).exists(), 90, "every message embedded")
    assert Message.objects.count() == 80
    assert set(Message.objects.values_list("embedding_model", flat=True)) == {"hashing"}

    # Summaries asked for through both web processes at once: each session summarised exactly once.
    users = sorted({user for _, user, _, _ in calls})
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda a: _graphql(a[0], key, SUMMARISE, {"u": a[1]}), [(b, u) for b in topology for u in users]))
    sessions = Session.objects.count()
    wait_for(lambda: Summary.objects.count() == sessions, 90, "every session summarised")
    first = dict(Summary.objects.values_list("session_id", "content"))
    time.sleep(2)  # duplicate tasks, if any, have run by now: they changed nothing
    assert Summary.objects.count() == sessions
    assert dict(Summary.objects.values_list("session_id", "content")) == first
    assert all(s.message_count == s.session.messages.count() for s in Summary.objects.select_related("session"))

    # Either web process gives the same search results.
    for user in users:
        found = [
            _graphql(base, key, SEARCH, {"i": {"userId": user, "query": "topic 3", "answer": False}})
            for base in topology
        ]
        assert found[0] == found[1]
        assert found[0]["data"]["search"]["hits"]
