"""Ingest and worker throughput, for ``bench.speed`` (its steps 5 and 6), on a fresh database ``bench_ingest``.

``addMessages`` is sent over HTTP in batches, each call a new end user's session (so no
summary work is queued), the worker stopped; then the model's raw batch throughput on what the
worker embeds for those messages is measured in this process, and the worker is started as
``make worker`` starts it and timed until every message has its vector.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

from bench import locomo
from bench.databases import fresh_database
from bench.report import RESULTS_DIR
from bench.service import bench_api_key, child_env, peak_rss_mb, running, served

__all__ = ["INGEST_DATABASE", "ingest_and_worker"]

INGEST_DATABASE = "bench_ingest"
ADD_MESSAGES = """
mutation Add($userId: String!, $sessionId: String!, $messages: [MessageInput!]!) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    ... on AddMessagesResult { skipped }
    ... on OperationInfo { messages { message } }
  }
}
"""


def ingest_and_worker(batches: dict[int, int], source: Path, *, progress: bool = True) -> dict[str, Any]:
    """Time ``addMessages`` per batch size (batch size -> messages sent), then the worker; returns the figures.

    Returns:
        ``{"ingest": {batch: {"messages", "seconds", "messages_per_second", "ms_per_call"}},
        "worker": {...}}`` (see ``bench.speed``'s docstring, steps 5 and 6).

    Raises:
        RuntimeError: the server or the worker failed, or the worker took over 30 minutes.
    """
    import psutil
    from django.conf import settings
    from tqdm import tqdm

    from memories.llm import get_embedder
    from memories.models import Message
    from memories.services.embeddings import embedding_parts, embeddings_pending

    fresh_database(INGEST_DATABASE)
    raw_key = bench_api_key()
    turns = [text for _, text in locomo.turns(source)]
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
    command = [sys.executable, "manage.py", "serve", "worker"]
    with running(command, log, child_env(INGEST_DATABASE, LOG_LEVEL="WARNING")) as worker:
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
        worker_rss = peak_rss_mb(processes)
        largest = max(peak_rss_mb([pid]) for pid in processes)
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
