"""Export/import benchmark: ``manage.py export_user`` and ``import_user`` on one end user of N messages.

Run from the repository root::

    .venv/bin/python -m bench.export                          # 100, 10k and 100k messages
    .venv/bin/python -m bench.export --messages 10000         # one size

For each size, on a fresh database ``bench_export`` (dropped at the end):

1. **The user** is written in bulk, not through ``addMessages`` (whose queued embedding and
   summary work would dominate): ``bulk_create`` of N messages in sessions of 20 turns (user and
   assistant in turn, two channels, metadata on every other turn, an external id on each), a
   summary per session, a fact per 100 messages (a source turn each, every other fact in a
   slot, each with the audit record ``create`` makes), a diary entry per 1,000 messages and an
   entity per 1,000 messages, linked to 50 turns and a fact. No vectors: an export never reads them.
2. **Export**: ``manage.py export_user USER --out FILE`` as a child process (its own Python, as
   an operator runs it): wall time and the child's peak RSS (``ru_maxrss`` from ``os.wait4``).
3. **Import**: the user is forgotten (``user_forget``), then ``manage.py import_user FILE`` the
   same way. The import queues embedding tasks (no worker runs): they are part of the time.
4. The import's export is compared with the first (apart from ``exported_at``).

The smallest size gives the fixed cost of a Django process; what grows with N is the
difference. The table goes to stdout, the figures to ``bench/results/export-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.databases import connect, fresh_database, setup_django, use_database
from bench.report import REPO_ROOT, finish, render, table
from bench.service import child_env

__all__ = ["bench_size", "build_user", "main"]

DATABASE = "bench_export"
USER = "bench-user"
SIZES = (100, 10_000, 100_000)
SESSION_TURNS = 20
_WORDS = (
    "cello lisbon sister dog beach garden nurse teacher train coffee morning rain museum recipe "
    "holiday book movie friend concert market river mountain bicycle office weekend dinner"
).split()


def build_user(messages: int, seed: int = 0) -> dict[str, int]:
    """Write ``USER`` with ``messages`` messages and the rows derived from them, in bulk (see the module doc)."""
    from memories.models import Diary, EndUser, Entity, Knowledge, KnowledgeStatus, Message, Session, Summary

    pick = random.Random(seed)
    start = datetime(2023, 1, 1, 9, 0, tzinfo=UTC)
    user = EndUser.objects.create(external_id=USER)
    sessions = Session.objects.bulk_create(
        [
            Session(
                user=user,
                external_id=f"s{n}",
                channel="web" if n % 2 else "slack",
                first_message_at=start + timedelta(hours=n),
                last_message_at=start + timedelta(hours=n, minutes=SESSION_TURNS - 1),
            )
            for n in range((messages + SESSION_TURNS - 1) // SESSION_TURNS)
        ],
        batch_size=2000,
    )
    rows = []
    for i in range(messages):
        session = sessions[i // SESSION_TURNS]
        text = " ".join(pick.choice(_WORDS) for _ in range(pick.randint(8, 30)))
        rows.append(
            Message(
                user=user,
                session=session,
                external_id=f"m{i}",
                role="user" if i % 2 == 0 else "assistant",
                content=f"Turn {i}: {text}.",
                channel=session.channel,
                metadata={"speaker": "Sam", "mood": pick.random()} if i % 2 == 0 else {},
                created_at=session.first_message_at + timedelta(minutes=i % SESSION_TURNS),
            )
        )
        if len(rows) == 5000 or i == messages - 1:
            Message.objects.bulk_create(rows, batch_size=2000)
            rows = []
    last = dict(
        Message.objects.filter(user=user).order_by("session_id", "pk").values_list("session_id", "pk")
    )  # the last pk of each session wins
    Summary.objects.bulk_create(
        [
            Summary(
                user=user,
                session=s,
                content=f"Sam talked about {pick.choice(_WORDS)} and {pick.choice(_WORDS)}.",
                mode="extractive",
                covers_from=s.first_message_at,
                covers_until=s.last_message_at,
                last_message_id=last[s.pk],
                message_count=SESSION_TURNS,
            )
            for s in sessions
            if s.pk in last
        ],
        batch_size=2000,
    )
    turns = list(Message.objects.filter(user=user, role="user").order_by("pk").values_list("pk", "session_id"))
    facts = []
    for n in range(max(1, messages // 100)):
        message_pk, session_pk = turns[n * len(turns) // max(1, messages // 100)]
        fact = Knowledge.objects.create(  # one by one, as the extractor does: each gets its audit record
            user=user,
            content=f"Sam likes {pick.choice(_WORDS)} number {n}.",
            status=KnowledgeStatus.ACTIVE,
            slot=f"slot{n % 10}" if n % 2 else "",
            confidence=0.9,
            said_at=start + timedelta(hours=n),
            reviewed=False,
            source_session_id=session_pk,
        )
        fact.source_messages.add(message_pk)
        facts.append(fact)
    Diary.objects.bulk_create(
        [
            Diary(user=user, diary_date=date(2023, 1, 1) + timedelta(days=n), content=f"Day {n}.", metadata={"n": n})
            for n in range(max(1, messages // 1000))
        ]
    )
    for n in range(max(1, messages // 1000)):
        entity = Entity.objects.create(
            user=user,
            name=f"Person {n}",
            kind="person",
            aliases=[f"P{n}"],
            first_mentioned_at=start,
            last_mentioned_at=start + timedelta(days=n),
        )
        entity.messages.add(*[pk for pk, _ in turns[n * 50 : n * 50 + 50]])
        entity.knowledge.add(facts[n % len(facts)])
    return {"messages": messages, "sessions": len(sessions), "knowledge": len(facts)}


# Runs the command and prints its peak RSS (KiB) and exit code. A process started from this one would
# count this process's own peak in its ``ru_maxrss`` (Linux keeps the high-water mark across fork and
# exec); started from a small interpreter, only that interpreter's few MiB could count.
_MEASURE = (
    "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], stdout=sys.stderr).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)"
)


def _timed_child(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``manage.py ARGS`` and return its wall seconds and peak RSS (MiB: its own ``ru_maxrss``)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    peak_kib, code = map(int, done.stdout.split())
    if code != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed ({code}): {done.stderr[-2000:]}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(peak_kib / 1024, 1)}


def bench_size(messages: int, workdir: Path, home: str) -> dict[str, Any]:
    """Build the user, then time the export, the forget and the import (see the module doc).

    ``home``: the database Django was configured with, connected to while ``DATABASE`` is dropped
    (PostgreSQL drops no database a connection is open on).
    """
    from memories.services.history import user_forget

    use_database(home)
    fresh_database(DATABASE)
    started = time.perf_counter()
    built = build_user(messages)
    build_seconds = time.perf_counter() - started
    env = child_env(DATABASE)
    first, second = workdir / f"export-{messages}.json", workdir / f"export-{messages}-again.json"
    exported = _timed_child(["export_user", USER, "--out", str(first)], env)
    user_forget(user_external_id=USER)
    imported = _timed_child(["import_user", str(first)], env)
    _timed_child(["export_user", USER, "--out", str(second)], env)
    same = _without_time(first) == _without_time(second)
    return {
        **built,
        "build_seconds": round(build_seconds, 1),
        "file_mb": round(first.stat().st_size / 2**20, 1),
        "export": exported,
        "import": imported,
        "round_trip_equal": same,
    }


def _without_time(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    document.pop("exported_at")
    return document


def format_table(results: dict[str, Any]) -> str:
    """A Markdown row per size."""
    header = ["messages", "file MB", "export s", "export peak RSS MB", "import s", "import peak RSS MB"]
    rows = [
        [
            f"{row['messages']:,}",
            row["file_mb"],
            *(row[step][key] for step in ("export", "import") for key in ("seconds", "peak_rss_mb")),
            "yes" if row["round_trip_equal"] else "NO",
        ]
        for row in results["sizes"]
    ]
    return render(table([*header, "round trip equal"], rows, markdown=True, left=0))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, nargs="*", default=list(SIZES), help="Sizes (default: %(default)s).")
    args = parser.parse_args(argv)
    setup_django()
    workdir = REPO_ROOT / "var" / "bench-export"
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"started": datetime.now(UTC).isoformat(), "cores": os.cpu_count(), "sizes": []}
    from django.db import connection

    home = connection.settings_dict["NAME"]
    try:
        for messages in args.messages:
            results["sizes"].append(bench_size(messages, workdir, home))
            print(f"{messages} messages: {results['sizes'][-1]}", file=sys.stderr)
    finally:
        use_database(home)
        with connect() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
    return finish(results, "export", None, format_table(results))


if __name__ == "__main__":
    sys.exit(main())
