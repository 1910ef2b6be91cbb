"""This service and chatmemory 0.2.8 side by side: search latency on one LoCoMo conversation.

Run from the repository root (the first line once; it needs PyPI)::

    python3 -m venv var/chatmemory-venv && var/chatmemory-venv/bin/pip install chatmemory==0.2.8
    .venv/bin/python -m bench.compare_chatmemory                    # conv-26, all its questions
    .venv/bin/python -m bench.compare_chatmemory --questions 50

The method is in docs/benchmarks.md ("Beside chatmemory"). One OpenAI-wire server
(``bench.fake_openai.FakeOpenAI``, in this process) answers both services at once, so what is
timed is each service's own work. This service gets the conversation on a fresh database
``bench_compare_ours`` (``import_conversations`` in-process) and is served as ``make run``
serves it; chatmemory (its own venv, ``CHATMEMORY_PYTHON``) is served by uvicorn as its
``__main__`` does, on a fresh database ``bench_compare_chatmemory`` of the same PostgreSQL, and
gets the sessions through its REST API (``_load_chatmemory``). Then each question is asked of
both with default arguments over a keep-alive connection, alternating which goes first, and
the requests timed beside them, not compared, follow each pair (``_run``). Client-side wall
time; p50 / p95 / p99 (``bench.report``).

Settings are read once per process: run it as its own process (as ``make bench-chatmemory``
does), not after something else set Django up.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import locomo
from bench.databases import fresh_database, setup_django
from bench.fake_openai import FakeOpenAI
from bench.locomo import DEFAULT_PATH
from bench.report import REPO_ROOT, RESULTS_DIR, finish, latency_figures, render, table
from bench.service import JsonClient, bench_api_key, free_port, running, served, wait_for_http

__all__ = ["CHATMEMORY_PYTHON", "main", "run"]

CHATMEMORY_PYTHON = REPO_ROOT / "var" / "chatmemory-venv" / "bin" / "python"
CHATMEMORY_VERSION = "0.2.8"
SAMPLE = "conv-26"
OURS_DATABASE = "bench_compare_ours"
CHATMEMORY_DATABASE = "bench_compare_chatmemory"
WARM_UP_QUERIES = 10
DIMENSIONS = 384
CHAT_REPLY = "From the memory: they talked about it."
# What chatmemory's search ranks: derived memory only, no raw messages.
DERIVED_SOURCES = ("SUMMARY", "KNOWLEDGE", "DIARY")
# chatmemory's __main__, with our arguments (it reads them from the environment).
_CHATMEMORY_SERVER = """
import json, os, sys
import uvicorn
from fastapi import FastAPI
from chatmemory import ChatMemory
config = json.loads(sys.argv[1])
app = FastAPI(title="ChatMemory")
app.include_router(ChatMemory(**config["chatmemory"]).get_router())
uvicorn.run(app, host="127.0.0.1", port=config["port"], log_level="warning")
"""
SEARCH = """
query Search($input: SearchInput!) {
  search(input: $input) {
    ... on SearchResult { answer answerMode hits { kind id score content conversationTime sessionId speaker } }
    ... on OperationInfo { messages { message } }
  }
}
"""


def _load_ours(source: Path, sample: str) -> dict[str, int]:
    """Import the sample into ``OURS_DATABASE`` in this process; returns what is stored."""
    from django.core.management import call_command

    from memories.models import Message, Summary
    from memories.services.embeddings import embeddings_pending

    fresh_database(OURS_DATABASE)
    call_command("import_conversations", str(source), samples=[sample], verbosity=0)
    pending = embeddings_pending(kind="message").count()
    if pending:
        raise RuntimeError(f"{pending} messages were left without a vector after the import.")
    return {"messages": Message.objects.count(), "summaries": Summary.objects.count()}


def _chatmemory_config(port: int, base_url: str) -> dict[str, Any]:
    """``ChatMemory(...)`` arguments: the same PostgreSQL server as Django's, its own database."""
    from django.db import connection

    params = connection.get_connection_params()
    return {
        "port": port,
        "chatmemory": {
            "openai_api_key": "bench",
            "openai_base_url": base_url,
            "llm_model": "gpt-4o-mini",
            # chatmemory reads ``embedding_dimension`` only with this model name (else 1536); the fake ignores it.
            "embedding_model": "text-embedding-3-large",
            "embedding_dimension": DIMENSIONS,
            "db_name": CHATMEMORY_DATABASE,
            "db_user": params.get("user") or "postgres",
            "db_password": params.get("password") or "",
            "db_host": params.get("host") or "127.0.0.1",
            "db_port": int(params.get("port") or 5432),
        },
    }


@contextmanager
def _chatmemory(base_url: str, log: Path) -> Iterator[JsonClient]:
    """chatmemory served by uvicorn on a fresh ``CHATMEMORY_DATABASE``; ready for requests.

    Raises:
        RuntimeError: its venv is missing, or it exited or did not answer within 60 s.
    """
    if not CHATMEMORY_PYTHON.exists():
        raise RuntimeError(
            f"{CHATMEMORY_PYTHON} is missing: python3 -m venv var/chatmemory-venv && "
            f"var/chatmemory-venv/bin/pip install chatmemory=={CHATMEMORY_VERSION}"
        )
    fresh_database(CHATMEMORY_DATABASE, use=False)
    port = free_port()
    config = json.dumps(_chatmemory_config(port, base_url))
    with running([str(CHATMEMORY_PYTHON), "-c", _CHATMEMORY_SERVER, config], log) as process:
        wait_for_http(process, port, "/history/session_ids?user_id=nobody", log, seconds=60)
        client = JsonClient(port)
        try:
            yield client
        finally:
            client.close()


def _load_chatmemory(client: JsonClient, source: Path, sample: str) -> dict[str, int]:
    """The sample's sessions through chatmemory's API, each summarised; returns what is stored.

    Raises:
        RuntimeError: the summaries were not all written within 120 s.
    """
    from memories.importers import locomo_sessions

    sessions = [s for s in locomo_sessions(source) if s.user_id == sample]
    for session in sessions:
        messages = [
            {"role": m.role, "content": m.content, "created_at": m.created_at.isoformat(), "metadata": m.metadata}
            for m in session.messages
        ]
        client.request("POST", "/history", {"user_id": sample, "session_id": session.session_id, "messages": messages})
    # A session's summary is queued when the next one starts: the last one is summarised here.
    client.request("POST", f"/summary/create?user_id={sample}&session_id={sessions[-1].session_id}")
    deadline = time.monotonic() + 120
    while len(client.request("GET", f"/summary?user_id={sample}")["summaries"]) < len(sessions):
        if time.monotonic() > deadline:
            raise RuntimeError("chatmemory did not summarise every session within 120 s.")
        time.sleep(0.2)
    return {"messages": sum(len(s.messages) for s in sessions), "summaries": len(sessions)}


def run(
    *, source: Path = DEFAULT_PATH, sample: str = SAMPLE, questions: int | None = None, progress: bool = True
) -> dict[str, Any]:
    """Load the sample into both services and time their searches, alternating; returns the figures.

    Args:
        source: LoCoMo file.
        sample: its ``sample_id`` loaded and asked about.
        questions: at most this many of the sample's questions (default: all).
        progress: show a tqdm progress bar.

    Raises:
        RuntimeError: chatmemory's venv is missing, or a service failed to start or answer.
    """
    fake = FakeOpenAI().start()
    # A JSON reply where JSON is asked for (our fact extraction at import), a short answer otherwise.
    fake.chat_reply = lambda body: '{"facts": []}' if body.get("response_format") else CHAT_REPLY
    try:
        # Read by the settings (this process and the served one): both services on the same server.
        os.environ.update(OPENAI_API_KEY="bench", OPENAI_BASE_URL=fake.base_url, EMBEDDING_DIMENSIONS=str(DIMENSIONS))
        setup_django()
        return _run(fake, source=source, sample=sample, limit=questions, progress=progress)
    finally:
        fake.stop()


def _run(fake: FakeOpenAI, *, source: Path, sample: str, limit: int | None, progress: bool) -> dict[str, Any]:
    from django.conf import settings
    from tqdm import tqdm

    from memories.llm import get_chat_model, get_embedder

    if settings.EMBEDDING_BACKEND != "openai" or settings.CHAT_BACKEND != "openai":
        raise RuntimeError("Django was set up before the OpenAI-wire settings were: run this in a process of its own.")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    asked = locomo.questions(source, sample)[: limit or None]
    stored = {"ours": _load_ours(source, sample)}
    raw_key = bench_api_key()
    with (
        _chatmemory(fake.base_url, RESULTS_DIR / "compare-chatmemory.log") as chatmemory,
        served(OURS_DATABASE, raw_key, RESULTS_DIR / "compare-ours.log") as ours,
    ):
        stored["chatmemory"] = _load_chatmemory(chatmemory, source, sample)
        requests = {
            "ours": lambda q: ours.post(SEARCH, {"input": {"userId": sample, "query": q}}),
            "chatmemory": lambda q: chatmemory.request("POST", "/search", {"user_id": sample, "query": q}),
        }
        # Beside them, not compared: our search without the answer (no chat call), our search doing
        # chatmemory's work (derived memory only, its top 5, with the answer), and what a default search
        # spends before it ranks anything: the serving stack, and its two model calls.
        embedder, chat = get_embedder(), get_chat_model()
        beside = {
            "ours_retrieval": lambda q: ours.post(SEARCH, {"input": {"userId": sample, "query": q, "answer": False}}),
            "ours_derived_top5": lambda q: ours.post(
                SEARCH, {"input": {"userId": sample, "query": q, "topK": 5, "sources": list(DERIVED_SOURCES)}}
            ),
            "ours_serving": lambda q: ours.post("{ __typename }", {}),
            "model_calls": lambda q: (embedder.embed([q]), chat.answer(question=q, blocks=[q])),
        }
        for question in asked[:WARM_UP_QUERIES]:
            for send in [*requests.values(), *beside.values()]:
                send(question)
        seconds: dict[str, list[float]] = {name: [] for name in [*requests, *beside]}
        model_calls = 0
        for i, question in enumerate(tqdm(asked, desc="searches, alternating", disable=not progress)):
            calls_before = len(fake.requests)
            for name in list(requests) if i % 2 == 0 else list(reversed(requests)):
                started = time.perf_counter()
                requests[name](question)
                seconds[name].append(time.perf_counter() - started)
            model_calls += len(fake.requests) - calls_before
            for name, send in beside.items():
                started = time.perf_counter()
                send(question)
                seconds[name].append(time.perf_counter() - started)
    figures = {name: latency_figures(values) for name, values in seconds.items()}
    return {
        "benchmark": "compare_chatmemory",
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "sample": sample,
        "questions": len(asked),
        "chatmemory_version": CHATMEMORY_VERSION,
        "stored": stored,
        "openai_wire_requests_per_search_pair": round(model_calls / len(asked), 2),
        "latency": figures,
        "ours_faster": {  # the comparison: default arguments, both with an answer
            q: figures["ours"][f"{q}_ms"] < figures["chatmemory"][f"{q}_ms"] for q in ("p50", "p95", "p99")
        },
    }


def format_table(results: dict[str, Any]) -> str:
    """The figures as a Markdown table."""
    labels = {
        "ours": "this service (search, defaults)",
        "chatmemory": f"chatmemory {results['chatmemory_version']} (search, defaults)",
        "ours_retrieval": "this service, `answer: false` (no chat call; not compared)",
        "ours_derived_top5": "this service, chatmemory's work: summaries, knowledge, diaries, `topK: 5` (not compared)",
        "ours_serving": "this service, `{ __typename }`: HTTP, Django, the API key, GraphQL (not compared)",
        "model_calls": "the model calls of a default search alone: an embedding and a chat answer (not compared)",
    }
    rows = [
        [labels[name], f["p50_ms"], f["p95_ms"], f["p99_ms"], f["mean_ms"]] for name, f in results["latency"].items()
    ]
    return render(
        f"{results['sample']}, {results['questions']} questions, alternating; same OpenAI-wire server "
        f"({results['openai_wire_requests_per_search_pair']} model calls per pair of searches).\n",
        table(["service", "p50 ms", "p95 ms", "p99 ms", "mean ms"], rows, markdown=True),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_chatmemory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_PATH, help="LoCoMo file.")
    parser.add_argument("--sample", default=SAMPLE, help="The conversation (sample_id) loaded and asked about.")
    parser.add_argument("--questions", type=int, help="At most this many of its questions (default: all).")
    parser.add_argument(
        "--output", type=Path, help="Results file (default bench/results/compare-chatmemory-<time>.json)."
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    results = run(source=args.source, sample=args.sample, questions=args.questions)
    return finish(results, "compare-chatmemory", args.output, format_table(results))


if __name__ == "__main__":
    sys.exit(main())
