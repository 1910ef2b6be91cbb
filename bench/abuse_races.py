"""The abuse benchmark's races (``bench.abuse``): forgetting users while the worker works on them, and
restoring a dump while a client writes.

Both run against a service with its worker (``manage.py serve``) on the benchmark's database.
"""

from __future__ import annotations

import random
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.abuse_http import Answer, Background, graphql, request
from bench.report import REPO_ROOT, latency_figures

__all__ = ["ADD", "FORGET", "SUMMARISE", "Writer", "forget_race", "restore_tries"]

# How long after queueing a user's summaries the user is forgotten (at random in this range): the worker
# polls its queue every 0.5 s, and summarises a session in a fraction of a second.
FORGET_AFTER_SECONDS = (0.2, 1.5)

ADD = """mutation Add($u: String!, $s: String!, $m: [MessageInput!]!) {
  addMessages(userId: $u, sessionId: $s, messages: $m) { __typename ... on OperationInfo { messages { kind code } } }
}"""
SUMMARISE = """mutation Summarise($u: String!) {
  createSummaries(userId: $u) { __typename ... on OperationInfo { messages { kind code } } }
}"""
BACKLOG = "query($u: String!) { backlog(userId: $u) { messagesWaitingForVector } }"
FORGET = """mutation Forget($u: String!) {
  forgetUser(userId: $u) { __typename ... on OperationInfo { messages { kind code } } }
}"""


class Writer(Background):
    """A client adding one message at a time to ``user`` (a new session every ``per_session``), every
    ``every`` seconds (0: back to back), while the block runs; ``codes`` counts its answers (``ok``, or
    the first error code)."""

    def __init__(self, port: int, key: str, user: str, *, per_session: int = 5, every: float = 0.0) -> None:
        super().__init__()
        self.every = every
        self.port, self.key, self.user, self.per_session = port, key, user, per_session
        self.codes: Counter[str] = Counter()
        self.sent = 0

    def step(self) -> None:
        message = {"role": "user", "content": f"Note {self.sent}: I went swimming and cooked ramen.",
                   "externalId": str(self.sent)}  # fmt: skip
        variables = {"u": self.user, "s": f"w{self.sent // self.per_session}", "m": [message]}
        self.codes[graphql(self.port, self.key, ADD, variables, timeout=30).code] += 1
        self.sent += 1


def _failed(answer: Answer, typename: str) -> bool:
    field = next(iter((answer.body or {}).get("data") or {}), None)
    data = ((answer.body or {}).get("data") or {}).get(field) if field else None
    return answer.status != 200 or bool(answer.codes) or not data or data.get("__typename") != typename


def forget_race(
    port: int, key: str, sessions: Sequence[tuple[str, list[dict[str, Any]]]], *, iterations: int
) -> dict[str, Any]:
    """``iterations`` times: store the conversation ``sessions`` (``(session id, messages)``, one
    ``addMessages`` each) for a new user; once the worker has embedded it, ask for its summaries
    (``createSummaries``) and forget the user 0.2-1.5 s later (``FORGET_AFTER_SECONDS``), while the
    worker summarises it and another client keeps the worker busy. Returns the failures, by code, of
    the forgets and of the stores."""
    forgets: Counter[str] = Counter()
    stores: Counter[str] = Counter()
    pick = random.Random(43)
    # Ten messages a second: work for the worker (embeddings, a summary every fifth), not a flood.
    with Writer(port, key, "abuse-worker-load", every=0.1) as writer:
        for i in range(iterations):
            user = f"forget-{i}"
            for session_id, messages in sessions:
                answer = graphql(port, key, ADD, {"u": user, "s": session_id, "m": messages}, timeout=60)
                if _failed(answer, "AddMessagesResult"):
                    stores[answer.code] += 1
            _embedded(port, key, user)
            answer = graphql(port, key, SUMMARISE, {"u": user}, timeout=60)
            if _failed(answer, "QueuedSummariesResult"):
                stores[answer.code] += 1
            time.sleep(pick.uniform(*FORGET_AFTER_SECONDS))  # the worker is summarising the user
            answer = graphql(port, key, FORGET, {"u": user}, timeout=60)
            if _failed(answer, "ForgetUserResult"):
                forgets[answer.code] += 1
    return {"forget_failures": dict(forgets), "store_failures": dict(stores), "writer": dict(writer.codes)}


def _embedded(port: int, key: str, user: str, *, seconds: float = 60) -> None:
    """Wait (at most ``seconds``) until the worker has embedded the user's messages."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = graphql(port, key, BACKLOG, {"u": user}, timeout=30).body or {}
        if ((body.get("data") or {}).get("backlog") or {}).get("messagesWaitingForVector") == 0:
            return
        time.sleep(0.2)


class _Probe(Background):
    """``GET /readyz`` every 0.2 s while the block runs: each answer's status and seconds."""

    every = 0.2

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.answers: list[Answer] = []

    def step(self) -> None:
        self.answers.append(request(self.port, "GET", "/readyz", timeout=30))


def restore_tries(port: int, key: str, command: Sequence[str], *, tries: int, env: dict[str, str]) -> dict[str, Any]:
    """Run the restore ``command`` (in the repository, with ``env``) ``tries`` times, each while a client
    writes and a probe asks ``/readyz``. Returns how many succeeded, the first failures' last lines,
    the ``/readyz`` answers (how many said 503, the slowest of those, the latencies of all) and the
    writer's answers by code."""
    succeeded, failures, seconds = 0, [], []
    probes: list[Answer] = []
    codes: Counter[str] = Counter()
    for attempt in range(tries):
        with Writer(port, key, f"restore-writer-{attempt}") as writer, _Probe(port) as probe:
            time.sleep(1)
            started = time.monotonic()
            done = subprocess.run(list(command), cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
            seconds.append(time.monotonic() - started)
            time.sleep(1)
        codes.update(writer.codes)
        probes += probe.answers
        if done.returncode == 0:
            succeeded += 1
        else:
            failures.append(done.stderr.strip().splitlines()[-3:])
    return {
        "tries": tries,
        "succeeded": succeeded,
        "failures": failures[:3],
        "restore_seconds_median": round(sorted(seconds)[len(seconds) // 2], 1),
        "readyz_503": sum(a.status == 503 for a in probes),
        "readyz_503_slowest_seconds": round(max((a.seconds for a in probes if a.status == 503), default=0), 2),
        "readyz": latency_figures([a.seconds for a in probes]),
        "writer": dict(codes),
    }
