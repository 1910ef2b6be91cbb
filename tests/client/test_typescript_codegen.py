"""The TypeScript client's generated part and compiled JavaScript are what GraphQL Code Generator and tsc
write now from the schema snapshot and the documented operations (``clients/typescript``).

After a schema change or an edit of the operations (``clients/python/memory_client/operations``, which
both clients send): ``make client``, then review and commit the diff of ``clients/typescript/src/generated``
and ``clients/typescript/dist``. The build runs in a copy of the files it reads, laid out as in the
repository, with the installed ``node_modules`` (``make test`` runs ``npm ci`` from the lock file).
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path("clients/typescript")
OPERATIONS = Path("clients/python/memory_client/operations")
SNAPSHOT = Path("tests/snapshots/schema.graphql")
BUILT = (CLIENT / "src" / "generated", CLIENT / "dist")


def _build(copy: Path, schema: str | None = None) -> subprocess.CompletedProcess:
    """``npm run build`` (codegen, then tsc) in ``copy``, a replica of what the build reads."""
    node_modules = ROOT / CLIENT / "node_modules"
    if not (node_modules / ".bin" / "graphql-codegen").exists():
        pytest.fail("clients/typescript/node_modules is missing: `make test` (or `make client`) runs npm ci.")
    for name in ("package.json", "codegen.ts", "tsconfig.json"):
        (copy / CLIENT).mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / CLIENT / name, copy / CLIENT / name)
    shutil.copytree(ROOT / CLIENT / "src", copy / CLIENT / "src", ignore=shutil.ignore_patterns("generated"))
    shutil.copytree(ROOT / OPERATIONS, copy / OPERATIONS)
    (copy / SNAPSHOT).parent.mkdir(parents=True)
    (copy / SNAPSHOT).write_text(schema if schema is not None else (ROOT / SNAPSHOT).read_text())
    (copy / CLIENT / "node_modules").symlink_to(node_modules)
    return subprocess.run(
        ["npm", "run", "--silent", "build"], cwd=copy / CLIENT, capture_output=True, text=True, timeout=300
    )


def _files(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): path.read_text() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_the_committed_typescript_client_is_what_the_build_writes_now(tmp_path):
    done = _build(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    diff = []
    for folder in BUILT:
        fresh, committed = _files(tmp_path / folder), _files(ROOT / folder)
        for name in sorted(fresh.keys() | committed.keys()):
            diff += difflib.unified_diff(
                committed.get(name, "").splitlines(keepends=True),
                fresh.get(name, "").splitlines(keepends=True),
                f"committed/{folder}/{name}",
                f"built/{folder}/{name}",
            )
    assert not diff, "The TypeScript client is not what the schema and operations give: run `make client`.\n" + "".join(
        diff[:200]
    )


def test_an_operation_the_schema_no_longer_allows_fails_the_build(tmp_path):
    sdl = (ROOT / SNAPSHOT).read_text()
    assert sdl.count("  prompt: String!\n") == 1  # Context.prompt, which the operations ask for

    done = _build(tmp_path, schema=sdl.replace("  prompt: String!\n", ""))

    assert done.returncode != 0
    assert 'Cannot query field "prompt" on type "Context"' in done.stdout + done.stderr
    assert not (tmp_path / CLIENT / "dist").exists()
