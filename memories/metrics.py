"""Prometheus metrics (prometheus-client): request latency per GraphQL operation, search stage
timings, and the background work's backlog read from the database at each scrape.

``/metrics`` is served to clients sending ``Authorization: Bearer <METRICS_TOKEN>`` (and to no one
while that setting is empty: behind a proxy on the same host every client looks local). With several web processes, set
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode) so that a scrape sums them.
"""

from __future__ import annotations

import functools
import hmac
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from graphql import FieldNode, OperationDefinitionNode
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector
from strawberry import Schema
from strawberry.extensions import SchemaExtension
from strawberry.types import get_object_definition

__all__ = [
    "FACTS_LEFT_OUT",
    "GRAPHQL_SECONDS",
    "MODEL_CALLS",
    "SEARCH_STAGE_SECONDS",
    "MetricsExtension",
    "counted_call",
    "metrics_view",
]

GRAPHQL_SECONDS = Histogram(
    "memory_graphql_request_seconds",
    "Time to execute a GraphQL operation, by its first top-level field.",
    ["field"],
    buckets=(0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
SEARCH_STAGE_SECONDS = Histogram(
    "memory_search_stage_seconds",
    "Time of each stage of search and context: embed, retrieve (which runs while the query is embedded), answer.",
    ["stage"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
MODEL_CALLS = Counter(
    "memory_model_calls",
    "Calls to the models by search and context, by kind (embed, answer) and outcome.",
    ["kind", "outcome"],
)
FACTS_LEFT_OUT = Counter(
    "memory_facts_left_out",
    "Facts a chat model wrote that did not fit the fact schema, even when asked again, and were not stored.",
)


@contextmanager
def counted_call(kind: str) -> Iterator[None]:
    """Count one model call of ``kind`` (``embed``, ``answer``) in ``MODEL_CALLS``, by outcome."""
    try:
        yield
    except Exception:
        MODEL_CALLS.labels(kind, "failure").inc()
        raise
    MODEL_CALLS.labels(kind, "success").inc()


class MetricsExtension(SchemaExtension):
    """Times each GraphQL operation into ``GRAPHQL_SECONDS``, labelled by the first top-level field it runs.

    Only the schema's own root field names become labels (anything else is ``other``), so clients
    cannot create series.
    """

    def on_execute(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        GRAPHQL_SECONDS.labels(self._root_field()).observe(time.perf_counter() - started)

    def _root_field(self) -> str:
        context = self.execution_context
        document = context.graphql_document
        roots = _root_fields(context.schema)
        for definition in getattr(document, "definitions", ()):
            if not isinstance(definition, OperationDefinitionNode):
                continue
            if context.operation_name and getattr(definition.name, "value", None) != context.operation_name:
                continue
            for selection in definition.selection_set.selections:
                if isinstance(selection, FieldNode) and selection.name.value in roots:
                    return selection.name.value
            break
        return "other"


@functools.cache
def _root_fields(schema: Schema) -> frozenset[str]:
    """The names clients write for the schema's ``Query`` and ``Mutation`` fields."""
    names = schema.config.name_converter
    roots = (root for root in (schema.query, schema.mutation) if root is not None)
    return frozenset(
        names.from_field(field) for root in roots for field in get_object_definition(root, strict=True).fields
    )


class BacklogCollector(Collector):
    """Gauges read from the database at each scrape: embedding and summary backlogs, summary lag, queue depth,
    and the worker's heartbeat."""

    def collect(self) -> Iterator[Metric]:
        from django_q.brokers import get_broker

        from memories.backlog import backlog_totals_get
        from memories.health import worker_sweep_overdue_seconds

        totals = backlog_totals_get()
        yield GaugeMetricFamily(
            "memory_embedding_backlog_messages",
            "Messages waiting for a vector.",
            value=totals.messages_waiting_for_vector,
        )
        yield GaugeMetricFamily(
            "memory_summary_backlog_sessions",
            "Sessions whose summary is missing or behind their newest message.",
            value=totals.sessions_waiting_for_summary,
        )
        due = totals.oldest_summary_due_at
        lag = 0.0 if due is None else max(0.0, (timezone.now() - due).total_seconds())
        yield GaugeMetricFamily(
            "memory_summary_lag_seconds", "How long the most overdue session summary is past its due time.", value=lag
        )
        yield GaugeMetricFamily(
            "memory_task_queue_depth", "Tasks waiting in the queue.", value=get_broker().queue_size()
        )
        overdue = worker_sweep_overdue_seconds()
        if overdue is not None:
            yield GaugeMetricFamily(
                "memory_worker_sweep_overdue_seconds",
                "The worker's heartbeat: seconds since its periodic sweep was due (0 while a worker runs it on time).",
                value=overdue,
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
    scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
    if not token or scheme.lower() != "bearer" or not hmac.compare_digest(sent.strip().encode(), token.encode()):
        return HttpResponse("Forbidden: set METRICS_TOKEN and send it as a Bearer token.\n", status=403)
    registry = _registry()
    body = generate_latest(registry)
    backlog_registry = CollectorRegistry()
    backlog_registry.register(_BACKLOG)
    return HttpResponse(body + generate_latest(backlog_registry), content_type=CONTENT_TYPE_LATEST)
