"""Fixtures of the tests that run the service for real (``tests.ops.live``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ops.live import environment, manage, postgres_folder


@pytest.fixture(scope="module")
def embedded_dir() -> Iterator[Path]:
    """A migrated embedded PostgreSQL cluster of the test module's own (stopped between its tests)."""
    with postgres_folder() as folder:
        data_dir = folder / "pg"
        manage("migrate", "-v0", env=environment(EMBEDDED_DB_DIR=str(data_dir)))
        assert not (data_dir / "postmaster.pid").exists()  # the last process using it left: it stopped
        yield data_dir
