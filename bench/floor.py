"""The floor of ``bench.speed`` (a query embedded alone in this process, the time no search can beat), and issue
21's targets against it.

The floor is the offline model as sentence-transformers runs it, in PyTorch, measured with a
thread per core (``every_core``) and with the web process's thread count (``web_process``,
``EMBEDDING_THREADS``); the faster median is the floor (``floor_ms``). ``SERVICE_RUNTIME``: the
runtime the service embeds with (``EMBEDDING_RUNTIME``), at the web process's thread count; not
the floor, reported beside it, and absent when that runtime is torch.

The targets (issue 21), for ``search`` and ``context``: p50 <= ``FLOOR_FACTOR`` x floor +
``FLOOR_MARGIN_MS``, p95 <= ``P95_MS``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

__all__ = [
    "FLOOR_FACTOR",
    "FLOOR_MARGIN_MS",
    "P95_MS",
    "SERVICE_RUNTIME",
    "cores",
    "floor_embedders",
    "floor_ms",
    "meets_targets",
    "timed_embeddings",
]

SERVICE_RUNTIME = "service_runtime"
FLOOR_FACTOR = 1.5
FLOOR_MARGIN_MS = 5.0
P95_MS = 50.0


def cores() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def floor_embedders() -> dict[str, tuple[int, str, Any]]:
    """The in-process models the floor is measured with: label -> ``(threads, runtime, LocalEmbedder)``.

    Each is a model of its own: torch's thread count is set on load.
    """
    from django.conf import settings

    from memories.llm.local import LocalEmbedder

    runs = [("every_core", cores(), "torch"), ("web_process", settings.EMBEDDING_THREADS, "torch")]
    if settings.EMBEDDING_RUNTIME != "torch":
        runs.append((SERVICE_RUNTIME, settings.EMBEDDING_THREADS, settings.EMBEDDING_RUNTIME))
    return {
        label: (threads, runtime, LocalEmbedder(threads=threads, runtime=runtime, cache_dir=settings.MODEL_CACHE_DIR))
        for label, threads, runtime in runs
    }


def timed_embeddings(embedder: Any, texts: Sequence[str]) -> list[float]:
    """Seconds to embed each text alone, one after the other."""
    seconds = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed([text])
        seconds.append(time.perf_counter() - started)
    return seconds


def floor_ms(floors: dict[str, dict[str, float]]) -> float:
    """The floor: the faster median of the two PyTorch measurements, in ms."""
    return min(floors[name]["p50_ms"] for name in ("every_core", "web_process"))


def meets_targets(figures: dict[str, float], floor: float) -> dict[str, Any]:
    """Issue 21's targets for one request's latency figures against the floor (ms).

    Returns:
        ``{"p50_over_floor", "p50_limit_ms", "p50_ok", "p95_ok"}``: the limit is
        ``FLOOR_FACTOR`` x floor + ``FLOOR_MARGIN_MS``; p95 must be at most ``P95_MS``.
    """
    limit = FLOOR_FACTOR * floor + FLOOR_MARGIN_MS
    return {
        "p50_over_floor": round(figures["p50_ms"] / floor, 2),
        "p50_limit_ms": round(limit, 2),
        "p50_ok": figures["p50_ms"] <= limit,
        "p95_ok": figures["p95_ms"] <= P95_MS,
    }
