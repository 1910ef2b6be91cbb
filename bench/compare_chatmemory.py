"""This service and chatmemory 0.2.8 side by side: search latency on one LoCoMo conversation.

Run from the repository root (the first line once; it needs PyPI)::

    python3 -m venv var/chatmemory-venv && var/chatmemory-venv/bin/pip install chatmemory==0.2.8
    .venv/bin/python -m bench.compare_chatmemory                    # conv-26, all its questions
    .venv/bin/python -m bench.compare_chatmemory --questions 50

What runs, in this order:

1. One OpenAI-wire server for both services (``tests.fake_openai.FakeOpenAI``, in this
   process): embeddings (a hashed bag of words, 384 dimensions) and chat replies at once, so
   neither service waits on a model and what is timed is each service's own work.
2. This service on a fresh database ``bench_compare_ours``, with ``OPENAI_API_KEY`` and
   ``OPENAI_BASE_URL`` pointing at that server (its embedder and chat model both OpenAI-wire):
   the conversation imported in-process (``import_conversations``; embeddings and summaries
   written at once, django-q2 in sync mode), then served as ``make run`` serves it
   (``bench.speed.served``: gunicorn).
3. chatmemory (its own venv, ``CHATMEMORY_PYTHON``) served by uvicorn as its ``__main__``
   does, on a fresh database ``bench_compare_chatmemory`` of the same PostgreSQL, pointing at
   the same server. Its API: ``POST /history`` per session (a new session queues the previous
   one's summary, an LLM call and two embeddings), ``POST /summary/create`` for the last
   session; the benchmark waits until every session has its summary (``GET /summary``).
   chatmemory reads ``embedding_dimension`` only with the model name
   ``text-embedding-3-large`` (otherwise 1536); the server ignores the name.
4. The sample's questions, each asked of both services over a keep-alive HTTP connection,
   alternating which goes first; both with default arguments: ours ``search(input: {userId,
   query})`` (hits and a generated answer: an embedding and a chat call), chatmemory ``POST
   /search {user_id, query}`` (top 5 summaries, knowledge and diaries, and an answer: an
   embedding and a chat call). Client-side wall time; p50 / p95 / p99 (nearest-rank).
   Beside them, not compared, after each pair: ours with ``answer: false``; ours doing
   chatmemory's work (``sources: [SUMMARY, KNOWLEDGE, DIARY], topK: 5``, with the answer); ours
   answering ``{ __typename }`` (what any request costs: HTTP, Django, the API key, GraphQL); and
   the two model calls of a default search alone, made in this process with our backends (an
   embedding, then a chat answer over one block).

Settings are read once per process: run it as its own process (``bench.speed --chatmemory``
does), not after something else set Django up.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.retrieval import DEFAULT_PATH, REPO_ROOT, RESULTS_DIR, setup_django

__all__ = ["CHATMEMORY_PYTHON", "main", "run"]

logger = logging.getLogger(__name__)

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


@dataclass
class JsonClient:
    """A keep-alive JSON-over-HTTP connection to 127.0.0.1:``port``."""

    port: int
    headers: dict[str, str]
    connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:  # JSON
        """Send one request; returns the decoded JSON body.

        A keep-alive connection the server closed while idle is opened again and the request
        sent once more.

        Raises:
            RuntimeError: an HTTP status other than 200.
        """
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", **self.headers}
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                payload = response.read()
                break
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
        if response.status != 200:
            raise RuntimeError(f"{method} {path} failed ({response.status}): {payload[:500]!r}")
        return json.loads(payload)


def _recreate_database(name: str) -> None:
    from bench.synthetic import _connect_admin

    with _connect_admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')


def _load_ours(source: Path, sample: str) -> dict[str, int]:
    """Import the sample into ``OURS_DATABASE`` in this process; returns what is stored."""
    from django.core.management import call_command

    from bench.synthetic import use_database
    from memories.models import Message, Summary
    from memories.services.embeddings import embeddings_pending

    _recreate_database(OURS_DATABASE)
    use_database(OURS_DATABASE)
    call_command("migrate", verbosity=0)
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
    from bench.speed import free_port

    if not CHATMEMORY_PYTHON.exists():
        raise RuntimeError(
            f"{CHATMEMORY_PYTHON} is missing: python3 -m venv var/chatmemory-venv && "
            f"var/chatmemory-venv/bin/pip install chatmemory=={CHATMEMORY_VERSION}"
        )
    _recreate_database(CHATMEMORY_DATABASE)
    port = free_port()
    config = json.dumps(_chatmemory_config(port, base_url))
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(CHATMEMORY_PYTHON), "-c", _CHATMEMORY_SERVER, config], stdout=out, stderr=subprocess.STDOUT
        )
    client = JsonClient(port=port, headers={})
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"chatmemory exited ({process.returncode}); see {log}.")
            try:
                client.request("GET", "/history/session_ids?user_id=nobody")
                break
            except OSError:
                client.connection = None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"chatmemory did not start in 60 s; see {log}.") from None
                time.sleep(0.2)
        yield client
    finally:
        if client.connection is not None:
            client.connection.close()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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


def _questions(source: Path, sample: str, limit: int | None) -> list[str]:
    samples = [s for s in json.loads(source.read_text()) if s["sample_id"] == sample]
    if not samples:
        raise ValueError(f"{source} has no sample {sample}.")
    questions = [qa["question"] for qa in samples[0]["qa"] if qa.get("question")]
    return questions[:limit] if limit else questions


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
    from tests.fake_openai import FakeOpenAI

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


def _run(fake: Any, *, source: Path, sample: str, limit: int | None, progress: bool) -> dict[str, Any]:
    from django.conf import settings
    from tqdm import tqdm

    from bench.speed import bench_api_key, latency_figures, served
    from memories.llm import get_chat_model, get_embedder

    if settings.EMBEDDING_BACKEND != "openai" or settings.CHAT_BACKEND != "openai":
        raise RuntimeError("Django was set up before the OpenAI-wire settings were: run this in a process of its own.")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    asked = _questions(source, sample, limit)
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
    lines = [
        f"{results['sample']}, {results['questions']} questions, alternating; same OpenAI-wire server "
        f"({results['openai_wire_requests_per_search_pair']} model calls per pair of searches).",
        "",
        "| service | p50 ms | p95 ms | p99 ms | mean ms |",
        "| --- | --- | --- | --- | --- |",
    ]
    labels = {
        "ours": "this service (search, defaults)",
        "chatmemory": f"chatmemory {results['chatmemory_version']} (search, defaults)",
        "ours_retrieval": "this service, `answer: false` (no chat call; not compared)",
        "ours_derived_top5": "this service, chatmemory's work: summaries, knowledge, diaries, `topK: 5` (not compared)",
        "ours_serving": "this service, `{ __typename }`: HTTP, Django, the API key, GraphQL (not compared)",
        "model_calls": "the model calls of a default search alone: an embedding and a chat answer (not compared)",
    }
    for name, figures in results["latency"].items():
        lines.append(
            f"| {labels[name]} | {figures['p50_ms']} | {figures['p95_ms']} | {figures['p99_ms']} | "
            f"{figures['mean_ms']} |"
        )
    return "\n".join(lines)


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
    output = args.output or RESULTS_DIR / f"compare-chatmemory-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    output.write_text(json.dumps(results, indent=1) + "\n")
    print(format_table(results))
    print(f"results: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
