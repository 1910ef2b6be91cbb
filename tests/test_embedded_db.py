"""The embedded PostgreSQL server: its buffer cache is sized by the service's setting."""

from __future__ import annotations

import pgserver
import psycopg

from memoryproject.embedded_db import default_shared_buffers_mb, embedded_database_url


def _shared_buffers(url: str) -> str:
    with psycopg.connect(url) as connection:
        return connection.execute("SHOW shared_buffers").fetchone()[0]


def test_shared_buffers_take_effect_when_the_server_next_starts(tmp_path):
    data_dir = tmp_path / "postgres"
    try:
        url = embedded_database_url(data_dir=data_dir, shared_buffers_mb=160)
        assert _shared_buffers(url) == "128MB"  # a running server keeps its buffers
        pgserver.get_server(str(data_dir)).cleanup()  # the last process using it leaves: it stops

        url = embedded_database_url(data_dir=data_dir, shared_buffers_mb=160)
        assert _shared_buffers(url) == "160MB"
    finally:
        pgserver.get_server(str(data_dir)).cleanup()


def test_the_default_is_a_quarter_of_the_memory():
    with open("/proc/meminfo") as meminfo:
        total_kib = int(next(line for line in meminfo if line.startswith("MemTotal:")).split()[1])
    assert abs(default_shared_buffers_mb() - total_kib / 4 / 1024) <= 1
