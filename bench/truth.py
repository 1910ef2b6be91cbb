"""The current truth about a user: does a bot get what is true now, not what was said once?

Run from the repository root::

    .venv/bin/python -m bench.truth                         # bench/data/truth_dev.json, every configuration
    .venv/bin/python -m bench.truth bench/data/truth_holdout.json --config default
    .venv/bin/python -m bench.truth --smoke                 # two users, one configuration

Data: scenario files written for this benchmark (``bench/data/truth_*.json``; the format is in
``bench/data/README.md``): simulated users who talk to a chatbot over several sessions and days
(chit-chat, the assistant's fillers, the user's own questions, facts in varied phrasing, facts
that change later, facts about other people, hypotheticals and negations), then ask *probes* in
a new session: questions about a fact (``fact``), about a fact that changed (``changed``), or
about nothing they ever said (``unrelated``). Each probe names the words that show the current
value (``current``) and, for a changed fact, the replaced one (``stale``).

How, per configuration, in a throwaway database and through the public path a bot uses:

1. Each session is sent with one ``addMessages`` over GraphQL (in-process, an all-users API
   key); the worker's tasks run as each request commits (django-q2 in sync mode). Sessions
   left unsummarised are then summarised as the idle sweep does (``summaries_enqueue_stale``),
   which raises their facts.
2. Each probe is the first user message of a new session two days after the last one, sent as
   a bot sends it: ``addMessages { context }``; then ``search`` with default arguments (only
   ``userId`` and ``query``).

Configurations: ``default`` (the settings a newcomer gets), ``approval-first``
(``KNOWLEDGE_CANDIDATES_NEED_APPROVAL`` on, nothing approved: what raw turns alone give) and
``approved`` (approval on, then every raised fact approved by a curator).

Scores (the memories are the context prompt's part before its recent window):

- ``current_in_context``: a ``fact`` or ``changed`` probe whose memories hold a ``current`` word;
  ``current_in_answer``: whose search answer does;
- ``stale_first``: a ``changed`` probe whose memories hold a ``stale`` word before any
  ``current`` one, or without any (shown above or instead of the current value); the same for
  the answer;
- ``echo_share``: of all message memories, the share whose matched turn is a user's question
  (it ends with "?") or an assistant turn of at most six words (an acknowledgement, a filler);
- ``gate``: an ``unrelated`` probe whose context holds no memories;
- ``prompt_tokens``: the context prompt's tokens (``tokens.prompt``), median over probes.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.databases import setup_django, throwaway_database, use_kept_database
from bench.report import finish, render, table
from bench.service import graphql_in_process, in_process_client

__all__ = ["CONFIGURATIONS", "DEFAULT_PATH", "main", "run", "score_probe"]

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "truth_dev.json"
CONFIGURATIONS = ("default", "approval-first", "approved")
SMOKE_USERS = 2
# The gap between a user's last session and the probes, and between two probes.
PROBE_DELAY = timedelta(days=2)
PROBE_GAP = timedelta(minutes=20)
TURN_GAP = timedelta(seconds=45)
# An assistant turn this short is an acknowledgement or a filler, not a memory.
FILLER_MAX_WORDS = 6

_ADD = """
mutation Add($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $withContext: Boolean!) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    __typename
    ... on AddMessagesResult {
      context @include(if: $withContext) {
        memories { kind content turns { role content isHit } }
        prompt
        tokens { prompt memories }
      }
    }
    ... on OperationInfo { messages { field message } }
  }
}
"""
_SEARCH = """
query Ask($input: SearchInput!) {
  search(input: $input) {
    __typename
    ... on SearchResult { answer found hits { kind content } }
    ... on OperationInfo { messages { field message } }
  }
}
"""
_WINDOW_HEADING = "## Recent conversation"


def _memories_text(prompt: str) -> str:
    return prompt.split(_WINDOW_HEADING, 1)[0].lower()


def _first(text: str, words: Sequence[str]) -> int | None:
    found = [text.find(w.lower()) for w in words if w.lower() in text]
    return min(found) if found else None


def _stale_first(text: str, probe: dict[str, Any]) -> bool:
    stale = _first(text, probe["stale"])
    current = _first(text, probe["current"])
    return stale is not None and (current is None or stale < current)


def _is_echo(memory: dict[str, Any]) -> bool:
    if memory["kind"] != "MESSAGE":
        return False
    turn = next((t for t in memory["turns"] if t["isHit"]), None)
    if turn is None:
        return False
    content = turn["content"].strip()
    if turn["role"] == "user":
        return content.endswith("?")
    return turn["role"] == "assistant" and len(content.split()) <= FILLER_MAX_WORDS


def score_probe(probe: dict[str, Any], context: dict[str, Any], answer: str) -> dict[str, Any]:
    """One probe's scores from its ``context`` (the GraphQL ``context`` object) and search ``answer``."""
    memories = _memories_text(context["prompt"])
    answer = answer.lower()
    scores: dict[str, Any] = {
        "memories": len(context["memories"]),
        "echoes": sum(_is_echo(m) for m in context["memories"]),
        "message_memories": sum(m["kind"] == "MESSAGE" for m in context["memories"]),
        "prompt_tokens": context["tokens"]["prompt"],
    }
    if probe["kind"] == "unrelated":
        scores["gate"] = not context["memories"]
    else:
        scores["current_in_context"] = _first(memories, probe["current"]) is not None
        scores["current_in_answer"] = _first(answer, probe["current"]) is not None
    if probe["kind"] == "changed":
        scores["stale_first"] = _stale_first(memories, probe)
        scores["stale_first_in_answer"] = _stale_first(answer, probe)
    return scores


@contextmanager
def _configured(configuration: str) -> Iterator[None]:
    from django.test import override_settings

    if configuration == "default":  # the settings a newcomer gets
        yield
        return
    with override_settings(KNOWLEDGE_CANDIDATES_NEED_APPROVAL=True):
        yield


def _send_sessions(client: Any, user: dict[str, Any]) -> None:
    for session in user["sessions"]:
        start = datetime.fromisoformat(session["start"])
        messages = [
            {
                "role": turn["role"],
                "content": turn["content"],
                "createdAt": (start + i * TURN_GAP).isoformat(),
                "metadata": {"speaker": user["speaker"]} if user.get("speaker") and turn["role"] == "user" else None,
            }
            for i, turn in enumerate(session["turns"])
        ]
        variables = {"userId": user["id"], "sessionId": session["id"], "messages": messages, "withContext": False}
        graphql_in_process(client, _ADD, variables, "addMessages", "AddMessagesResult")


def _ask(client: Any, user: dict[str, Any]) -> list[dict[str, Any]]:
    last = max(datetime.fromisoformat(s["start"]) for s in user["sessions"])
    rows = []
    for i, probe in enumerate(user["probes"]):
        said = last + PROBE_DELAY + i * PROBE_GAP
        message = {"role": "user", "content": probe["query"], "createdAt": said.isoformat()}
        if user.get("speaker"):
            message["metadata"] = {"speaker": user["speaker"]}
        variables = {"userId": user["id"], "sessionId": f"probe-{i + 1}", "messages": [message], "withContext": True}
        context = graphql_in_process(client, _ADD, variables, "addMessages", "AddMessagesResult")["context"]
        found = graphql_in_process(
            client, _SEARCH, {"input": {"userId": user["id"], "query": probe["query"]}}, "search", "SearchResult"
        )
        rows.append(
            {
                "user": user["id"],
                **probe,
                "scores": score_probe(probe, context, found["answer"]),
                "prompt": context["prompt"],
                "answer": found["answer"],
            }
        )
    return rows


@contextmanager
def _database(keep: str | None) -> Iterator[bool]:
    """A throwaway database, or with ``keep`` the kept one of that name; yields whether it holds data."""
    if keep is None:
        with throwaway_database("truth"):
            yield False
        return
    from memories.models import EndUser

    yield use_kept_database(keep) and EndUser.objects.exists()


def _run_configuration(
    users: list[dict[str, Any]], configuration: str, progress: bool, keep: str | None = None
) -> list[dict[str, Any]]:
    from memories.models import Knowledge, KnowledgeStatus
    from memories.services.history import history_delete
    from memories.services.knowledge import knowledge_approve
    from memories.services.summaries import summaries_enqueue_stale

    with _database(keep) as filled, _configured(configuration):
        client = in_process_client()
        for user in tqdm(users, desc=f"{configuration}: sessions", unit="user", disable=not progress or filled):
            if filled:  # the last run's probes go; the conversations stay
                for i in range(len(user["probes"])):
                    history_delete(user_external_id=user["id"], session_external_id=f"probe-{i + 1}")
            else:
                _send_sessions(client, user)
        summaries_enqueue_stale(idle_minutes=0, limit=100_000)
        if configuration == "approved":
            candidates = Knowledge.objects.filter(status=KnowledgeStatus.CANDIDATE).values_list("pk", flat=True)
            knowledge_approve(knowledge_ids=list(candidates))
        facts = Knowledge.objects.exclude(user=None).values_list("status", flat=True)
        raised = {status: list(facts).count(status) for status in set(facts)}
        rows = []
        for user in tqdm(users, desc=f"{configuration}: probes", unit="user", disable=not progress):
            rows += _ask(client, user)
    return [{"configuration": configuration, "facts_raised": raised, **row} for row in rows]


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The benchmark's figures over the probes' ``rows`` of one configuration."""

    def share(key: str, kinds: Sequence[str]) -> float | None:
        values = [r["scores"][key] for r in rows if r["kind"] in kinds and key in r["scores"]]
        return sum(values) / len(values) if values else None

    message_memories = sum(r["scores"]["message_memories"] for r in rows)
    return {
        "probes": {kind: sum(r["kind"] == kind for r in rows) for kind in ("fact", "changed", "unrelated")},
        "current_in_context": share("current_in_context", ("fact", "changed")),
        "current_in_context_changed": share("current_in_context", ("changed",)),
        "current_in_answer": share("current_in_answer", ("fact", "changed")),
        "stale_first": share("stale_first", ("changed",)),
        "stale_first_in_answer": share("stale_first_in_answer", ("changed",)),
        "echo_share": sum(r["scores"]["echoes"] for r in rows) / message_memories if message_memories else 0.0,
        "gate": share("gate", ("unrelated",)),
        "median_prompt_tokens": statistics.median(r["scores"]["prompt_tokens"] for r in rows),
        "memories_per_probe": statistics.mean(r["scores"]["memories"] for r in rows),
        "facts_raised": rows[0]["facts_raised"] if rows else {},
    }


def run(
    path: Path,
    configurations: Sequence[str],
    *,
    users: int | None = None,
    progress: bool = True,
    keep_database: bool = False,
) -> dict:
    """Replay ``path``'s users in each configuration and score their probes (see the module docstring).

    ``keep_database``: each configuration's data is kept in a database named for the file and the
    configuration, and reused by the next run (probes then see the probe sessions of the last run
    too): for measuring ranking changes without replaying; drop it after changing what is stored.

    Returns:
        ``{"figures": {configuration: summarise(...)}, "probes": [per-probe rows]}``.

    Raises:
        ValueError: an unknown configuration or a file without users.
    """
    unknown = set(configurations) - set(CONFIGURATIONS)
    if unknown:
        raise ValueError(f"Unknown configurations: {', '.join(sorted(unknown))}.")
    data = json.loads(Path(path).read_text())
    scenario_users = data.get("users") or []
    if not scenario_users:
        raise ValueError(f"{path} holds no users.")
    scenario_users = scenario_users[:users] if users else scenario_users
    setup_django()
    rows: list[dict[str, Any]] = []
    for configuration in configurations:
        keep = f"bench_truth_{Path(path).stem}_{configuration}".replace("-", "_") if keep_database else None
        rows += _run_configuration(scenario_users, configuration, progress, keep)
    figures = {c: summarise([r for r in rows if r["configuration"] == c]) for c in configurations}
    return {"benchmark": "truth", "data": str(path), "users": len(scenario_users), "figures": figures, "probes": rows}


_ROWS = (
    ("current fact in the context", "current_in_context", ">= 0.90"),
    ("  (changed facts)", "current_in_context_changed", ""),
    ("current value in the search answer", "current_in_answer", ">= 0.80"),
    ("stale above or instead of current (context)", "stale_first", "<= 0.05"),
    ("  (search answer)", "stale_first_in_answer", ""),
    ("echo share of the memories", "echo_share", "<= 0.10"),
    ("gate: unrelated probes with no memories", "gate", ">= 0.90"),
    ("median prompt tokens", "median_prompt_tokens", "<= 1000"),
    ("memories per probe (mean)", "memories_per_probe", ""),
)


def format_table(results: dict[str, Any]) -> str:
    """The figures of every configuration side by side, with the targets."""
    configurations = list(results["figures"])
    rows = []
    for label, key, target in _ROWS:
        values = [results["figures"][c][key] for c in configurations]
        digits = 0 if key == "median_prompt_tokens" else 3
        rows.append([label, *(None if v is None else f"{v:.{digits}f}" for v in values), target])
    probes = results["figures"][configurations[0]]["probes"]
    raised = {c: results["figures"][c]["facts_raised"] for c in configurations}
    caption = f"probes: {probes}; facts raised (by status): {raised}"
    return render(
        table(["score", *configurations, "target"], rows, title=f"bench.truth: {results['data']}", caption=caption)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.truth", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH, help="A scenario file.")
    parser.add_argument("--config", nargs="+", choices=CONFIGURATIONS, default=list(CONFIGURATIONS))
    parser.add_argument("--users", type=int, help="Only the first N users.")
    parser.add_argument("--smoke", action="store_true", help=f"The first {SMOKE_USERS} users, default settings only.")
    parser.add_argument("--keep-database", action="store_true", help="Keep and reuse each configuration's data.")
    parser.add_argument("--output", type=Path, help="Results file (default bench/results/truth-<time>.json).")
    args = parser.parse_args(argv)
    if args.smoke:
        args.users, args.config = args.users or SMOKE_USERS, ["default"]
    if not args.path.is_file():
        parser.error(f"No such file: {args.path}")
    setup_django()
    for name in ("django-q", "memories"):
        logging.getLogger(name).setLevel(logging.WARNING)
    results = run(args.path, args.config, users=args.users, keep_database=args.keep_database)
    return finish(results, "truth", args.output, format_table(results))


if __name__ == "__main__":
    sys.exit(main())
