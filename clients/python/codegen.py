"""Regenerate the client's generated part, ``memory_client/generated``, from the service's schema.

Run from the repository root (``make client`` does)::

    .venv/bin/python clients/python/codegen.py                 # rewrite memory_client/generated
    .venv/bin/python clients/python/codegen.py --out DIR       # write it elsewhere (the drift test)

The schema is the service's SDL snapshot, ``tests/snapshots/schema.graphql`` (printed by the
service's Strawberry schema and checked against it by ``tests/graphql/test_schema.py``), unless
``--schema`` names another file; the operations are the ``.graphql`` files in ``memory_client/operations``.
ariadne-codegen (``requirements-codegen.txt``, in ``var/codegen-venv``) writes the package twice,
once with a sync client and once with an async one; the models of both runs are the same files, so
the result is the sync package plus the async run's ``async_client.py`` and ``async_base_client.py``.
An operation the schema no longer allows fails the run, naming the field.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CodegenError", "generate", "main"]

CLIENT = Path(__file__).resolve().parent
REPO_ROOT = CLIENT.parents[1]
SCHEMA = REPO_ROOT / "tests" / "snapshots" / "schema.graphql"
OPERATIONS = CLIENT / "memory_client" / "operations"
GENERATED = CLIENT / "memory_client" / "generated"
CODEGEN = REPO_ROOT / "var" / "codegen-venv" / "bin" / "ariadne-codegen"

# Only the input types and enums the operations use: a schema change elsewhere leaves the client as it is.
CONFIG = """[tool.ariadne-codegen]
schema_path = {schema}
queries_path = {operations}
target_package_path = {target}
target_package_name = "generated"
client_name = {client_name}
client_file_name = {client_file_name}
async_client = {async_client}
multipart_uploads = false
include_comments = "none"
include_all_inputs = false
include_all_enums = false

[tool.ariadne-codegen.scalars.DateTime]
type = "datetime.datetime"

[tool.ariadne-codegen.scalars.Date]
type = "datetime.date"
"""
VARIANTS = {
    "sync": {"client_name": "GeneratedClient", "client_file_name": "client", "async_client": "false"},
    "async": {"client_name": "AsyncGeneratedClient", "client_file_name": "async_client", "async_client": "true"},
}
ASYNC_ONLY = ("async_client.py", "async_base_client.py")


class CodegenError(RuntimeError):
    """ariadne-codegen failed (an operation the schema does not allow, a missing generator...)."""


def _toml_string(path: Path) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _run_codegen(codegen: Path, schema: Path, operations: Path, work: Path, variant: str) -> Path:
    """One ariadne-codegen run into ``work/variant/generated``; returns that folder."""
    names = {key: value if key == "async_client" else f'"{value}"' for key, value in VARIANTS[variant].items()}
    target = work / variant
    target.mkdir()
    config = work / f"{variant}.toml"
    config.write_text(
        CONFIG.format(
            schema=_toml_string(schema), operations=_toml_string(operations), target=_toml_string(target), **names
        )
    )
    done = subprocess.run([str(codegen), "--config", str(config)], cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        # The last line is the generator's own message (e.g. InvalidOperationForSchema: ...).
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise CodegenError(f"ariadne-codegen failed ({variant}):\n{last}")
    return target / "generated"


def generate(out: Path, *, schema: Path = SCHEMA, operations: Path = OPERATIONS, codegen: Path = CODEGEN) -> None:
    """Write the generated package to ``out`` (replaced whole, so a removed operation leaves no file behind).

    Args:
        out: the package folder to write (``memory_client/generated``).
        schema: the SDL file to generate from (default: the service's snapshot).
        operations: the folder of ``.graphql`` operations and fragments.
        codegen: the ``ariadne-codegen`` executable.

    Raises:
        CodegenError: the generator is not installed, or failed (an operation the schema does not
            allow), or the sync and async runs disagree on a model file.
    """
    if not codegen.exists():
        raise CodegenError(
            f"{codegen} is missing: `make client` (or `make test`) installs ariadne-codegen in var/codegen-venv."
        )
    with tempfile.TemporaryDirectory(prefix="memory-client-codegen-") as tmp:
        work = Path(tmp)
        sync, async_ = (_run_codegen(codegen, schema, operations, work, variant) for variant in VARIANTS)
        common = sorted({p.name for p in sync.glob("*.py")} & {p.name for p in async_.glob("*.py")} - {"__init__.py"})
        _, mismatch, errors = filecmp.cmpfiles(sync, async_, common, shallow=False)
        if mismatch or errors:
            raise CodegenError(f"the sync and async runs wrote different models: {mismatch + errors}")
        for name in ASYNC_ONLY:
            shutil.copy2(async_ / name, sync / name)
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(sync, out)


def main(argv: list[str] | None = None) -> int:
    """``codegen.py [--out DIR] [--schema FILE] [--operations DIR]``: exit 0 once written, 1 on a CodegenError."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=GENERATED, help="the package folder to write")
    parser.add_argument("--schema", type=Path, default=SCHEMA, help="the SDL file (default: %(default)s)")
    parser.add_argument("--operations", type=Path, default=OPERATIONS, help="the folder of .graphql operations")
    args = parser.parse_args(argv)
    try:
        generate(args.out.resolve(), schema=args.schema.resolve(), operations=args.operations.resolve())
    except CodegenError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"Wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
