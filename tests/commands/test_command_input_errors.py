"""Bad input to ``import_conversations`` and ``create_api_key``: a clear error, a non-zero exit, nothing stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memories.models import ApiKey, Message
from tests.ops.live import ROOT, database_url, environment

pytestmark = pytest.mark.django_db


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    """A LoCoMo file of one sample, ``conv-1``, with one session of one turn."""
    path = tmp_path / "locomo.json"
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Osaka."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    }
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation}]))
    return path


def test_import_of_a_sample_not_in_the_file_fails_naming_it(locomo_file):
    with pytest.raises(CommandError, match="conv-99"):
        call_command("import_conversations", str(locomo_file), samples=["conv-1", "conv-99"], stdout=StringIO())
    assert not Message.objects.exists()


@pytest.mark.parametrize("max_sessions", [0, -3])
def test_import_refuses_max_sessions_under_one(max_sessions, locomo_file):
    with pytest.raises(CommandError, match="--max-sessions"):
        call_command("import_conversations", str(locomo_file), max_sessions=max_sessions, stdout=StringIO())
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["x" * 201, "--all-users"], "at most 200 characters"),
        (["bot", "--user", "a" * 256], "at most 255 characters"),
    ],
)
def test_create_api_key_refuses_what_its_columns_cannot_hold(arguments, error):
    with pytest.raises(CommandError, match=error):
        call_command("create_api_key", *arguments, stdout=StringIO(), stderr=StringIO())
    assert not ApiKey.objects.exists()


@pytest.fixture
def empty_database() -> Iterator[str]:
    """The ``DATABASE_URL`` of a new, empty database on the test server (a second terminal's fresh one)."""
    name = f"empty_{os.getpid()}"
    test_database = database_url()
    with psycopg.connect(test_database, autocommit=True) as server:
        server.execute(f"CREATE DATABASE {name}")
    try:
        yield test_database.replace(f"/{connection.settings_dict['NAME']}", f"/{name}", 1)
    finally:
        with psycopg.connect(test_database, autocommit=True) as server:
            server.execute(f"DROP DATABASE IF EXISTS {name}")


def _manage(*args: str, database: str) -> subprocess.CompletedProcess:
    env = environment(DATABASE_URL=database)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_command_on_an_empty_database_says_so_in_one_line(empty_database):
    done = _manage("create_api_key", "my-bot", "--all-users", database=empty_database)
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"create_api_key: database 'empty_{os.getpid()}' on ")
    assert 'has no tables of this service (relation "memories_apikey" does not exist)' in line
    assert "DATABASE_URL or EMBEDDED_DB_DIR the service runs with" in line
    assert "Traceback" not in done.stderr


def test_a_command_on_a_database_that_does_not_exist_says_so_in_one_line(empty_database):
    done = _manage("create_api_key", "my-bot", "--all-users", database=empty_database.replace("/empty_", "/nowhere_"))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"create_api_key: Cannot connect to database 'nowhere_{os.getpid()}' on ")
    assert "does not exist" in line
