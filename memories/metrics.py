"""Prometheus metrics (prometheus-client): request latency per GraphQL operation, search stage
timings, and the background work's backlog read from the database at each scrape.

``/metrics`` is served to loopback clients, or to any client sending ``Authorization: Bearer
<METRICS_TOKEN>`` when that setting is set. With several web processes, set
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode) so that a scrape sums them.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector
from strawberry.extensions import SchemaExtension

__all__ = ["GRAPHQL_SECONDS", "MODEL_CALLS", "SEARCH_STAGE_SECONDS", "MetricsExtension", "metrics_view"]

GRAPHQL_SECONDS = Histogram(
    "memory_graphql_request_seconds",
    "Time to execute a GraphQL operation, by its first top-level field.",
    ["field"],
    buckets=(0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
SEARCH_STAGE_SECONDS = Histogram(
    "memory_search_stage_seconds",
    "Time of each stage of search and context: embed, retrieve, answer.",
    ["stage"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
MODEL_CALLS = Counter(
    "memory_model_calls",
    "Calls to the models by search and context, by kind (embed, answer) and outcome.",
    ["kind", "outcome"],
)


class MetricsExtension(SchemaExtension):
    """Times each GraphQL operation into ``GRAPHQL_SECONDS``, labelled by its first top-level field."""

    def on_execute(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        document = self.execution_context.graphql_document
        field = "unknown"
        if document is not None:
            for definition in document.definitions:
                selections = getattr(getattr(definition, "selection_set", None), "selections", None)
                if selections:
                    field = getattr(getattr(selections[0], "name", None), "value", "unknown")
                    break
        GRAPHQL_SECONDS.labels(field).observe(time.perf_counter() - started)


class BacklogCollector(Collector):
    """Gauges read from the database at each scrape: embedding backlog, summary lag, queue depth."""

    def collect(self) -> Iterator[Metric]:
        from django_q.brokers import get_broker

        from memories.backlog import backlog_get

        backlog = backlog_get(limit=1)
        waiting = backlog.messages_waiting_for_vector
        yield GaugeMetricFamily("memory_embedding_backlog_messages", "Messages waiting for a vector.", value=waiting)
        pending = backlog.sessions_waiting_for_summary
        lag = max(0.0, (timezone.now() - pending[0].due_at).total_seconds()) if pending else 0.0
        yield GaugeMetricFamily(
            "memory_summary_lag_seconds", "How long the most overdue session summary is past its due time.", value=lag
        )
        yield GaugeMetricFamily(
            "memory_task_queue_depth", "Tasks waiting in the queue.", value=get_broker().queue_size()
        )


_BACKLOG = BacklogCollector()


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """The metrics in Prometheus' text format; HTTP 403 for a caller that may not read them."""
    token = settings.METRICS_TOKEN
    if token:
        scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
        allowed = scheme.lower() == "bearer" and hmac.compare_digest(sent.strip().encode(), token.encode())
    else:
        allowed = request.META.get("REMOTE_ADDR") in {"127.0.0.1", "::1"}
    if not allowed:
        return HttpResponse("Forbidden: set METRICS_TOKEN and send it as a Bearer token.\n", status=403)
    registry = _registry()
    body = generate_latest(registry)
    backlog_registry = CollectorRegistry()
    backlog_registry.register(_BACKLOG)
    return HttpResponse(body + generate_latest(backlog_registry), content_type=CONTENT_TYPE_LATEST)
