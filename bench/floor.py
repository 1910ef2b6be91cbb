"""The floor of ``bench.speed``: a query embedded alone, as the service itself embeds it, and issue 45's
targets against it.

The floor is the query embedding the service runs in its web process: the offline model in
``EMBEDDING_RUNTIME`` (ONNX Runtime by default) with the web process's ``EMBEDDING_THREADS``,
measured in this process (``SERVICE_RUNTIME``). No search can beat it: a search embeds its query
once. The same model in PyTorch (``PYTORCH_REFERENCE``, same threads) is reported beside it as a
reference only, never as the floor. Each is timed in wall-clock milliseconds and in CPU
milliseconds of this process (``time.process_time``) per embedding.

The targets (issue 45), for ``search`` and ``context``: p50 <= ``P50_FACTOR`` x floor, p95 <=
``P95_FACTOR`` x floor, server CPU per request <= ``CPU_FACTOR`` x the floor's CPU per embedding.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CPU_FACTOR",
    "P50_FACTOR",
    "P95_FACTOR",
    "PYTORCH_REFERENCE",
    "SERVICE_RUNTIME",
    "cores",
    "floor_embedders",
    "floor_ms",
    "meets_targets",
    "timed_embeddings",
]

SERVICE_RUNTIME = "service_runtime"
PYTORCH_REFERENCE = "pytorch_reference"
P50_FACTOR = 2.0
P95_FACTOR = 3.0
CPU_FACTOR = 2.5


def cores() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def floor_embedders() -> dict[str, tuple[int, str, Any]]:
    """The in-process models timed: label -> ``(threads, runtime, LocalEmbedder)``: the service's runtime (the
    floor) and, when that is not PyTorch, PyTorch as a reference. Each is a model of its own."""
    from django.conf import settings

    from memories.llm.local import LocalEmbedder

    runs = [(SERVICE_RUNTIME, settings.EMBEDDING_THREADS, settings.EMBEDDING_RUNTIME)]
    if settings.EMBEDDING_RUNTIME != "torch":
        runs.append((PYTORCH_REFERENCE, settings.EMBEDDING_THREADS, "torch"))
    return {
        label: (threads, runtime, LocalEmbedder(threads=threads, runtime=runtime, cache_dir=settings.MODEL_CACHE_DIR))
        for label, threads, runtime in runs
    }


def timed_embeddings(embedder: Any, texts: Sequence[str]) -> tuple[list[float], float]:
    """Embed each text alone, one after the other.

    Returns:
        ``(seconds, cpu_seconds)``: the wall-clock seconds of each embedding, and this process's CPU
        seconds for all of them.
    """
    seconds = []
    cpu_started = time.process_time()
    for text in texts:
        started = time.perf_counter()
        embedder.embed([text])
        seconds.append(time.perf_counter() - started)
    return seconds, time.process_time() - cpu_started


def floor_ms(floors: dict[str, dict[str, float]]) -> float:
    """The floor: the median query embedding as the service runs it, in ms."""
    return floors[SERVICE_RUNTIME]["p50_ms"]


def meets_targets(figures: dict[str, float], floors: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Issue 45's targets for one request's figures (``p50_ms``, ``p95_ms``, ``cpu_ms``) against the floor.

    Returns:
        ``{"p50_over_floor", "p95_over_floor", "cpu_over_floor", "p50_ok", "p95_ok", "cpu_ok"}``.
    """
    floor = floors[SERVICE_RUNTIME]
    ratios = {
        "p50_over_floor": round(figures["p50_ms"] / floor["p50_ms"], 2),
        "p95_over_floor": round(figures["p95_ms"] / floor["p50_ms"], 2),
        "cpu_over_floor": round(figures["cpu_ms"] / floor["cpu_ms"], 2) if floor.get("cpu_ms") else None,
    }
    return {
        **ratios,
        "p50_ok": ratios["p50_over_floor"] <= P50_FACTOR,
        "p95_ok": ratios["p95_over_floor"] <= P95_FACTOR,
        "cpu_ok": ratios["cpu_over_floor"] is not None and ratios["cpu_over_floor"] <= CPU_FACTOR,
    }
