"""A real django-q2 worker process picks up a queued task from the ORM broker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection
from django_q.tasks import async_task

from memories.models import Message
from memories.services.messages import MessageIn, messages_add

ROOT = Path(__file__).resolve().parent.parent


def _database_url() -> str:
    db = connection.settings_dict
    host = db["HOST"] or db["OPTIONS"].get("host", "")
    if host.startswith("/"):
        return f"postgresql://{db['USER']}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}?host={host}"
    return f"postgresql://{db['USER']}:{quote(db['PASSWORD'] or '')}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_worker_process_embeds_queued_messages():
    added = messages_add(
        user_external_id="alice",
        session_external_id="s1",
        messages=[MessageIn(role="user", content="I run a marathon every spring.")],
    )
    message = Message.objects.get(pk=added.messages[0].pk)
    # In sync mode messages_add already embedded it in-process; clear it and queue for real.
    Message.objects.filter(pk=message.pk).update(embedding=None, embedding_model="")
    async_task("memories.tasks.embed_rows", "message", [message.pk], sync=False)

    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "memoryproject.settings",
        "Q_WORKERS": "1",
        "LOG_LEVEL": "WARNING",
    }
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            message.refresh_from_db()
            if message.embedding is not None:
                break
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert message.embedding is not None, "the worker did not embed the message within 90 s"
    assert message.embedding_model == settings.EMBEDDING_MODEL
    assert len(message.embedding) == settings.EMBEDDING_DIMENSIONS
