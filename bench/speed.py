"""Speed and scale benchmark: what a user calls, over HTTP against the served service; ingest; worker.

Run from the repository root::

    .venv/bin/python -m bench.speed                                # 10k, 100k and 1M messages
    .venv/bin/python -m bench.speed --messages 10000 --queries 500  # one size
    .venv/bin/python -m bench.speed --smoke                         # tiny: well under a minute

The table goes to stdout, everything measured to ``bench/results/speed-<UTC time>.json``.

The method is in docs/benchmarks.md ("Speed and scale"). For each size (a ``bench.synthetic``
dataset of N messages over 1,000 end users, built once and reused): database round-trips per
request (``_round_trips``); the latency of each of ``MODES`` over HTTP against the service
served as ``make run`` serves it, after a first pass that searches each end user once
(``_first_search_of_each_user``), alternating with the floor (``bench.floor``) in
``FLOOR_BLOCKS`` blocks (``_latency_and_floor``), with the server's CPU time per request (its
processes' and PostgreSQL's); the web worker's peak RSS (``VmHWM``). Once per run, on a fresh
database: ingest and worker throughput (``bench.ingest``). The floor is the query embedding as the
service runs it; the targets (issue 45, ``bench.floor``): for ``search`` and ``context``, p50 <=
2.0 x floor, p95 <= 3.0 x floor, CPU per request <= 2.5 x the floor's CPU per embedding.

chatmemory side by side on one LoCoMo conversation: ``bench.compare_chatmemory``.
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import locomo
from bench.databases import setup_django
from bench.floor import (
    CPU_FACTOR,
    P50_FACTOR,
    P95_FACTOR,
    SERVICE_RUNTIME,
    floor_embedders,
    floor_ms,
    meets_targets,
    timed_embeddings,
)
from bench.ingest import ingest_and_worker
from bench.locomo import DEFAULT_PATH
from bench.report import RESULTS_DIR, finish, latency_figures, render, run_record, table
from bench.service import Server, bench_api_key, in_process_client, served
from bench.synthetic import DEFAULT_USERS, ensure_dataset, size_label

__all__ = ["main", "run"]

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
DEFAULT_QUERIES = 500
WARM_UP_QUERIES = 20
# The timed requests and the floor's embeddings alternate in this many blocks
# (``_latency_and_floor``), each block after the first preceded by this many untimed ones.
FLOOR_BLOCKS = 5
BLOCK_WARM_UP = 2
ROUND_TRIP_TOP_KS = (1, 5, 10, 25, 50)
INGEST_BATCHES = {1: 500, 10: 2000, 100: 5000}  # batch size -> messages sent
SMOKE = {"sizes": (2000,), "users": 100, "queries": 20, "ingest": {1: 10, 10: 20, 100: 200}}
# The requests timed, in the order each block sends them; the targets (``bench.floor``) to ``TARGET_MODES``.
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


# --- Questions ----------------------------------------------------------------------------


def _questions(path: Path, count: int, sessions: dict[str, list[str]], seed: int = 0) -> list[Question]:
    """``count`` questions: the file's questions in turn, each about a random user and one of their sessions."""
    texts = locomo.questions(path)
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
    this process by each of ``floor_embedders`` while the server is idle: the machine's
    speed drifts over a run, and in alternating blocks requests and floor sample the same
    phases. After an idle block, the first ``BLOCK_WARM_UP`` questions of each mode and
    model are run untimed (they also reopen the keep-alive connection the server closed).

    Returns:
        ``(latency, floor)``: per mode its ``latency_figures`` plus ``answer_modes`` (search:
        counts of ``answerMode``); per floor embedder its ``threads``, ``runtime`` and figures.
        Each also has ``block_p50_ms``, the median of each block (ms), to show the drift.
    """
    from tqdm import tqdm

    embedders = floor_embedders()
    for _, _, embedder in embedders.values():  # loads the models
        timed_embeddings(embedder, [q.text for q in questions[:WARM_UP_QUERIES]])
    for mode in MODES:
        for question in questions[:WARM_UP_QUERIES]:
            server.post(*_request(mode, question))
    seconds: dict[str, list[float]] = {name: [] for name in [*MODES, *embedders]}
    cpu_seconds: dict[str, float] = dict.fromkeys(seconds, 0.0)
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
                cpu_started = server.cpu_seconds()
                for question in block:
                    started = time.perf_counter()
                    data = server.post(*_request(mode, question))
                    seconds[mode].append(time.perf_counter() - started)
                    if mode == "search":
                        key = data["search"]["answerMode"]
                        answer_modes[key] = answer_modes.get(key, 0) + 1
                cpu_seconds[mode] += server.cpu_seconds() - cpu_started
            for label, (_, _, embedder) in embedders.items():
                timed_embeddings(embedder, [q.text for q in warm_up])
                block_seconds, block_cpu = timed_embeddings(embedder, [q.text for q in block])
                seconds[label] += block_seconds
                cpu_seconds[label] += block_cpu
            for name, values in seconds.items():
                block_p50s[name].append(round(statistics.median(values[-len(block) :]) * 1000, 2))
            bar.update(len(block))

    def cpu_ms(name: str) -> float:
        return round(cpu_seconds[name] * 1000 / len(seconds[name]), 2)

    latency = {
        mode: {**latency_figures(seconds[mode]), "cpu_ms": cpu_ms(mode), "block_p50_ms": block_p50s[mode]}
        for mode in MODES
    }
    latency["search"]["answer_modes"] = answer_modes
    floor = {
        label: {
            "threads": threads,
            "runtime": runtime,
            **latency_figures(seconds[label]),
            "cpu_ms": cpu_ms(label),
            "block_p50_ms": block_p50s[label],
        }
        for label, (threads, runtime, _) in embedders.items()
    }
    return latency, floor


def _round_trips(api_key: str, question: Question) -> dict[str, Any]:
    """Database queries per request: ``search`` for each ``topK`` of ``ROUND_TRIP_TOP_KS``, and ``context``."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = in_process_client(api_key)

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
        latency, floors = _latency_and_floor(server, questions, progress=progress)
        web_rss = server.peak_rss_mb()
    floor = floor_ms(floors)
    return {
        "dataset": dataset,
        "round_trips": round_trips,
        "latency": {"first_search_of_each_user": first, **latency, "query_embedding": floors},
        "floor_ms": floor,
        "targets": {mode: meets_targets(latency[mode], floors) for mode in TARGET_MODES},
        "peak_rss_mb": {"web": web_rss},
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
        **run_record("speed"),
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
        results.update(ingest_and_worker(ingest, source, progress=progress))
    return results


def _row(size: str, request: str, figures: dict[str, Any], floor: dict[str, Any], *rest: object) -> list[object]:
    p50, cpu = figures["p50_ms"], figures.get("cpu_ms")
    ratios = [f"{p50 / floor['p50_ms']:.2f}", f"{figures['p95_ms'] / floor['p50_ms']:.2f}"]
    cpu_ratio = f"{cpu / floor['cpu_ms']:.2f}" if cpu is not None and floor.get("cpu_ms") else ""
    return [size, request, p50, figures["p95_ms"], *ratios, cpu if cpu is not None else "", cpu_ratio, *rest]


def format_tables(results: dict[str, Any]) -> str:
    """The main figures as Markdown tables (docs/benchmarks.md uses them). The floor is the query embedding
    as the service runs it (``bench.floor``)."""
    header = [
        "stored messages",
        "request",
        "p50 ms",
        "p95 ms",
        "p50 / floor",
        "p95 / floor",
        "CPU ms",
        "CPU / floor's",
        "targets met",
        "round-trips",
    ]
    rows = []
    for label, size in results["sizes"].items():
        floor = size["latency"]["query_embedding"][SERVICE_RUNTIME]
        for mode in MODES:
            target = ""
            if mode in size["targets"]:
                met = size["targets"][mode]
                target = (
                    f"p50 <= {P50_FACTOR:g}x: {'yes' if met['p50_ok'] else 'NO'}; "
                    f"p95 <= {P95_FACTOR:g}x: {'yes' if met['p95_ok'] else 'NO'}; "
                    f"CPU <= {CPU_FACTOR:g}x: {'yes' if met['cpu_ok'] else 'NO'}"
                )
            trips = size["round_trips"]["context" if mode == "context" else "search"]
            trips = trips if isinstance(trips, int) else "/".join(map(str, sorted(set(trips.values()))))
            rows.append(_row(label, mode, size["latency"][mode], floor, target, trips))
        first = size["latency"]["first_search_of_each_user"]
        rows.append(_row(label, "retrieval, first search of each user", first, floor, "", ""))
        for name, figures in size["latency"]["query_embedding"].items():
            runtime = {"torch": "PyTorch", "onnxruntime": "ONNX Runtime"}.get(figures["runtime"], figures["runtime"])
            what = "the floor: as the service embeds" if name == SERVICE_RUNTIME else "a reference only"
            request = f"query embedding alone, {runtime}, {figures['threads']} thread(s) ({what})"
            rows.append(_row(label, request, figures, floor, "", ""))
    parts: list[Any] = [table(header, rows, markdown=True, left=2)]
    if results["sizes"]:
        rss = ", ".join(f"{label}: {size['peak_rss_mb']['web']} MiB" for label, size in results["sizes"].items())
        parts.append(f"\nWeb worker process peak RSS: {rss}.\n")
    if "ingest" in results:
        ingest = [[batch, f["messages_per_second"], f["ms_per_call"]] for batch, f in results["ingest"].items()]
        parts.append(table(["addMessages batch", "messages/s", "ms per call"], ingest, markdown=True))
        worker = results["worker"]
        parts.append(
            f"\nWorker: {worker['worker_messages_per_second']} messages/s against the model's raw "
            f"{worker['raw_model_messages_per_second']}/s ({worker['worker_over_raw']:.0%}; "
            f"{worker['model_inputs_per_message']} model inputs per message); peak RSS "
            f"{worker['peak_rss_mb_all_processes']} MiB over its processes "
            f"(largest {worker['peak_rss_mb_largest_process']} MiB)."
        )
    return render(*parts)


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
    return finish(results, "speed", args.output, format_tables(results))


if __name__ == "__main__":
    sys.exit(main())
