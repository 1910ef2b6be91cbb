"""compose.yaml, the Dockerfile, .dockerignore and the Procfile agree with the settings and with each
other, keep secrets out and the image lean (read, not run: no container engine here;
tests/ops/test_container.py runs the pieces)."""

from __future__ import annotations

import re
import shlex
from fnmatch import fnmatch
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from django.conf import settings

from memories.management.commands.serve import procfile_processes

REPO = Path(settings.BASE_DIR)
SETTINGS_SOURCE = (REPO / "memoryproject" / "settings.py").read_text()
# Every variable the settings read: env.str("NAME", ...), env.bool("NAME"), _number("NAME", ...), ...
READ_BY_SETTINGS = set(re.findall(r"(?:env(?:\.\w+)?|_number)\(\s*\"([A-Z_]+)\"", SETTINGS_SOURCE))
LONG_RUNNING = ("db", "redis", "web", "mcp", "worker")


def compose() -> dict:
    return yaml.safe_load((REPO / "compose.yaml").read_text())


def procfile() -> dict[str, list[str]]:
    """Each Procfile line as the program and arguments it runs: ``exec`` and ``env NAME=value`` taken off."""
    commands = {}
    for name, line in procfile_processes(REPO / "Procfile").items():
        words = shlex.split(line)
        words = words[1:] if words[0] == "exec" else words
        words = words[1:] if words[0] == "env" else words
        commands[name] = [w for w in words if not re.fullmatch(r"[A-Z_]+=.*", w)]
    return commands


def test_the_services_are_the_documented_topology():
    services = compose()["services"]
    assert set(services) == {"db", "redis", "migrate", "web", "mcp", "worker"}
    assert services["db"]["image"].startswith("pgvector/pgvector:pg1")
    assert services["redis"]["image"].startswith("redis:")
    assert services["migrate"]["command"] == [".venv/bin/python", "manage.py", "migrate", "--noinput"]
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["worker"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["mcp"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_commands_are_the_procfiles():
    services, commands = compose()["services"], procfile()
    assert services["web"]["command"] == commands["web"]
    assert services["worker"]["command"] == commands["worker"]
    assert services["mcp"]["command"] == commands["mcp"]
    worker_line = procfile_processes(REPO / "Procfile")["worker"]
    for name in ("DATABASE_POOL", "CONN_MAX_AGE"):  # what the Procfile's worker line sets
        assert f"{name}={services['worker']['environment'][name]}" in worker_line


def test_procfile_commands_need_no_venv_on_the_path():
    """honcho (or any Procfile runner) runs the lines with the PATH it has: the venv's python by its path."""
    assert {command[0] for command in procfile().values()} == {".venv/bin/python"}


def test_every_variable_is_one_the_settings_read():
    services = compose()["services"]
    for name in ("migrate", "web", "mcp", "worker"):
        unknown = set(services[name]["environment"]) - READ_BY_SETTINGS
        assert not unknown, f"{name} sets variables the settings never read: {unknown}"


def test_the_urls_point_at_the_services():
    services = compose()["services"]
    environment = services["web"]["environment"]
    database = urlsplit(environment["DATABASE_URL"])
    db = services["db"]["environment"]
    assert (database.hostname, database.username, database.path.lstrip("/")) == (
        "db",
        db["POSTGRES_USER"],
        db["POSTGRES_DB"],
    )
    assert database.password == "${POSTGRES_PASSWORD}"
    assert environment["Q_BROKER"] == "redis"
    assert urlsplit(environment["REDIS_URL"]).hostname == "redis"
    assert environment["HOST"] == "0.0.0.0"
    assert services["web"]["ports"] == [f"{environment['PORT']}:{environment['PORT']}"]
    mcp = services["mcp"]["environment"]
    assert (mcp["HOST"], mcp["DATABASE_URL"]) == ("0.0.0.0", environment["DATABASE_URL"])
    assert services["mcp"]["ports"] == [f"{mcp['MCP_PORT']}:{mcp['MCP_PORT']}"]


def test_secrets_come_from_the_environment_and_are_required():
    services = compose()["services"]
    required = {
        "SECRET_KEY": services["web"]["environment"]["SECRET_KEY"],
        "METRICS_TOKEN": services["web"]["environment"]["METRICS_TOKEN"],
        "POSTGRES_PASSWORD": services["db"]["environment"]["POSTGRES_PASSWORD"],
    }
    for name, value in required.items():
        assert re.fullmatch(rf"\$\{{{name}:\?[^}}]+\}}", value), (
            f"{name} is {value!r}: not required from the environment"
        )
    for service in ("migrate", "web", "worker"):
        assert services[service]["environment"]["SECRET_KEY"] == required["SECRET_KEY"]


def test_long_running_services_are_restarted_and_the_migration_until_it_succeeds():
    services = compose()["services"]
    assert {name: services[name]["restart"] for name in LONG_RUNNING} == dict.fromkeys(LONG_RUNNING, "unless-stopped")
    assert services["migrate"]["restart"] == "on-failure"


def test_the_web_process_expects_https_in_front():
    environment = compose()["services"]["web"]["environment"]
    assert environment["SECURE_COOKIES"] == "${SECURE_COOKIES:-true}"
    assert int(re.fullmatch(r"\$\{SECURE_HSTS_SECONDS:-(\d+)\}", environment["SECURE_HSTS_SECONDS"])[1]) > 0
    assert environment["SECURE_PROXY_SSL_HEADER"] == "X-Forwarded-Proto"


def _stages(dockerfile: str) -> list[str]:
    return re.split(r"^FROM ", dockerfile, flags=re.MULTILINE)[1:]


def test_the_image_runs_the_web_process_by_default():
    dockerfile = (REPO / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])$", _stages(dockerfile)[-1], re.MULTILINE)
    assert cmd is not None
    assert yaml.safe_load(cmd.group(1)) == compose()["services"]["web"]["command"]


def test_the_runtime_stage_holds_the_runtime_packages_and_the_export_only():
    build, runtime = _stages((REPO / "Dockerfile").read_text())
    assert build.startswith("python:3.11")
    assert " AS build" in build.splitlines()[0]
    assert runtime.startswith("python:3.11")
    assert ".venv/bin/pip install --no-deps -r requirements.txt" in build  # exactly the pinned runtime
    assert "requirements-model.txt" in build  # torch, for the export, in the build stage only
    assert "prepare()" in build
    assert "pip install" not in runtime
    assert "COPY --from=build /app/.venv .venv" in runtime
    assert re.search(r"^COPY --from=build .*/app/var/models var/models$", runtime, re.MULTILINE)
    assert "USER memories" in runtime


def _names(path: Path) -> set[str]:
    return {
        re.split(r"[=<>\[ ]", line, maxsplit=1)[0].lower().replace("_", "-")
        for line in path.read_text().splitlines()
        if line and not line.startswith(("#", "-"))
    }


def test_the_runtime_requirements_hold_no_torch_and_no_test_tools():
    runtime = _names(REPO / "requirements.txt")
    assert not runtime & {"torch", "transformers", "sentence-transformers", "onnx", "pytest", "pytest-django"}
    assert {"torch", "transformers", "onnx"} <= _names(REPO / "requirements-model.txt")
    assert {"pytest", "pytest-django"} <= _names(REPO / "requirements-dev.txt")
    assert not runtime & _names(REPO / "requirements-model.txt")
    assert not runtime & _names(REPO / "requirements-dev.txt")


def _ignored(path: str, patterns: list[str]) -> bool:
    """Whether Docker leaves ``path`` out of the build context (a pattern matching it or a folder above it)."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        if pattern.startswith("**/"):
            if any(fnmatch(part, pattern[3:]) for part in parts):
                return True
        elif any(fnmatch(prefix, pattern) for prefix in prefixes):
            return True
    return False


def test_the_build_context_leaves_out_local_state_secrets_and_development():
    lines = (REPO / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for path in (".venv/bin/python", "var/postgres/PG_VERSION", "var/models/model.onnx", ".git/HEAD", ".env"):
        assert _ignored(path, patterns), path
    for path in ("memories/__pycache__/models.cpython-311.pyc", "tests/conftest.py", "bench/speed.py"):
        assert _ignored(path, patterns), path
    for path in ("manage.py", "Procfile", "requirements.txt", "requirements-model.txt", "memories/models.py"):
        assert not _ignored(path, patterns), path
    for path in ("memoryproject/settings.py", "templates/admin/index.html", "memories/static/graphiql/graphiql.min.js"):
        assert not _ignored(path, patterns), path


def test_env_example_lists_every_variable_commented_out():
    example = (REPO / ".env.example").read_text()
    listed = set(re.findall(r"^# ([A-Z_]+)=", example, re.MULTILINE))
    assert listed == READ_BY_SETTINGS
    assert not re.findall(r"^[A-Z_]+=", example, re.MULTILINE), "copying .env.example must change nothing"
