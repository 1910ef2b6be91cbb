"""The client's generated part is what ariadne-codegen writes from the service's schema and the client's operations.

The schema is the SDL snapshot (``tests/snapshots/schema.graphql``), which must be the live one.
After a schema change (``UPDATE_SNAPSHOTS=1``, see ``tests/graphql/test_schema.py``) or an edit of
``clients/python/memory_client/operations``: ``make client``, then review and commit the diff of
``clients/python/memory_client/generated``.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

from memories.graphql.schema import schema

ROOT = Path(__file__).resolve().parents[2]
CODEGEN = ROOT / "clients" / "python" / "codegen.py"
GENERATED = ROOT / "clients" / "python" / "memory_client" / "generated"
SNAPSHOT = ROOT / "tests" / "snapshots" / "schema.graphql"


def _codegen(*args: str) -> subprocess.CompletedProcess:
    """``codegen.py ARGS`` as ``make client`` runs it (the service's Python, from the repository root)."""
    return subprocess.run([sys.executable, str(CODEGEN), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(folder.glob("*.py"))}


def test_the_schema_the_client_is_generated_from_is_the_live_one():
    assert SNAPSHOT.read_text() == schema.as_str().rstrip("\n") + "\n", (
        "The GraphQL schema changed: UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/graphql/test_schema.py, "
        "then `make client`."
    )


def test_the_committed_client_is_what_the_generator_writes_now(tmp_path):
    done = _codegen("--out", str(tmp_path / "generated"))
    assert done.returncode == 0, done.stderr

    fresh, committed = _files(tmp_path / "generated"), _files(GENERATED)
    diff = "".join(
        line
        for name in sorted(fresh.keys() | committed.keys())
        for line in difflib.unified_diff(
            committed.get(name, "").splitlines(keepends=True),
            fresh.get(name, "").splitlines(keepends=True),
            f"committed/{name}",
            f"generated/{name}",
        )
    )
    assert not diff, f"The generated client is not what the schema and operations give: run `make client`.\n{diff}"


def test_an_operation_the_schema_no_longer_allows_fails_the_generation(tmp_path):
    sdl = schema.as_str()
    assert sdl.count("  prompt: String!\n") == 1  # Context.prompt, which the client's operations ask for
    (tmp_path / "schema.graphql").write_text(sdl.replace("  prompt: String!\n", ""))

    done = _codegen("--schema", str(tmp_path / "schema.graphql"), "--out", str(tmp_path / "generated"))

    assert done.returncode == 1
    assert "Cannot query field 'prompt' on type 'Context'" in done.stderr
    assert not (tmp_path / "generated").exists()
