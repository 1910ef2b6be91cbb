"""Fixtures of the tests that run the service for real (``tests.ops.live``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ops.live import environment, manage


@pytest.fixture(scope="module")
def embedded_dir(tmp_path_factory) -> Path:  # noqa: ANN001
    """A migrated embedded PostgreSQL cluster of the test module's own (stopped between its tests)."""
    data_dir = tmp_path_factory.mktemp("embedded") / "pg"
    manage("migrate", "-v0", env=environment(EMBEDDED_DB_DIR=str(data_dir)))
    assert not (data_dir / "postmaster.pid").exists()  # the last process using it left: it stopped
    return data_dir
