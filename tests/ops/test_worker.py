"""A real django-q2 worker process picks up a queued task from the ORM broker."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django_q.models import Failure
from django_q.tasks import async_task

from memories.management.commands.serve import procfile_processes
from memories.models import Message
from memories.services.messages import MessageIn, messages_add
from tests.ops.live import database_url, environment, wait_for

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _worker(log: Path) -> Iterator[subprocess.Popen]:
    """``manage.py qcluster`` (one worker process) on the test database, its stderr in ``log``; stopped after."""
    env = environment(DATABASE_URL=database_url(), EMBEDDING_BACKEND="local")
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log.open("w")
    )
    try:
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


@pytest.mark.django_db(transaction=True)
def test_worker_process_embeds_queued_messages(tmp_path):
    added = messages_add(
        user_external_id="alice",
        session_external_id="s1",
        messages=[MessageIn(role="user", content="I run a marathon every spring.")],
    )
    message = Message.objects.get(pk=added.messages[0].pk)
    # In sync mode messages_add already embedded it in-process; clear it and queue for real.
    Message.objects.filter(pk=message.pk).update(embedding=None, embedding_model="")
    async_task("memories.tasks.embed_rows", "message", [message.pk], sync=False)

    with _worker(tmp_path / "worker.log"):
        wait_for(lambda: Message.objects.get(pk=message.pk).embedding is not None, 90, "the worker to embed it")
    message.refresh_from_db()
    assert message.embedding_model == settings.EMBEDDING_MODEL
    assert len(message.embedding) == settings.EMBEDDING_DIMENSIONS


_WORKER_SETTINGS = """
import json
import django
django.setup()
from django.conf import settings
from memories.llm import get_embedder
embedder = get_embedder()
embedder.embed(["hello"])
runtime_threads = embedder._model.session.get_session_options().intra_op_num_threads
db = settings.DATABASES["default"]
from django.db import connection
connection.ensure_connection()
from django_q.conf import Conf
print(json.dumps([settings.EMBEDDING_THREADS, runtime_threads, db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"],
                  "pool" in db.get("OPTIONS", {}), Conf.MAX_RSS]))
"""


def _procfile_worker_environment() -> dict[str, str]:
    """The variables the Procfile's ``worker`` line sets (``env NAME=value ... python manage.py qcluster``)."""
    words = shlex.split(procfile_processes(ROOT / "Procfile")["worker"])
    assert words[-2:] == ["manage.py", "qcluster"]
    return dict(word.split("=", 1) for word in words if "=" in word)


def test_worker_processes_share_the_cores_and_keep_their_connections():
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "memoryproject.settings",
        "Q_WORKERS": "2",
        "LOG_LEVEL": "WARNING",
        # As in .env.example: the web process's pool, which the worker must not take.
        "DATABASE_POOL": "true",
        "Q_MAX_RSS_MB": "900",
    }
    for name in ("EMBEDDING_THREADS", "CONN_MAX_AGE", "CONN_HEALTH_CHECKS", "Q_SYNC"):
        env.pop(name, None)
    env.update(_procfile_worker_environment())
    done = subprocess.run(
        [sys.executable, "-c", _WORKER_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    threads, runtime_threads, conn_max_age, health_checks, pooled, max_rss = json.loads(
        done.stdout.strip().splitlines()[-1]
    )
    # Two worker processes side by side: each gets half the cores (more threads than cores
    # make the runtime's threads wait on one another).
    assert threads == runtime_threads == max(1, len(os.sched_getaffinity(0)) // 2)
    assert conn_max_age == 600
    assert health_checks is True
    assert pooled is False
    # django-q2 replaces a worker process whose peak RSS passes Q_MAX_RSS_MB (its max_rss is in KiB).
    assert max_rss == 900 * 1024


def fails_quoting(text: str) -> None:
    """A task whose error quotes what it was given, as a constraint's DETAIL quotes a user's words."""
    raise ValueError(f"cannot store {text!r}")


@pytest.mark.django_db(transaction=True)
def test_a_failed_task_is_logged_without_the_users_words(tmp_path):
    async_task("tests.ops.test_worker.fails_quoting", "my locker code is 4471", sync=False)

    with _worker(tmp_path / "worker.log"):
        wait_for(lambda: Failure.objects.exists(), 90, "the task to fail")
        wait_for(lambda: "Failed '" in (tmp_path / "worker.log").read_text(), 10, "the failure's log line")

    log = (tmp_path / "worker.log").read_text()
    assert "Failed 'tests.ops.test_worker.fails_quoting'" in log
    assert "ValueError" in log
    assert "4471" not in log
    assert "4471" in Failure.objects.get().result  # for staff, until deleteHistory or forgetUser
