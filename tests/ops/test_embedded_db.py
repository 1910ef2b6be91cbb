"""The embedded PostgreSQL: settings start nothing; the buffer cache is sized by the service's setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memoryproject.embedded_db import default_shared_buffers_mb

ROOT = Path(__file__).resolve().parents[2]

_SHOW_BUFFERS = """
import django, psycopg
django.setup()
from memoryproject.embedded_db import ensure_embedded_database
with psycopg.connect(ensure_embedded_database()) as connection:
    print(connection.execute("SHOW shared_buffers").fetchone()[0])
"""

_IMPORT_SETTINGS = """
import sys
sys.argv = ["manage.py", "serve"]
from django.conf import settings
settings.DATABASES
print(settings.DATABASES["default"]["HOST"], "pgserver" in sys.modules)
"""


def _run(code: str, data_dir: Path, **extra: str) -> str:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings", "EMBEDDED_DB_DIR": str(data_dir), **extra}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_importing_the_settings_starts_nothing(tmp_path):
    host, pgserver_loaded = _run(_IMPORT_SETTINGS, tmp_path / "pg").split()
    assert host == str((tmp_path / "pg").resolve())  # the server's socket folder
    assert pgserver_loaded == "False"
    assert not (tmp_path / "pg").exists()


def test_shared_buffers_take_effect_when_the_server_next_starts(tmp_path):
    data_dir = tmp_path / "pg"
    # Each run starts the server and stops it as it exits (it is the only process using it).
    assert _run(_SHOW_BUFFERS, data_dir, EMBEDDED_DB_SHARED_BUFFERS_MB="160") == "128MB"
    assert _run(_SHOW_BUFFERS, data_dir, EMBEDDED_DB_SHARED_BUFFERS_MB="160") == "160MB"
    assert not (data_dir / "postmaster.pid").exists()


def test_the_default_is_a_quarter_of_the_memory():
    with open("/proc/meminfo") as meminfo:
        total_kib = int(next(line for line in meminfo if line.startswith("MemTotal:")).split()[1])
    assert abs(default_shared_buffers_mb() - total_kib / 4 / 1024) <= 1
