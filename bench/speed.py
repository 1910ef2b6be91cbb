"""Speed and scale benchmark: search latency through GraphQL over HTTP, ingest, worker, memory.

Run from the repository root::

    .venv/bin/python -m bench.speed                                # 10k, 100k and 1M messages
    .venv/bin/python -m bench.speed --messages 10000 --queries 500  # one size
    .venv/bin/python -m bench.speed --smoke                         # tiny: well under a minute

The table goes to stdout, everything measured to ``bench/results/speed-<UTC time>.json``.

For each size (``bench.synthetic``: N messages over 1,000 end users with proportional
summaries, knowledge and diaries, random unit vectors; built once and reused):

1. **Database round-trips per search**: one GraphQL search request run in-process through
   Django's test client (authentication included), its queries counted with
   ``CaptureQueriesContext``, for ``topK`` 1, 5, 10, 25 and 50, retrieval-only and full.
2. **Latency**: the service is started as in production (``manage.py serve --no-worker``:
   cheroot, WSGI) on the dataset, and ``--queries`` LoCoMo questions, each asked about a
   random end user, are sent one after the other over one keep-alive HTTP connection after
   a first pass that searches each end user once (timed apart: the first search of a user
   whose rows are not in PostgreSQL's buffer cache yet). Two modes, both with
   ``searchContent: true`` and the default ``topK`` (5):
   ``retrieval`` (``answer: false``: query embedding, stage 1 and stage 2 retrieval) and
   ``full`` (the answer stage too, with ``bench.zero_latency.ZeroLatencyChatModel``, which
   answers at once and always says "insufficient", so both stages and both answer calls
   run). Client-side wall time per request; p50 / p95 / p99 (nearest-rank).
3. **Floor**: the same questions embedded one at a time in this process by the same
   offline model, while the server is idle: the median is the time no search can beat.
   Searches and floor alternate in ``FLOOR_BLOCKS`` blocks of the questions
   (``_latency_and_floor``), so that both meet the same phases of the machine's speed.
4. **Peak RSS** (``VmHWM``) after the latency runs: the web process, and the embedding
   model's own process (``EMBEDDING_PROCESS``, on by default in the web server).

Once per run, on a fresh database ``bench_ingest``:

5. **Ingest**: ``addMessages`` over HTTP with batches of 1, 10 and 100 messages, each call a
   new end user's session (so no summary work is queued), the worker stopped: accepted
   messages per second.
6. **Worker**: the model's raw batch throughput on those texts (``Embedder.embed`` in
   batches of ``EMBEDDING_BATCH_SIZE``, in this process), then the django-q2 worker
   (``manage.py qcluster``) is started and timed until every message has its vector:
   embeddings per second, their ratio, and the worker's peak RSS (its processes together).
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import math
import os
import random
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

__all__ = ["main", "percentile", "run"]

logger = logging.getLogger(__name__)

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
DEFAULT_QUERIES = 500
WARM_UP_QUERIES = 20
# The timed searches and the floor's embeddings alternate in this many blocks
# (``_latency_and_floor``), each block after the first preceded by this many untimed ones.
FLOOR_BLOCKS = 5
BLOCK_WARM_UP = 2
# The embedding measured after the idle time a search leaves the model (``_idle_floor``).
IDLE_FLOOR = "after_idle_gap"
# The query embedded in-process by the service's own runtime (``_floor_embedders``).
SERVICE_RUNTIME = "service_runtime"
ROUND_TRIP_TOP_KS = (1, 5, 10, 25, 50)
INGEST_BATCHES = {1: 500, 10: 2000, 100: 5000}  # batch size -> messages sent
ZERO_LATENCY_CHAT = "bench.zero_latency.ZeroLatencyChatModel"
SMOKE = {"sizes": (2000,), "users": 100, "queries": 20, "ingest": {1: 10, 10: 20, 100: 200}}
INGEST_DATABASE = "bench_ingest"

SEARCH = """
query Search($input: SearchInput!) {
  search(input: $input) {
    ... on SearchResult { answer answerMode stages hits { kind id score } }
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


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``.

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("No values.")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _latency_figures(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


# --- Questions ----------------------------------------------------------------------------


def _questions(path: Path, count: int, users: int, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` (user external id, LoCoMo question) pairs: the file's questions in turn, random users."""
    questions = [qa["question"] for sample in json.loads(path.read_text()) for qa in sample["qa"] if qa.get("question")]
    pick = random.Random(seed)
    return [(f"user-{pick.randrange(users):04d}", questions[i % len(questions)]) for i in range(count)]


# --- The server ---------------------------------------------------------------------------


@dataclass
class Server:
    """A running ``manage.py serve --no-worker`` process and a keep-alive connection to it."""

    process: subprocess.Popen
    port: int
    api_key: str
    connection: http.client.HTTPConnection | None = None

    def post(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST one GraphQL request; returns the decoded body. Raises RuntimeError on errors.

        A keep-alive connection the server closed while idle (cheroot: after 10 s) is opened
        again and the request sent once more; the requests sent are searches, safe to repeat.
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

    def peak_rss_mb(self) -> dict[str, float]:
        """Peak RSS of the web process and, apart, of its children (the embedding model's process)."""
        import psutil

        children = [
            child.pid
            for child in psutil.Process(self.process.pid).children(recursive=True)
            if not any("resource_tracker" in part for part in child.cmdline())  # multiprocessing's helper
        ]
        return {"web": _peak_rss_mb([self.process.pid]), "model_process": _peak_rss_mb(children)}


def _database_url(name: str) -> str:
    """A libpq URL to database ``name`` on the server Django is connected to."""
    from django.conf import settings

    if os.environ.get("DATABASE_URL"):
        url = os.environ["DATABASE_URL"]
    else:
        from memoryproject.embedded_db import embedded_database_url

        url = embedded_database_url(data_dir=settings.EMBEDDED_DB_DIR)
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _child_env(database: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": _database_url(database), "HF_HUB_OFFLINE": "1", **extra}
    env.pop("Q_SYNC", None)
    return env


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _server(database: str, api_key: str, log: Path) -> Iterator[Server]:
    port = _free_port()
    env = _child_env(database, CHAT_BACKEND=ZERO_LATENCY_CHAT, LOG_LEVEL="WARNING")
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-worker", "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(process=process, port=port, api_key=api_key)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"The server exited ({process.returncode}); see {log}.")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/graphql/")
                conn.getresponse().read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"The server did not start in 120 s; see {log}.") from None
                time.sleep(0.2)
        yield server
    finally:
        if server.connection is not None:
            server.connection.close()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


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


def _search_variables(user: str, question: str, *, answer: bool, top_k: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"userId": user, "query": question, "searchContent": True, "answer": answer}
    if answer:
        data["includeRetrievedData"] = True
    if top_k is not None:
        data["topK"] = top_k
    return {"input": data}


def _first_search_of_each_user(
    server: Server, users: int, questions: list[tuple[str, str]], progress: bool
) -> dict[str, Any]:
    """One retrieval search per end user, timed: the first pass over the dataset.

    It reads every user's rows into PostgreSQL's buffer cache, as a service whose users are
    active has them; the timed runs that follow measure that steady state. Its own figures
    are those of a user whose rows are read from the operating system (or the disk).
    """
    from tqdm import tqdm

    seconds = []
    for i in tqdm(range(users), desc="first search of each user", disable=not progress):
        started = time.perf_counter()
        server.post(SEARCH, _search_variables(f"user-{i:04d}", questions[i % len(questions)][1], answer=False))
        seconds.append(time.perf_counter() - started)
    return _latency_figures(seconds)


def _latency_and_floor(
    server: Server, questions: list[tuple[str, str]], *, progress: bool
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]]:
    """Search latency in both modes and the floor, measured in ``FLOOR_BLOCKS`` alternating blocks.

    Each block of the questions is searched over HTTP, ``retrieval`` then ``full``, and then
    embedded in this process by each of ``_floor_embedders``, while the server is idle. The
    machine's speed drifts over a run (two torch threads took 10.4 to 15.3 ms in one session
    11 run), so searches and floor measured minutes apart can fall in different phases; in
    alternating blocks both sample the same ones. After an idle block, the first
    ``BLOCK_WARM_UP`` questions of each mode and model are run untimed (they also open the
    keep-alive connection again if the server closed it meanwhile).

    Returns:
        ``(retrieval, full, floor)``: ``_latency_figures`` of each mode plus the ``stages``
        each search ran (counts); and per floor embedder its ``threads``, ``runtime`` and
        figures. Each also has ``block_p50_ms``, the median of each block (ms), to show the
        drift.
    """
    from tqdm import tqdm

    embedders = _floor_embedders()
    for _, _, embedder in embedders.values():  # loads the models
        _timed_embeddings(embedder, questions[:WARM_UP_QUERIES])
    modes = {"retrieval": False, "full": True}
    for answer in modes.values():
        for user, question in questions[:WARM_UP_QUERIES]:
            server.post(SEARCH, _search_variables(user, question, answer=answer))
    seconds: dict[str, list[float]] = {name: [] for name in [*modes, *embedders]}
    block_p50s: dict[str, list[float]] = {name: [] for name in seconds}
    stages: dict[str, dict[str, int]] = {mode: {} for mode in modes}
    size = math.ceil(len(questions) / FLOOR_BLOCKS)
    with tqdm(total=len(questions), desc="searches and floor", disable=not progress) as bar:
        for start in range(0, len(questions), size):
            block = questions[start : start + size]
            warm_up = questions[start - BLOCK_WARM_UP : start] if start else []
            for mode, answer in modes.items():
                for user, question in warm_up:
                    server.post(SEARCH, _search_variables(user, question, answer=answer))
                for user, question in block:
                    started = time.perf_counter()
                    data = server.post(SEARCH, _search_variables(user, question, answer=answer))
                    seconds[mode].append(time.perf_counter() - started)
                    key = "+".join(data["search"]["stages"])
                    stages[mode][key] = stages[mode].get(key, 0) + 1
            for label, (_, _, embedder) in embedders.items():
                _timed_embeddings(embedder, warm_up)
                seconds[label] += _timed_embeddings(embedder, block)
            for name, values in seconds.items():
                block_p50s[name].append(round(percentile(values[-len(block) :], 50) * 1000, 2))
            bar.update(len(block))
    retrieval, full = (
        {**_latency_figures(seconds[mode]), "stages": stages[mode], "block_p50_ms": block_p50s[mode]} for mode in modes
    )
    floor = {
        label: {
            "threads": threads,
            "runtime": runtime,
            **_latency_figures(seconds[label]),
            "block_p50_ms": block_p50s[label],
        }
        for label, (threads, runtime, _) in embedders.items()
    }
    return retrieval, full, floor


def _floor_embedders() -> dict[str, tuple[int, str, Any]]:
    """The in-process models the floor is measured with: label -> ``(threads, runtime, LocalEmbedder)``.

    The issue's floor is the offline model as sentence-transformers runs it, in PyTorch
    ("about 17 ms here"). ``every_core``: with a torch thread per core. ``web_process``: with
    the web server's thread count (``EMBEDDING_THREADS``, by default one fewer than the
    cores, as settings.py chooses for ``manage.py serve``: the request's thread queries the
    database meanwhile). The p50 ratio is taken against the faster of the two (``_floor_ms``):
    on this 2-core machine either can be, depending on how busy the host is.

    ``SERVICE_RUNTIME``: the same, with the runtime the service embeds with
    (``EMBEDDING_RUNTIME``, ONNX Runtime by default) and the web server's thread count; not
    the floor, reported beside it with the p50 over it. Absent when that runtime is torch.
    Each is a model of its own: torch's thread count is set on load.
    """
    from django.conf import settings

    from memories.llm.local import LocalEmbedder

    web_threads = _web_threads()
    runs = [("every_core", _cores(), "torch"), ("web_process", web_threads, "torch")]
    if settings.EMBEDDING_RUNTIME != "torch":
        runs.append((SERVICE_RUNTIME, web_threads, settings.EMBEDDING_RUNTIME))
    return {
        label: (threads, runtime, LocalEmbedder(threads=threads, runtime=runtime, cache_dir=settings.MODEL_CACHE_DIR))
        for label, threads, runtime in runs
    }


def _timed_embeddings(embedder: Any, questions: list[tuple[str, str]]) -> list[float]:  # noqa: ANN401 - a LocalEmbedder
    """Seconds to embed each question alone, one after the other."""
    seconds = []
    for _, question in questions:
        started = time.perf_counter()
        embedder.embed([question])
        seconds.append(time.perf_counter() - started)
    return seconds


def _idle_floor(questions: list[tuple[str, str]], *, idle_seconds: float) -> dict[str, float]:
    """Each question embedded alone, in this process, after the model sat idle ``idle_seconds``.

    ``_latency_and_floor`` embeds the questions back to back, the model's core never idle. In a
    search, the model waits between queries while the rest of each request runs (about 10 ms),
    and a query embedded after such a pause takes longer: 16.5 against 13.8 ms, medians of 6
    alternated runs of 200 questions through the model's process (bench/HISTORY.md, session 9).
    This measures the embedding as a search meets it; it is reported beside the floor, which
    it does not replace. With the service's runtime and the web process's thread count.
    """
    from django.conf import settings

    from memories.llm.local import LocalEmbedder

    threads, runtime = _web_threads(), settings.EMBEDDING_RUNTIME
    embedder = LocalEmbedder(threads=threads, runtime=runtime, cache_dir=settings.MODEL_CACHE_DIR)
    _timed_embeddings(embedder, questions[:WARM_UP_QUERIES])
    seconds = []
    for _, question in questions:
        time.sleep(idle_seconds)
        started = time.perf_counter()
        embedder.embed([question])
        seconds.append(time.perf_counter() - started)
    return {
        "threads": threads,
        "runtime": runtime,
        "idle_ms": round(idle_seconds * 1000, 1),
        **_latency_figures(seconds),
    }


def _web_threads() -> int:
    return int(os.environ.get("EMBEDDING_THREADS") or 0) or max(1, _cores() - 1)


def _floor_ms(floors: dict[str, dict[str, float]]) -> float:
    """The floor: the faster median of the two PyTorch measurements (``_floor_embedders``), in ms."""
    return min(floors[name]["p50_ms"] for name in ("every_core", "web_process"))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _round_trips(api_key: str, user: str, question: str) -> dict[str, dict[str, int]]:
    """Queries per search request for each ``topK``, retrieval-only and full.

    Counted with stage 1 in the request's own thread (``SEARCH_STAGE_THREADS=0``), so that one
    connection sees every statement; in a stage thread it runs the same statement.
    """
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, override_settings

    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    counts: dict[str, dict[str, int]] = {"retrieval": {}, "full": {}}
    # Warm-up: a key's first use writes its last-used time (at most once a minute).
    client.post(
        "/graphql/",
        {"query": SEARCH, "variables": _search_variables(user, question, answer=False)},
        content_type="application/json",
    )
    with override_settings(CHAT_BACKEND=ZERO_LATENCY_CHAT, SEARCH_STAGE_THREADS=0):
        for mode, answer in (("retrieval", False), ("full", True)):
            for top_k in ROUND_TRIP_TOP_KS:
                body = {"query": SEARCH, "variables": _search_variables(user, question, answer=answer, top_k=top_k)}
                with CaptureQueriesContext(connection) as queries:
                    response = client.post("/graphql/", body, content_type="application/json")
                data = response.json()
                if response.status_code != 200 or data.get("errors"):
                    raise RuntimeError(f"Search failed: {data}")
                counts[mode][str(top_k)] = len(queries.captured_queries)
    return counts


def _api_key() -> str:
    from memories.services.api_keys import api_key_create

    _, raw_key = api_key_create(name=f"bench-speed-{os.getpid()}", all_users=True)
    return raw_key


def _scale(messages: int, users: int, questions: list[tuple[str, str]], source: Path, progress: bool) -> dict[str, Any]:
    dataset = ensure_dataset(messages=messages, users=users, source=source)
    raw_key = _api_key()
    round_trips = _round_trips(raw_key, questions[0][0], questions[0][1])
    log = RESULTS_DIR / f"speed-server-{size_label(messages)}.log"
    with _server(dataset["database"], raw_key, log) as server:
        first_pass = _first_search_of_each_user(server, users, questions, progress)
        retrieval, full, floor = _latency_and_floor(server, questions, progress=progress)
        web_rss = server.peak_rss_mb()
        # The model idles between a search's embedding and the next one's for what the rest of
        # a search takes: its median less the embedding's.
        service = floor.get(SERVICE_RUNTIME, floor["web_process"])
        idle = max(0.0, retrieval["p50_ms"] - service["p50_ms"]) / 1000
        floor[IDLE_FLOOR] = _idle_floor(questions, idle_seconds=idle)
    return {
        "dataset": dataset,
        "round_trips": round_trips,
        "latency": {
            "first_search_of_each_user": first_pass,
            "retrieval": retrieval,
            "full": full,
            "query_embedding": floor,
        },
        "p50_over_embedding_floor": round(retrieval["p50_ms"] / _floor_ms(floor), 2),
        "p50_over_idle_embedding": round(retrieval["p50_ms"] / floor[IDLE_FLOOR]["p50_ms"], 2),
        "p50_over_service_embedding": round(retrieval["p50_ms"] / service["p50_ms"], 2),
        "peak_rss_mb": web_rss,
    }


def _ingest_and_worker(batches: dict[int, int], source: Path, progress: bool) -> dict[str, Any]:
    from django.conf import settings
    from django.core.management import call_command
    from tqdm import tqdm

    from memories.llm import get_embedder
    from memories.models import Message
    from memories.services.embeddings import embeddings_pending

    with _connect_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{INGEST_DATABASE}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{INGEST_DATABASE}"')
    use_database(INGEST_DATABASE)
    call_command("migrate", verbosity=0)
    raw_key = _api_key()
    turns = [text for _, text in _questions_texts(source)]
    pick = random.Random(1)

    rates: dict[str, Any] = {}
    with _server(INGEST_DATABASE, raw_key, RESULTS_DIR / "speed-server-ingest.log") as server:
        server.post(ADD_MESSAGES, _add_variables("warm-up", ["hello"]))
        # The server loads the embedding model in a background thread when it starts (for
        # searches); a search waits for it, so the timed calls do not share the CPU with it.
        server.post(SEARCH, _search_variables("warm-up", "hello", answer=False))
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
    texts = [m.embedding_text for m in Message.objects.order_by("pk")]
    embedder = get_embedder()
    embedder.embed(texts[: settings.EMBEDDING_BATCH_SIZE])  # warm-up
    started = time.perf_counter()
    embedder.embed(texts)
    raw = len(texts) / (time.perf_counter() - started)

    log = RESULTS_DIR / "speed-worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=REPO_ROOT,
            env=_child_env(INGEST_DATABASE, LOG_LEVEL="WARNING"),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        import psutil

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
        processes = [worker.pid] + [p.pid for p in psutil.Process(worker.pid).children(recursive=True)]
        worker_rss = _peak_rss_mb(processes)
        largest = max(_peak_rss_mb([pid]) for pid in processes)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
    achieved = first_left / (done_at - first_at) if first_at and done_at > first_at else float("nan")
    return {
        "ingest": rates,
        "worker": {
            "messages": pending,
            "raw_model_embeddings_per_second": round(raw, 1),
            "worker_embeddings_per_second": round(achieved, 1),
            "worker_over_raw": round(achieved / raw, 3),
            "q_workers": settings.Q_CLUSTER["workers"],
            "embedding_batch_size": settings.EMBEDDING_BATCH_SIZE,
            "peak_rss_mb_all_processes": worker_rss,
            "peak_rss_mb_largest_process": largest,
        },
    }


def _questions_texts(path: Path) -> list[tuple[str, str]]:
    from bench.synthetic import _turns

    return _turns(path)


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
        queries: timed search requests per mode and size (after ``WARM_UP_QUERIES``).
        ingest: batch size -> messages sent; ``{}`` skips the ingest and worker measurements.
        source: LoCoMo file for the questions and the texts.
        progress: show tqdm progress bars.
    """
    setup_django()
    from django.conf import settings

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    questions = _questions(source, queries, users)
    results: dict[str, Any] = {
        "benchmark": "speed",
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "code": _code_version(),
        "config": {
            "embedding_model": settings.EMBEDDING_MODEL,
            "users": users,
            "queries": queries,
            "exact_search_max_rows": settings.EXACT_SEARCH_MAX_ROWS,
            "hnsw_ef_search": settings.HNSW_EF_SEARCH,
            "conn_max_age": settings.DATABASES["default"].get("CONN_MAX_AGE"),
        },
        "sizes": {},
    }
    for messages in sizes:
        results["sizes"][size_label(messages)] = _scale(messages, users, questions, source, progress)
    if ingest is None:
        ingest = INGEST_BATCHES
    if ingest:
        results.update(_ingest_and_worker(ingest, source, progress))
    return results


def format_tables(results: dict[str, Any]) -> str:
    """The main figures as Markdown tables (the README's Benchmarks section uses them)."""
    lines = [
        "| stored messages | mode | p50 ms | p95 ms | p99 ms | p50 / query embedding | round-trips (topK 1..50) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, size in results["sizes"].items():
        floors = size["latency"]["query_embedding"]
        floor = _floor_ms(floors)
        for mode in ("retrieval", "full"):
            figures = size["latency"][mode]
            trips = sorted(set(size["round_trips"][mode].values()))
            lines.append(
                f"| {label} | {mode} | {figures['p50_ms']} | {figures['p95_ms']} | {figures['p99_ms']} | "
                f"{figures['p50_ms'] / floor:.2f} | {'/'.join(map(str, trips))} |"
            )
        first = size["latency"]["first_search_of_each_user"]
        lines.append(
            f"| {label} | retrieval, first search of each user | {first['p50_ms']} | {first['p95_ms']} | "
            f"{first['p99_ms']} | {first['p50_ms'] / floor:.2f} | |"
        )
        for name, figures in floors.items():
            runtime = {"torch": "torch", "onnxruntime": "ONNX Runtime"}.get(figures.get("runtime", "torch"))
            threads = f"{runtime}, {figures['threads']} thread{'s' if figures['threads'] > 1 else ''}"
            if name == SERVICE_RUNTIME:
                lines.append(
                    f"| {label} | query embedding alone, {threads}, as the service embeds (not the floor; "
                    f"retrieval p50 / this: {size['p50_over_service_embedding']:.2f}) | {figures['p50_ms']} | "
                    f"{figures['p95_ms']} | {figures['p99_ms']} | {figures['p50_ms'] / floor:.2f} | |"
                )
                continue
            if name == IDLE_FLOOR:
                lines.append(
                    f"| {label} | query embedding alone, {threads}, after {figures['idle_ms']} ms idle as between "
                    f"searches (not the floor; retrieval p50 / this: {size['p50_over_idle_embedding']:.2f}) | "
                    f"{figures['p50_ms']} | {figures['p95_ms']} | {figures['p99_ms']} | "
                    f"{figures['p50_ms'] / floor:.2f} | |"
                )
                continue
            lines.append(
                f"| {label} | query embedding alone, {threads} ({name.replace('_', ' ')}) | {figures['p50_ms']} | "
                f"{figures['p95_ms']} | {figures['p99_ms']} | {figures['p50_ms'] / floor:.2f} | |"
            )
    out = "\n".join(lines)
    if results["sizes"]:
        rss = ", ".join(
            f"{label}: {size['peak_rss_mb']['web']} MiB (model process {size['peak_rss_mb']['model_process']} MiB)"
            for label, size in results["sizes"].items()
        )
        out += f"\n\nWeb process peak RSS: {rss}."
    if "ingest" in results:
        out += "\n\n| addMessages batch | messages/s | ms per call |\n| --- | --- | --- |\n"
        out += "\n".join(
            f"| {batch} | {figures['messages_per_second']} | {figures['ms_per_call']} |"
            for batch, figures in results["ingest"].items()
        )
        worker = results["worker"]
        out += (
            f"\n\nWorker: {worker['worker_embeddings_per_second']} embeddings/s against the model's raw "
            f"{worker['raw_model_embeddings_per_second']}/s ({worker['worker_over_raw']:.0%}); peak RSS "
            f"{worker['peak_rss_mb_all_processes']} MiB over its processes "
            f"(largest {worker['peak_rss_mb_largest_process']} MiB)."
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, action="append", help="Stored messages (repeatable).")
    parser.add_argument("--users", type=int, default=DEFAULT_USERS)
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="Timed searches per mode and size.")
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
