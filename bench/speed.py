"""Speed and scale benchmark: what a user calls, over HTTP against the served service; ingest; worker.

Run from the repository root::

    .venv/bin/python -m bench.speed                                # 10k, 100k and 1M messages
    .venv/bin/python -m bench.speed --messages 10000 --queries 500  # one size
    .venv/bin/python -m bench.speed --smoke                         # tiny: well under a minute

The table goes to stdout, everything measured to ``bench/results/speed-<UTC time>.json``.

For each size (``bench.synthetic``: N messages over 1,000 end users with proportional
summaries, knowledge and diaries, random unit vectors; built once and reused):

1. **Database round-trips per request**: one GraphQL ``search`` (default arguments, for
   ``topK`` 1, 5, 10, 25 and 50) and one ``context``, run in-process through Django's test
   client (authentication included), their queries counted with ``CaptureQueriesContext``.
2. **Latency**: the service is started as ``make run`` starts it (``manage.py serve
   --no-worker``: gunicorn on the Procfile's ``web`` line) on the dataset, and ``--queries``
   LoCoMo questions, each about a random end user, are sent one after the other over one
   keep-alive HTTP connection, after a first pass that searches each end user once (timed
   apart: the first search of a user whose rows are not in PostgreSQL's buffer cache yet).
   Three requests (``MODES``): ``search`` (``search(input: {userId, query})``, nothing else
   set: the answer on, with the configured chat backend, offline the verbatim turns),
   ``retrieval`` (the same with ``answer: false``) and ``context`` (``context(input: {userId,
   sessionId, query})``, a session of that user). Client-side wall time per request;
   p50 / p95 / p99 (nearest-rank).
3. **Floor**: the same questions embedded one at a time in this process by the offline
   model as sentence-transformers runs it (PyTorch), with a thread per core and with the
   web process's ``EMBEDDING_THREADS``: the faster median is the time no search can beat.
   The service's own runtime (ONNX Runtime by default) is measured beside it. Requests and
   floor alternate in ``FLOOR_BLOCKS`` blocks of the questions (``_latency_and_floor``), so
   that both meet the same phases of the machine's speed. The targets (issue 21): p50 <=
   1.5 x floor + 5 ms and p95 <= 50 ms, for ``search`` and ``context``.
4. **Peak RSS** (``VmHWM``) of the web server's worker process after the latency runs.

Once per run, on a fresh database ``bench_ingest``:

5. **Ingest**: ``addMessages`` over HTTP with batches of 1, 10 and 100 messages, each call a
   new end user's session (so no summary work is queued), the worker stopped: accepted
   messages per second.
6. **Worker**: the model's raw batch throughput on what the worker embeds for those messages
   (``Embedder.embed`` on each message's ``embedding_parts``, in batches of
   ``EMBEDDING_BATCH_SIZE``, in this process; messages per second), then the worker is started as
   ``make worker`` starts it (``manage.py serve worker``) and timed until every message has
   its vector: embeddings per second, their ratio, and the worker's peak RSS (its processes
   together).

chatmemory side by side on one LoCoMo conversation: ``bench.compare_chatmemory``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench.retrieval import DEFAULT_PATH, REPO_ROOT, RESULTS_DIR, _code_version, _machine, setup_django
from bench.synthetic import DEFAULT_USERS, _connect_admin, ensure_dataset, size_label, use_database

__all__ = [
    "Server",
    "bench_api_key",
    "database_url",
    "free_port",
    "latency_figures",
    "main",
    "meets_targets",
    "percentile",
    "run",
    "served",
]

logger = logging.getLogger(__name__)

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
DEFAULT_QUERIES = 500
WARM_UP_QUERIES = 20
# The timed requests and the floor's embeddings alternate in this many blocks
# (``_latency_and_floor``), each block after the first preceded by this many untimed ones.
FLOOR_BLOCKS = 5
BLOCK_WARM_UP = 2
# The service's runtime, measured beside the floor (``_floor_embedders``).
SERVICE_RUNTIME = "service_runtime"
ROUND_TRIP_TOP_KS = (1, 5, 10, 25, 50)
INGEST_BATCHES = {1: 500, 10: 2000, 100: 5000}  # batch size -> messages sent
SMOKE = {"sizes": (2000,), "users": 100, "queries": 20, "ingest": {1: 10, 10: 20, 100: 200}}
INGEST_DATABASE = "bench_ingest"
# Issue 21's targets for ``search`` and ``context``: p50 <= FLOOR_FACTOR x floor + FLOOR_MARGIN_MS, p95 <= P95_MS.
FLOOR_FACTOR = 1.5
FLOOR_MARGIN_MS = 5.0
P95_MS = 50.0
# The requests timed, in the order each block sends them; the targets apply to search and context.
MODES = ("search", "retrieval", "context")
TARGET_MODES = ("search", "context")

SEARCH = """
query Search($input: SearchInput!) {
  search(input: $input) {
    ... on SearchResult {
      answer answerMode found
      hits { kind id score relevance content conversationTime sessionId speaker }
    }
    ... on OperationInfo { messages { message } }
  }
}
"""
CONTEXT = """
query Context($input: ContextInput!) {
  context(input: $input) {
    ... on Context {
      prompt
      window { role content }
      memories { kind id score content }
      tokens { window memories prompt tokenizer }
    }
    ... on OperationInfo { messages { message } }
  }
}
"""
ADD_MESSAGES = """
mutation Add($userId: String!, $sessionId: String!, $messages: [MessageInput!]!) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    ... on AddMessagesResult { skipped }
    ... on OperationInfo { messages { message } }
  }
}
"""


@dataclass(frozen=True)
class Question:
    """One timed request's subject: an end user, one of their sessions, a LoCoMo question."""

    user: str
    session: str
    text: str


def _request(mode: str, question: Question, *, top_k: int | None = None) -> tuple[str, dict[str, Any]]:
    """The GraphQL document and variables of ``mode`` (``MODES``) for ``question``."""
    if mode == "context":
        return CONTEXT, {"input": {"userId": question.user, "sessionId": question.session, "query": question.text}}
    data: dict[str, Any] = {"userId": question.user, "query": question.text}
    if mode == "retrieval":
        data["answer"] = False
    if top_k is not None:
        data["topK"] = top_k
    return SEARCH, {"input": data}


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``.

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("No values.")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def latency_figures(seconds: Sequence[float]) -> dict[str, float]:
    """``n`` and nearest-rank p50 / p95 / p99 and the mean of ``seconds``, in milliseconds (2 decimals)."""
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def meets_targets(figures: dict[str, float], floor_ms: float) -> dict[str, Any]:
    """Issue 21's targets for one request's latency figures against the floor (ms).

    Returns:
        ``{"p50_over_floor", "p50_limit_ms", "p50_ok", "p95_ok"}``: the limit is
        ``FLOOR_FACTOR`` x floor + ``FLOOR_MARGIN_MS``; p95 must be at most ``P95_MS``.
    """
    limit = FLOOR_FACTOR * floor_ms + FLOOR_MARGIN_MS
    return {
        "p50_over_floor": round(figures["p50_ms"] / floor_ms, 2),
        "p50_limit_ms": round(limit, 2),
        "p50_ok": figures["p50_ms"] <= limit,
        "p95_ok": figures["p95_ms"] <= P95_MS,
    }


# --- Questions ----------------------------------------------------------------------------


def _questions(path: Path, count: int, sessions: dict[str, list[str]], seed: int = 0) -> list[Question]:
    """``count`` questions: the file's questions in turn, each about a random user and one of their sessions."""
    texts = [qa["question"] for sample in json.loads(path.read_text()) for qa in sample["qa"] if qa.get("question")]
    pick = random.Random(seed)
    users = sorted(sessions)
    out = []
    for i in range(count):
        user = pick.choice(users)
        out.append(Question(user=user, session=pick.choice(sessions[user]), text=texts[i % len(texts)]))
    return out


def _sessions_by_user() -> dict[str, list[str]]:
    """Every end user's session ids, in the database Django is connected to."""
    from memories.models import Session

    sessions: dict[str, list[str]] = {}
    for user, session in Session.objects.values_list("user__external_id", "external_id").order_by("pk"):
        sessions.setdefault(user, []).append(session)
    return sessions


# --- The server ---------------------------------------------------------------------------


@dataclass
class Server:
    """A running service (``manage.py serve``) and a keep-alive connection to its GraphQL endpoint."""

    process: subprocess.Popen
    port: int
    api_key: str
    connection: http.client.HTTPConnection | None = None

    def post(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST one GraphQL request; returns the decoded ``data``.

        A keep-alive connection the server closed while idle is opened again and the request
        sent once more (the requests sent are searches or new sessions' messages).

        Raises:
            RuntimeError: an HTTP status other than 200, or GraphQL errors.
        """
        body = json.dumps({"query": query, "variables": variables})
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"}
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                self.connection.request("POST", "/graphql/", body=body, headers=headers)
                response = self.connection.getresponse()
                data = json.loads(response.read())
                break
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
        if response.status != 200 or data.get("errors"):
            raise RuntimeError(f"GraphQL request failed ({response.status}): {data}")
        return data["data"]

    def peak_rss_mb(self) -> float:
        """Peak RSS (``VmHWM``) of the largest process the service runs (gunicorn's worker), MiB."""
        import psutil

        processes = psutil.Process(self.process.pid).children(recursive=True)
        return max((_peak_rss_mb([p.pid]) for p in processes), default=0.0)


def database_url(name: str) -> str:
    """A libpq URL to database ``name`` on the server Django is connected to."""
    from memoryproject.embedded_db import ensure_embedded_database

    url = os.environ.get("DATABASE_URL") or ensure_embedded_database()
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _child_env(database: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": database_url(database), "HF_HUB_OFFLINE": "1", **extra}
    env.pop("Q_SYNC", None)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (now)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _service(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """``manage.py serve ARGS`` running; on exit SIGTERM (it stops its processes), then SIGKILL."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", *args], cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def served(database: str, api_key: str, log: Path, **env: str) -> Iterator[Server]:
    """The web server as ``make run`` starts it (without the worker), on ``database``; ready for requests.

    Args:
        database: database name on the server Django is connected to.
        api_key: the raw API key requests carry.
        log: where the server's output goes.
        env: more environment variables for the service (settings).

    Raises:
        RuntimeError: the server exited or did not answer within 120 s.
    """
    port = free_port()
    with _service(["--no-worker", "--port", str(port)], _child_env(database, LOG_LEVEL="WARNING", **env), log) as p:
        server = Server(process=p, port=port, api_key=api_key)
        deadline = time.monotonic() + 120
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"The server exited ({p.returncode}); see {log}.")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/graphql/")
                conn.getresponse().read()
                conn.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"The server did not start in 120 s; see {log}.") from None
                time.sleep(0.2)
        try:
            yield server
        finally:
            if server.connection is not None:
                server.connection.close()


def _peak_rss_mb(pids: Sequence[int]) -> float:
    """Sum of ``VmHWM`` (peak resident set) of these processes, in MiB (Linux ``/proc``)."""
    total_kb = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total_kb += int(line.split()[1])
        except FileNotFoundError:
            continue
    return round(total_kb / 1024, 1)


# --- Measurements ----------------------------------------------------------------------------


def _first_search_of_each_user(server: Server, questions: list[Question], progress: bool) -> dict[str, Any]:
    """One retrieval search per end user, timed: the first pass over the dataset.

    It reads every user's rows into PostgreSQL's buffer cache, as a service whose users are
    active has them; the timed runs that follow measure that steady state. Its own figures
    are those of a user whose rows are read from the operating system (or the disk).
    """
    from tqdm import tqdm

    seconds = []
    for question in tqdm(questions, desc="first search of each user", disable=not progress):
        started = time.perf_counter()
        server.post(*_request("retrieval", question))
        seconds.append(time.perf_counter() - started)
    return latency_figures(seconds)


def _latency_and_floor(
    server: Server, questions: list[Question], *, progress: bool
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Latency of each of ``MODES`` and the floor, measured in ``FLOOR_BLOCKS`` alternating blocks.

    Each block of the questions is sent over HTTP in each mode in turn, and then embedded in
    this process by each of ``_floor_embedders`` while the server is idle: the machine's
    speed drifts over a run, and in alternating blocks requests and floor sample the same
    phases. After an idle block, the first ``BLOCK_WARM_UP`` questions of each mode and
    model are run untimed (they also reopen the keep-alive connection the server closed).

    Returns:
        ``(latency, floor)``: per mode its ``latency_figures`` plus ``answer_modes`` (search:
        counts of ``answerMode``); per floor embedder its ``threads``, ``runtime`` and figures.
        Each also has ``block_p50_ms``, the median of each block (ms), to show the drift.
    """
    from tqdm import tqdm

    embedders = _floor_embedders()
    for _, _, embedder in embedders.values():  # loads the models
        _timed_embeddings(embedder, questions[:WARM_UP_QUERIES])
    for mode in MODES:
        for question in questions[:WARM_UP_QUERIES]:
            server.post(*_request(mode, question))
    seconds: dict[str, list[float]] = {name: [] for name in [*MODES, *embedders]}
    block_p50s: dict[str, list[float]] = {name: [] for name in seconds}
    answer_modes: dict[str, int] = {}
    size = math.ceil(len(questions) / FLOOR_BLOCKS)
    with tqdm(total=len(questions), desc="requests and floor", disable=not progress) as bar:
        for start in range(0, len(questions), size):
            block = questions[start : start + size]
            warm_up = questions[start - BLOCK_WARM_UP : start] if start else []
            for mode in MODES:
                for question in warm_up:
                    server.post(*_request(mode, question))
                for question in block:
                    started = time.perf_counter()
                    data = server.post(*_request(mode, question))
                    seconds[mode].append(time.perf_counter() - started)
                    if mode == "search":
                        key = data["search"]["answerMode"]
                        answer_modes[key] = answer_modes.get(key, 0) + 1
            for label, (_, _, embedder) in embedders.items():
                _timed_embeddings(embedder, warm_up)
                seconds[label] += _timed_embeddings(embedder, block)
            for name, values in seconds.items():
                block_p50s[name].append(round(percentile(values[-len(block) :], 50) * 1000, 2))
            bar.update(len(block))
    latency = {mode: {**latency_figures(seconds[mode]), "block_p50_ms": block_p50s[mode]} for mode in MODES}
    latency["search"]["answer_modes"] = answer_modes
    floor = {
        label: {
            "threads": threads,
            "runtime": runtime,
            **latency_figures(seconds[label]),
            "block_p50_ms": block_p50s[label],
        }
        for label, (threads, runtime, _) in embedders.items()
    }
    return latency, floor


def _floor_embedders() -> dict[str, tuple[int, str, Any]]:
    """The in-process models the floor is measured with: label -> ``(threads, runtime, LocalEmbedder)``.

    The floor is the offline model as sentence-transformers runs it, in PyTorch.
    ``every_core``: a torch thread per core; ``web_process``: the web process's thread count
    (``EMBEDDING_THREADS``). The p50 ratio is taken against the faster of the two
    (``_floor_ms``). ``SERVICE_RUNTIME``: the runtime the service embeds with
    (``EMBEDDING_RUNTIME``) and the web process's thread count; not the floor, reported beside
    it. Absent when that runtime is torch. Each is a model of its own: torch's thread count is
    set on load.
    """
    from django.conf import settings

    from memories.llm.local import LocalEmbedder

    runs = [("every_core", _cores(), "torch"), ("web_process", settings.EMBEDDING_THREADS, "torch")]
    if settings.EMBEDDING_RUNTIME != "torch":
        runs.append((SERVICE_RUNTIME, settings.EMBEDDING_THREADS, settings.EMBEDDING_RUNTIME))
    return {
        label: (threads, runtime, LocalEmbedder(threads=threads, runtime=runtime, cache_dir=settings.MODEL_CACHE_DIR))
        for label, threads, runtime in runs
    }


def _timed_embeddings(embedder: Any, questions: list[Question]) -> list[float]:  # a LocalEmbedder
    """Seconds to embed each question alone, one after the other."""
    seconds = []
    for question in questions:
        started = time.perf_counter()
        embedder.embed([question.text])
        seconds.append(time.perf_counter() - started)
    return seconds


def _floor_ms(floors: dict[str, dict[str, float]]) -> float:
    """The floor: the faster median of the two PyTorch measurements (``_floor_embedders``), in ms."""
    return min(floors[name]["p50_ms"] for name in ("every_core", "web_process"))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _round_trips(api_key: str, question: Question) -> dict[str, Any]:
    """Database queries per request: ``search`` for each ``topK`` of ``ROUND_TRIP_TOP_KS``, and ``context``."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {api_key}")

    def count(query: str, variables: dict[str, Any]) -> int:
        with CaptureQueriesContext(connection) as queries:
            response = client.post(
                "/graphql/", {"query": query, "variables": variables}, content_type="application/json"
            )
        data = response.json()
        if response.status_code != 200 or data.get("errors"):
            raise RuntimeError(f"Request failed: {data}")
        return len(queries.captured_queries)

    count(*_request("search", question))  # a key's first use writes its last-used time
    return {
        "search": {str(k): count(*_request("search", question, top_k=k)) for k in ROUND_TRIP_TOP_KS},
        "context": count(*_request("context", question)),
    }


def bench_api_key() -> str:
    """A new API key for every end user, in the database Django is connected to; returns the raw key."""
    from memories.services.api_keys import api_key_create

    _, raw_key = api_key_create(name=f"bench-speed-{os.getpid()}", all_users=True)
    return raw_key


def _scale(messages: int, users: int, queries: int, source: Path, progress: bool) -> dict[str, Any]:
    dataset = ensure_dataset(messages=messages, users=users, source=source)
    sessions = _sessions_by_user()
    questions = _questions(source, queries, sessions)
    first_pass = [
        Question(user, sessions[user][0], questions[i % len(questions)].text) for i, user in enumerate(sessions)
    ]
    raw_key = bench_api_key()
    round_trips = _round_trips(raw_key, questions[0])
    log = RESULTS_DIR / f"speed-server-{size_label(messages)}.log"
    with served(dataset["database"], raw_key, log) as server:
        first = _first_search_of_each_user(server, first_pass, progress)
        latency, floor = _latency_and_floor(server, questions, progress=progress)
        web_rss = server.peak_rss_mb()
    floor_ms = _floor_ms(floor)
    return {
        "dataset": dataset,
        "round_trips": round_trips,
        "latency": {"first_search_of_each_user": first, **latency, "query_embedding": floor},
        "floor_ms": floor_ms,
        "targets": {mode: meets_targets(latency[mode], floor_ms) for mode in TARGET_MODES},
        "p50_over_service_embedding": {
            mode: round(latency[mode]["p50_ms"] / floor[SERVICE_RUNTIME]["p50_ms"], 2)
            for mode in MODES
            if SERVICE_RUNTIME in floor
        },
        "peak_rss_mb": {"web": web_rss},
    }


def _ingest_and_worker(batches: dict[int, int], source: Path, progress: bool) -> dict[str, Any]:
    import psutil
    from django.conf import settings
    from django.core.management import call_command
    from tqdm import tqdm

    from bench.synthetic import _turns
    from memories.llm import get_embedder
    from memories.models import Message
    from memories.services.embeddings import embedding_parts, embeddings_pending

    with _connect_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{INGEST_DATABASE}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{INGEST_DATABASE}"')
    use_database(INGEST_DATABASE)
    call_command("migrate", verbosity=0)
    raw_key = bench_api_key()
    turns = [text for _, text in _turns(source)]
    pick = random.Random(1)

    rates: dict[str, Any] = {}
    with served(INGEST_DATABASE, raw_key, RESULTS_DIR / "speed-server-ingest.log") as server:
        server.post(ADD_MESSAGES, _add_variables("warm-up", ["hello"]))
        for batch, total in batches.items():
            calls = total // batch
            payloads = [
                _add_variables(f"ingest-{batch}-{i}", [pick.choice(turns) for _ in range(batch)]) for i in range(calls)
            ]
            started = time.perf_counter()
            for payload in tqdm(payloads, desc=f"addMessages x{batch}", disable=not progress):
                server.post(ADD_MESSAGES, payload)
            seconds = time.perf_counter() - started
            rates[str(batch)] = {
                "messages": calls * batch,
                "seconds": round(seconds, 2),
                "messages_per_second": round(calls * batch / seconds, 1),
                "ms_per_call": round(seconds / calls * 1000, 2),
            }

    pending = embeddings_pending(kind="message").count()
    messages = list(Message.objects.order_by("pk"))
    # What the worker embeds for them: each message's whole text, sentences and caption.
    texts = [text for message in messages for text in embedding_parts(message)]
    embedder = get_embedder()
    embedder.embed(texts[: settings.EMBEDDING_BATCH_SIZE])  # warm-up
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    raw = len(messages) / seconds

    log = RESULTS_DIR / "speed-worker.log"
    with _service(["worker"], _child_env(INGEST_DATABASE, LOG_LEVEL="WARNING"), log) as worker:
        # The clock starts when the first vector is written (the model is loaded by then).
        first_at = None
        first_left = pending
        deadline = time.monotonic() + 1800
        while True:
            left = embeddings_pending(kind="message").count()
            now = time.perf_counter()
            if first_at is None and left < pending:
                first_at, first_left = now, left
            if left == 0:
                break
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"The worker stopped or took too long with {left} messages left; see {log}.")
            time.sleep(0.05)
        done_at = time.perf_counter()
        processes = [p.pid for p in psutil.Process(worker.pid).children(recursive=True)]
        worker_rss = _peak_rss_mb(processes)
        largest = max(_peak_rss_mb([pid]) for pid in processes)
    achieved = first_left / (done_at - first_at) if first_at and done_at > first_at else float("nan")
    return {
        "ingest": rates,
        "worker": {
            "messages": pending,
            "model_inputs_per_message": round(len(texts) / len(messages), 2),
            "raw_model_inputs_per_second": round(len(texts) / seconds, 1),
            "raw_model_messages_per_second": round(raw, 1),
            "worker_messages_per_second": round(achieved, 1),
            "worker_over_raw": round(achieved / raw, 3),
            "q_workers": settings.Q_CLUSTER["workers"],
            "embedding_batch_size": settings.EMBEDDING_BATCH_SIZE,
            "peak_rss_mb_all_processes": worker_rss,
            "peak_rss_mb_largest_process": largest,
        },
    }


def _add_variables(user: str, texts: list[str]) -> dict[str, Any]:
    return {
        "userId": user,
        "sessionId": "s1",
        "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)],
    }


# --- Report ----------------------------------------------------------------------------------


def run(
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    users: int = DEFAULT_USERS,
    queries: int = DEFAULT_QUERIES,
    ingest: dict[int, int] | None = None,
    source: Path = DEFAULT_PATH,
    progress: bool = True,
) -> dict[str, Any]:
    """Run every measurement; returns the results as a JSON-serialisable dict.

    Args:
        sizes: stored messages per dataset (one dataset each, built on first use).
        users: end users the messages are spread over.
        queries: timed requests per mode and size (after ``WARM_UP_QUERIES``).
        ingest: batch size -> messages sent; ``{}`` skips the ingest and worker measurements.
        source: LoCoMo file for the questions and the texts.
        progress: show tqdm progress bars.
    """
    setup_django()
    from django.conf import settings

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "benchmark": "speed",
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "code": _code_version(),
        "config": {
            "embedding_model": settings.EMBEDDING_MODEL,
            "embedding_runtime": settings.EMBEDDING_RUNTIME,
            "embedding_threads": settings.EMBEDDING_THREADS,
            "chat_backend": settings.CHAT_BACKEND,
            "web_threads": settings.WEB_THREADS,
            "users": users,
            "queries": queries,
            "search_default_top_k": settings.SEARCH_DEFAULT_TOP_K,
            "exact_search_max_rows": settings.EXACT_SEARCH_MAX_ROWS,
            "hnsw_ef_search": settings.HNSW_EF_SEARCH,
        },
        "sizes": {},
    }
    for messages in sizes:
        results["sizes"][size_label(messages)] = _scale(messages, users, queries, source, progress)
    if ingest is None:
        ingest = INGEST_BATCHES
    if ingest:
        results.update(_ingest_and_worker(ingest, source, progress))
    return results


def format_tables(results: dict[str, Any]) -> str:
    """The main figures as Markdown tables (docs/benchmarks.md uses them)."""
    lines = [
        "| stored messages | request | p50 ms | p95 ms | p99 ms | p50 / floor | target | round-trips |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, size in results["sizes"].items():
        floors = size["latency"]["query_embedding"]
        floor = size["floor_ms"]
        for mode in MODES:
            figures = size["latency"][mode]
            target = ""
            if mode in size["targets"]:
                met = size["targets"][mode]
                target = (
                    f"p50 <= {met['p50_limit_ms']}: {'yes' if met['p50_ok'] else 'NO'}; "
                    f"p95 <= {P95_MS:g}: {'yes' if met['p95_ok'] else 'NO'}"
                )
            trips = size["round_trips"]["context" if mode == "context" else "search"]
            trips = trips if isinstance(trips, int) else "/".join(map(str, sorted(set(trips.values()))))
            lines.append(
                f"| {label} | {mode} | {figures['p50_ms']} | {figures['p95_ms']} | {figures['p99_ms']} | "
                f"{figures['p50_ms'] / floor:.2f} | {target} | {trips} |"
            )
        first = size["latency"]["first_search_of_each_user"]
        lines.append(
            f"| {label} | retrieval, first search of each user | {first['p50_ms']} | {first['p95_ms']} | "
            f"{first['p99_ms']} | {first['p50_ms'] / floor:.2f} | | |"
        )
        for name, figures in floors.items():
            runtime = {"torch": "PyTorch", "onnxruntime": "ONNX Runtime"}.get(figures["runtime"], figures["runtime"])
            what = "as the service embeds, not the floor" if name == SERVICE_RUNTIME else name.replace("_", " ")
            lines.append(
                f"| {label} | query embedding alone, {runtime}, {figures['threads']} thread(s) ({what}) | "
                f"{figures['p50_ms']} | {figures['p95_ms']} | {figures['p99_ms']} | "
                f"{figures['p50_ms'] / floor:.2f} | | |"
            )
    out = "\n".join(lines)
    if results["sizes"]:
        rss = ", ".join(f"{label}: {size['peak_rss_mb']['web']} MiB" for label, size in results["sizes"].items())
        out += f"\n\nWeb worker process peak RSS: {rss}."
    if "ingest" in results:
        out += "\n\n| addMessages batch | messages/s | ms per call |\n| --- | --- | --- |\n"
        out += "\n".join(
            f"| {batch} | {figures['messages_per_second']} | {figures['ms_per_call']} |"
            for batch, figures in results["ingest"].items()
        )
        worker = results["worker"]
        out += (
            f"\n\nWorker: {worker['worker_messages_per_second']} messages/s against the model's raw "
            f"{worker['raw_model_messages_per_second']}/s ({worker['worker_over_raw']:.0%}; "
            f"{worker['model_inputs_per_message']} model inputs per message); peak RSS "
            f"{worker['peak_rss_mb_all_processes']} MiB over its processes "
            f"(largest {worker['peak_rss_mb_largest_process']} MiB)."
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, action="append", help="Stored messages (repeatable).")
    parser.add_argument("--users", type=int, default=DEFAULT_USERS)
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="Timed requests per mode and size.")
    parser.add_argument("--no-ingest", action="store_true", help="Skip the ingest and worker measurements.")
    parser.add_argument("--no-search", action="store_true", help="Skip the search measurements (ingest only).")
    parser.add_argument("--smoke", action="store_true", help="Tiny sizes, for a check that it runs.")
    parser.add_argument("--source", type=Path, default=DEFAULT_PATH, help="LoCoMo file (questions, texts).")
    parser.add_argument("--output", type=Path, help="Results file (default bench/results/speed-<time>.json).")
    args = parser.parse_args(argv)
    setup_django()
    for name in ("django-q", "sentence_transformers", "pgserver"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if args.smoke:
        sizes, users, queries, ingest = SMOKE["sizes"], SMOKE["users"], SMOKE["queries"], SMOKE["ingest"]
    else:
        sizes, users, queries = tuple(args.messages or DEFAULT_SIZES), args.users, args.queries
        if args.no_search:
            sizes = ()
        ingest = {} if args.no_ingest else INGEST_BATCHES
    results = run(sizes=sizes, users=users, queries=queries, ingest=ingest, source=args.source)
    output = args.output or RESULTS_DIR / f"speed-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    output.write_text(json.dumps(results, indent=1) + "\n")
    print(format_tables(results))
    print(f"results: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
