"""The image's pieces run for real, without a container engine: the runtime requirements alone, in a
fresh venv, serve the web process (the image's CMD) and the worker with the model's ONNX export and
neither torch nor a test tool; and the Procfile runs as written under honcho, without the venv on
the PATH."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from memories.llm.onnx_encoder import onnx_model_file
from memories.services.api_keys import api_key_create
from tests.ops.live import (
    ROOT,
    database_url,
    environment,
    free_port,
    graphql,
    request,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ADD = (
    'mutation { addMessages(userId: "a", sessionId: "s1", messages: [{role: "user", content: "Hi!"}]) { __typename } }'
)
WAITING = "{ backlog { messagesWaitingForVector } }"


def _start(command: list[str], *, env: dict[str, str], log: Path) -> subprocess.Popen:
    output = log.open("w")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _worker_connected(port: int) -> bool:
    answer = request(port, "GET", "/readyz")
    return answer.status == 200 and "worker" not in answer.json()["degraded"]


@pytest.fixture(scope="module")
def runtime_venv(tmp_path_factory) -> Path:
    """A fresh venv with ``pip install --no-deps -r requirements.txt``, as the image's build stage makes it."""
    venv = tmp_path_factory.mktemp("runtime") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    install = ["install", "--quiet", "--no-compile", "--no-deps", "-r", str(ROOT / "requirements.txt")]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin/python"), *install],  # this pip, that venv
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


def test_the_runtime_requirements_alone_serve_the_web_process_and_the_worker(runtime_venv, tmp_path):
    python = str(runtime_venv / "bin/python")
    for module in ("torch", "transformers", "sentence_transformers", "pytest"):
        absent = subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=60)
        assert absent.returncode != 0, f"{module} is installed by requirements.txt"
    # The export the image's build stage makes (this process has torch to make it).
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(onnx_model_file(cache_dir=Path(settings.MODEL_CACHE_DIR)), models)
    port = free_port()
    env = environment(DATABASE_URL=database_url(), MODEL_CACHE_DIR=str(models), EMBEDDING_BACKEND="local")
    env.update(PORT=str(port), WEB_THREADS="2")
    _, key = api_key_create(name="test", all_users=True)
    image_cmd = [python, "-m", "gunicorn", "--config", "memoryproject/gunicorn.conf.py"]  # the Dockerfile's CMD
    web = _start(image_cmd, env=env, log=tmp_path / "web.log")
    worker = None
    try:
        wait_for(lambda: request(port, "GET", "/healthz").status == 200, 90, "the web process")
        assert request(port, "GET", "/readyz").json()["failed"] == []  # the model embeds with ONNX Runtime
        assert "errors" not in graphql(port, key, ADD).json()
        worker_env = {**env, "DATABASE_POOL": "false"}
        worker = _start([python, "manage.py", "qcluster"], env=worker_env, log=tmp_path / "worker.log")
        waiting = lambda: graphql(port, key, WAITING).json()["data"]["backlog"]["messagesWaitingForVector"]  # noqa: E731
        wait_for(lambda: waiting() == 0, 90, "the worker to embed the message")
    finally:
        for process in (worker, web):
            if process is not None:
                _stop(process)


def test_the_procfile_runs_as_written_under_honcho(tmp_path):
    """What the audit ran: ``.venv/bin/honcho start`` in a shell whose PATH does not hold the venv."""
    port = free_port()
    env = environment(DATABASE_URL=database_url(), PATH="/usr/bin:/bin")
    command = [str(Path(sys.executable).parent / "honcho"), "start", "--port", str(port)]
    honcho = _start(command, env=env, log=tmp_path / "honcho.log")
    try:
        wait_for(lambda: request(port, "GET", "/healthz").status == 200, 90, "the web process under honcho")
        wait_for(lambda: _worker_connected(port), 60, "the worker under honcho")
    finally:
        _stop(honcho)
    assert "not found" not in (tmp_path / "honcho.log").read_text()
