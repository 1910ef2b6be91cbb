"""The service for real under slow, greedy or racing clients: bodies that stall, statements that wait too
long, a web process that grows, and a restore while a client writes (``bench.abuse`` measures them)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pgserver
import psycopg
import pytest
from django.db import connection

from memories.models import EndUser
from memories.services.api_keys import api_key_create
from tests.ops.live import (
    ROOT,
    Load,
    child,
    database_url,
    environment,
    free_port,
    graphql,
    request,
    start_serve,
    stop,
    wait_for,
    wait_until_served,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PGBIN = Path(pgserver.__file__).parent / "pginstall/bin"
ADD = """mutation { addMessages(userId: "alice", sessionId: "s1", messages: [{role: "user", content: "Hi"}]) {
  __typename } }"""


def _serve(tmp_path: Path, *names: str, **settings: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    service = start_serve(*names, port=port, env=environment(DATABASE_URL=database_url(), **settings),
                          log=tmp_path / "serve.log")  # fmt: skip
    wait_until_served(service, port)
    return service, port


def _stalled(port: int, key: str) -> socket.socket:
    """A connection that sends a POST's headers and 10 of its 1,000 bytes, then nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(
        b"POST /graphql/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
        + f"Authorization: Bearer {key}\r\n\r\n".encode()
        + b'{"query": '
    )
    return sock


def test_stalled_bodies_hold_no_thread_and_are_answered_408(tmp_path):
    _, key = api_key_create(name="test", all_users=True)
    service, port = _serve(tmp_path, "web", WEB_THREADS="2", REQUEST_BODY_TIMEOUT_SECONDS="3")
    stalled = [_stalled(port, key) for _ in range(10)]
    try:
        # More stalled bodies than request threads: the others are served all the same, at once.
        assert request(port, "GET", "/healthz", timeout=5).status == 200
        answer = graphql(port, key, ADD, timeout=10)
        assert answer.status == 200, answer.body
        assert answer.json()["data"]["addMessages"]["__typename"] == "AddMessagesResult"
        # Then each stalled body is answered: it did not arrive in time.
        for sock in stalled:
            head, _, body = sock.recv(4096).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408"), head
            assert b'"code": "REQUEST_TIMEOUT"' in body
    finally:
        for sock in stalled:
            sock.close()
        stop(service)


def test_requests_leave_nothing_holding_maintenance_off(tmp_path):
    """Each request holds maintenance off while it runs (memories.maintenance), on a pooled connection that
    goes back to the pool in the middle of the request when a task is queued: none keeps it after."""
    from memories.maintenance import MAINTENANCE_LOCK

    _, key = api_key_create(name="test", all_users=True)
    service, port = _serve(tmp_path, "web", WEB_THREADS="4")
    add = """mutation($s: String!) {
      addMessages(userId: "alice", sessionId: $s, messages: [{role: "user", content: "Hi"}]) { __typename } }"""
    try:
        with ThreadPoolExecutor(4) as clients:
            answers = list(clients.map(lambda i: graphql(port, key, add, {"s": f"s{i % 8}"}), range(60)))
        assert {answer.status for answer in answers} == {200}
        with psycopg.connect(database_url(), autocommit=True) as maintenance:

            def held() -> int:
                return maintenance.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s",
                    MAINTENANCE_LOCK,
                ).fetchone()[0]

            # A connection back in the pool is reset by the pool's own thread, a moment after the answer.
            wait_for(lambda: held() == 0, 5, "the requests' connections to let maintenance go")
    finally:
        stop(service)


def test_a_statement_past_the_request_timeout_is_cancelled_with_a_code(tmp_path):
    _, key = api_key_create(name="test", all_users=True)
    alice = EndUser.objects.create(external_id="alice")
    service, port = _serve(tmp_path, "web", REQUEST_STATEMENT_TIMEOUT_SECONDS="0.5")
    try:
        with psycopg.connect(database_url()) as holder:  # a long transaction holding alice's row
            holder.execute("SELECT 1 FROM memories_enduser WHERE id = %s FOR UPDATE", [alice.pk])
            answer = graphql(port, key, ADD, timeout=20)
        assert answer.status == 200, answer.body
        [error] = answer.json()["errors"]
        assert error["extensions"] == {"code": "STATEMENT_TIMEOUT"}
        assert "REQUEST_STATEMENT_TIMEOUT_SECONDS" in error["message"]
        assert graphql(port, key, ADD, timeout=20).json()["data"]["addMessages"]["__typename"] == "AddMessagesResult"
    finally:
        stop(service)


def test_a_web_process_past_its_memory_ceiling_is_replaced(tmp_path):
    _, key = api_key_create(name="test", all_users=True)
    service, port = _serve(tmp_path, "web", WEB_MAX_RSS_MB="1")
    try:
        master = child(service, "web")
        (first,) = master.children()
        assert graphql(port, key, ADD, timeout=20).status == 200
        wait_for(lambda: first.pid not in [p.pid for p in master.children()], 30, "the first worker to leave")
        wait_for(lambda: request(port, "GET", "/healthz", timeout=5).status == 200, 60, "a new worker")
        assert graphql(port, key, ADD, timeout=20).status == 200
    finally:
        stop(service)


def test_a_restore_under_maintenance_succeeds_while_a_client_writes(tmp_path, settings):
    if not settings.EMBEDDED_DB:
        pytest.skip("the documented commands are for the embedded server")
    _, key = api_key_create(name="test", all_users=True)
    host, name = connection.settings_dict["HOST"], connection.settings_dict["NAME"]
    service, port = _serve(tmp_path)  # web and worker
    try:
        assert graphql(port, key, ADD).status == 200
        dump = tmp_path / "memories.dump"
        subprocess.run([PGBIN / "pg_dump", "-h", host, "-U", "postgres", "-Fc", "-f", dump, name], check=True)
        restore = [PGBIN / "pg_restore", "-h", host, "-U", "postgres", "-d", name, "--clean", "--if-exists",
                   "--single-transaction", dump]  # fmt: skip
        with Load(port, key, user="writer") as load:
            for _ in range(3):
                time.sleep(1)
                done = subprocess.run(
                    [sys.executable, "manage.py", "maintenance", "--", *map(str, restore)],
                    cwd=ROOT,
                    env=environment(DATABASE_URL=database_url()),
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert done.returncode == 0, done.stderr[-3000:]
            restored = time.monotonic()
            wait_for(lambda: load.succeeded("addMessages", restored), 30, "a write after the restores")
        load.assert_every_answer_is_json_with_a_code()
        refused = [a for kind, _, a in load.answers if kind != "readyz" and a.status == 503]
        codes = {error["extensions"]["code"] for answer in refused for error in answer.json()["errors"]}
        assert codes <= {"MAINTENANCE", "DATABASE_UNAVAILABLE"}, codes
        assert any(
            a.status == 503 and a.json()["failed"] == ["maintenance"] for k, _, a in load.answers if k == "readyz"
        )
    finally:
        stop(service)


def test_tasks_wait_while_maintenance_is_on(tmp_path):
    """The worker's task waits for maintenance to end, then runs (nothing fails meanwhile)."""
    from memories.maintenance import MAINTENANCE_LOCK
    from memories.tasks import sweep

    with psycopg.connect(database_url(), autocommit=True) as maintenance, ThreadPoolExecutor(1) as worker:
        maintenance.execute("SELECT pg_advisory_lock(%s, %s)", MAINTENANCE_LOCK)
        running = worker.submit(_in_thread, sweep)
        time.sleep(1)
        assert not running.done()
        maintenance.execute("SELECT pg_advisory_unlock(%s, %s)", MAINTENANCE_LOCK)
        assert running.result(timeout=30)["summaries"] == 0


def _in_thread(function):
    try:
        return function()
    finally:
        connection.close()
