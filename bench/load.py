"""Throughput under load: concurrent clients mixing search, context and addMessages over HTTP.

Run from the repository root::

    .venv/bin/python -m bench.load                               # 1M messages, 1/8/32 clients, 1 and 2 web processes
    .venv/bin/python -m bench.load --messages 10000 --seconds 10 # quicker

On the synthetic dataset of ``bench.synthetic`` (built once, reused), the web server is started
as ``make run`` starts it (``bench.service.served``: gunicorn, no worker) with 1 and then 2 web
processes (``WEB_CONCURRENCY``). For each number of clients, every client sends requests one after
the other for ``--seconds``: 80% ``search`` (default arguments: userId and query), 10%
``context`` (a session of that user, the same question as its query), 10% ``addMessages`` (one
message to a new session). Reported per operation: requests per second, p50 / p95 / p99
latency; per run: the server's CPU seconds (web processes and PostgreSQL) per request.

The ceiling: the embedding model's raw single-query throughput on the same cores (one query per
call, as a search embeds its query; one thread per core, each with one intra-op thread),
measured in this process with nothing else running. Targets: search throughput at 32 clients
>= 70% of the ceiling; p95 at 32 clients <= 4 x the single-client p50.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench import locomo
from bench.databases import setup_django
from bench.floor import cores
from bench.locomo import DEFAULT_PATH
from bench.report import RESULTS_DIR, finish, latency_figures, render, run_record, table
from bench.service import Server, bench_api_key, served
from bench.synthetic import ensure_dataset

__all__ = ["main", "run"]

logger = logging.getLogger(__name__)

MIX = (("search", 0.8), ("context", 0.1), ("addMessages", 0.1))
SEARCH = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { answer hits { id } } } }"
CONTEXT = "query($i: ContextInput!) { context(input: $i) { ... on Context { prompt } } }"
ADD = """mutation($u: String!, $s: String!, $m: [MessageInput!]!) {
  addMessages(userId: $u, sessionId: $s, messages: $m) { __typename }
}"""


def _ceiling(texts: list[str], seconds: float) -> float:
    """Single-query embeddings per second with one thread per core (the model's raw throughput)."""
    from memories.llm.local import LocalEmbedder

    threads = cores()
    embedder = LocalEmbedder(threads=1)
    embedder.embed(["warm up"])
    done = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def loop(offset: int) -> None:
        i = offset
        while time.monotonic() < stop:
            embedder.encode([texts[i % len(texts)]])
            i += threads
            with lock:
                done[0] += 1

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(loop, range(threads)))
    return done[0] / (time.monotonic() - started)


def _load(server: Server, clients: int, seconds: float, work: list[tuple[str, str, str]], seed: int) -> dict[str, Any]:
    """``clients`` threads sending the mix for ``seconds``; latencies per operation and CPU per request."""
    latencies: dict[str, list[float]] = {name: [] for name, _ in MIX}
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    names, weights = zip(*MIX, strict=True)

    def client(number: int) -> None:
        pick = random.Random(seed * 1000 + number)
        own = server.new_client()
        sent = 0
        while time.monotonic() < stop:
            user, session, question = pick.choice(work)
            operation = pick.choices(names, weights)[0]
            started = time.perf_counter()
            if operation == "search":
                own.graphql(SEARCH, {"i": {"userId": user, "query": question}})
            elif operation == "context":
                own.graphql(CONTEXT, {"i": {"userId": user, "sessionId": session, "query": question}})
            else:
                sent += 1
                message = {"role": "user", "content": question}
                own.graphql(ADD, {"u": user, "s": f"load-{seed}-{number}-{sent}", "m": [message]})
            with lock:
                latencies[operation].append(time.perf_counter() - started)
        own.close()

    cpu_before = server.cpu_seconds()
    started = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    elapsed = time.monotonic() - started
    requests = sum(len(v) for v in latencies.values())
    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "requests_per_second": round(requests / elapsed, 1),
        "cpu_ms_per_request": round((server.cpu_seconds() - cpu_before) * 1000 / max(requests, 1), 2),
        "operations": {name: _operation(values, elapsed) for name, values in latencies.items()},
    }


def _operation(seconds: list[float], elapsed: float) -> dict[str, Any]:
    """One operation's count, rate and p50 / p95 / p99 in ms (``None`` when it was never sent)."""
    figures = latency_figures(seconds) if seconds else {}
    return {
        "count": len(seconds),
        "per_second": round(len(seconds) / elapsed, 1),
        **{key: figures.get(key) for key in ("p50_ms", "p95_ms", "p99_ms")},
    }


def run(*, messages: int, clients: Sequence[int], seconds: float, web_processes: Sequence[int]) -> dict[str, Any]:
    """Build or reuse the dataset, measure the ceiling, then every (web processes, clients) pair."""
    setup_django()
    from django.db import connection

    from memories.models import Session

    dataset = ensure_dataset(messages=messages)
    questions = locomo.questions(DEFAULT_PATH)
    pick = random.Random(0)
    sessions = list(Session.objects.values_list("user__external_id", "external_id"))
    work = [(*pick.choice(sessions), questions[i % len(questions)]) for i in range(2000)]
    api_key = bench_api_key()
    database = connection.settings_dict["NAME"]
    ceiling = _ceiling(questions, seconds=min(seconds, 10))
    runs = []
    for processes in web_processes:
        log = RESULTS_DIR / f"load-server-{processes}.log"
        with served(database, api_key, log, WEB_CONCURRENCY=str(processes)) as server:
            _load(server, 2, 3, work, seed=99)  # warm-up: models loaded, caches filled
            for count in clients:
                result = _load(server, count, seconds, work, seed=count)
                runs.append({"web_processes": processes, **result})
                logger.info("%s", json.dumps(runs[-1]))
    return {
        **run_record("load", at="created_at"),
        "dataset": dataset,
        "ceiling_queries_per_second": round(ceiling, 1),
        "runs": runs,
        "targets": _targets(runs, ceiling),
    }


def _targets(runs: list[dict[str, Any]], ceiling: float) -> dict[str, Any]:
    out = {}
    for processes in sorted({r["web_processes"] for r in runs}):
        mine = {r["clients"]: r for r in runs if r["web_processes"] == processes}
        if 1 in mine and 32 in mine:
            single_p50 = mine[1]["operations"]["search"]["p50_ms"]
            at_32 = mine[32]["operations"]["search"]
            out[f"{processes}_web"] = {
                "search_per_second_at_32_over_ceiling": round(at_32["per_second"] / ceiling, 2),
                "p95_at_32_over_single_p50": round(at_32["p95_ms"] / single_p50, 2),
            }
    return out


def format_table(results: dict[str, Any]) -> str:
    """A row per run (web processes, clients), the ceiling above it and the targets below."""
    header = ["web", "clients", "req/s", "cpu ms/req", "search/s", "search p50/p95/p99 ms", "context p50/p95 ms"]
    rows = []
    for r in results["runs"]:
        s, c, a = (r["operations"][n] for n in ("search", "context", "addMessages"))
        rows.append(
            [
                *(r[k] for k in ("web_processes", "clients", "requests_per_second", "cpu_ms_per_request")),
                s["per_second"],
                f"{s['p50_ms']}/{s['p95_ms']}/{s['p99_ms']}",
                f"{c['p50_ms']}/{c['p95_ms']}",
                f"{a['p50_ms']}/{a['p95_ms']}",
            ]
        )
    return render(
        f"ceiling: {results['ceiling_queries_per_second']} single-query embeddings/s on this machine's cores",
        table([*header, "add p50/p95 ms"], rows, left=0),
        f"targets: {json.dumps(results['targets'])}",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=30.0, help="Per number of clients.")
    parser.add_argument("--web-processes", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    results = run(messages=args.messages, clients=args.clients, seconds=args.seconds, web_processes=args.web_processes)
    return finish(results, "load", None, format_table(results))


if __name__ == "__main__":
    sys.exit(main())
