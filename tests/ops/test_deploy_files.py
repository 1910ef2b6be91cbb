"""compose.yaml and the Dockerfile agree with the settings and the Procfile (read, not run: no containers here)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from django.conf import settings

from memories.management.commands.serve import procfile_processes

REPO = Path(settings.BASE_DIR)
SETTINGS_SOURCE = (REPO / "memoryproject" / "settings.py").read_text()
# Every variable the settings read: env.str("NAME", ...), env.bool("NAME"), _number("NAME", ...), ...
READ_BY_SETTINGS = set(re.findall(r"(?:env(?:\.\w+)?|_number)\(\s*\"([A-Z_]+)\"", SETTINGS_SOURCE))


def compose() -> dict:
    return yaml.safe_load((REPO / "compose.yaml").read_text())


def test_the_services_are_the_documented_topology():
    services = compose()["services"]
    assert set(services) == {"db", "redis", "migrate", "web", "mcp", "worker"}
    assert services["db"]["image"].startswith("pgvector/pgvector:pg1")
    assert services["redis"]["image"].startswith("redis:")
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["worker"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["mcp"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_commands_are_the_procfiles():
    services, procfile = compose()["services"], procfile_processes(REPO / "Procfile")
    assert " ".join(services["web"]["command"]) in procfile["web"]
    assert " ".join(services["worker"]["command"]).replace("python ", "") in procfile["worker"]
    assert procfile["mcp"] == f"exec {' '.join(services['mcp']['command'])}"
    for name in ("DATABASE_POOL", "CONN_MAX_AGE", "CONN_HEALTH_CHECKS"):  # what the Procfile's worker line sets
        assert f"{name}={services['worker']['environment'][name]}" in procfile["worker"]


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
    assert (database.hostname, database.username, database.password, database.path.lstrip("/")) == (
        "db",
        db["POSTGRES_USER"],
        db["POSTGRES_PASSWORD"],
        db["POSTGRES_DB"],
    )
    assert environment["Q_BROKER"] == "redis"
    assert urlsplit(environment["REDIS_URL"]).hostname == "redis"
    assert environment["HOST"] == "0.0.0.0"
    assert services["web"]["ports"] == [f"{environment['PORT']}:{environment['PORT']}"]
    mcp = services["mcp"]["environment"]
    assert (mcp["HOST"], mcp["DATABASE_URL"]) == ("0.0.0.0", environment["DATABASE_URL"])
    assert services["mcp"]["ports"] == [f"{mcp['MCP_PORT']}:{mcp['MCP_PORT']}"]


def test_the_image_runs_the_web_process_by_default():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "FROM python:3.11" in dockerfile
    assert "pip install --no-cache-dir -r requirements.txt" in dockerfile
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE)
    assert cmd is not None
    assert yaml.safe_load(cmd.group(1)) == compose()["services"]["web"]["command"]


def test_env_example_lists_every_variable_commented_out():
    example = (REPO / ".env.example").read_text()
    listed = set(re.findall(r"^# ([A-Z_]+)=", example, re.MULTILINE))
    assert listed == READ_BY_SETTINGS
    assert not re.findall(r"^[A-Z_]+=", example, re.MULTILINE), "copying .env.example must change nothing"
