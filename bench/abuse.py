"""Abuse, load and concurrency: what slow or greedy clients, big exports, hostile import files, forgets
racing the worker and restores under a writer do to the service, against issue 43's targets.

Run from the repository root (loopback only; about 15 minutes, ``--quick`` about 5)::

    .venv/bin/python -m bench.abuse [--quick] [--only stalled costly exports imports forgets restores]

On a throwaway database with one end user of 20,000 messages (``bench.export.build_user``: no
vectors), the service is started as ``make run`` starts it (``manage.py serve``: gunicorn, with the
worker where a scenario needs it), afresh for each scenario:

1. **Stalled bodies**: 10 connections send a POST's headers (with a valid API key) and 23 bytes of a
   1,000-byte body, then nothing; meanwhile two clients send ``GET /healthz`` and a small ``history``
   query back to back for 20 s. p99 of each (a request unanswered after 15 s counts 15 s).
2. **Costly documents**: 15 aliased ``search`` fields, 15 aliased ``addMessages`` of 1,000 messages,
   15 aliased ``exportUser``, and a 9.9 MB document of 900,000 ``__typename``: seconds to the answer
   (60 s at most) and its error code.
3. **Exports**: 8 ``exportUser`` of the 20,000-message user at once: the web workers' RSS, sampled
   every 0.1 s, peak minus before.
4. **Hostile imports**: ``manage.py import_user`` of each file of ``bench.abuse_files`` (a long
   message, large metadata, a long fact and diary entry, metadata nested 1,000 and 100,000 deep)
   and ``import_conversations`` of a LoCoMo file nested 100,000 deep, each a process limited to
   6 GiB of address space: rows stored over an API limit, RecursionErrors, peak RSS.
5. **Forget races**: 50 times, LoCoMo's conv-41 (663 turns in 32 sessions, one ``addMessages``
   each) stored for a new user; once the worker has embedded it, its summaries asked for
   (``createSummaries``) and ``forgetUser`` 0.2-1.5 s later, as the worker summarises it, while
   another client keeps the worker busy; then, once the worker's queue is empty, the rows of those
   users left and the failed tasks.
6. **Restores**: a dump of the database (``pg_dump -Fc``), restored 10 times as docs/operations.md
   says (``restore_command``), each while a client calls ``addMessages`` and a probe asks
   ``/readyz`` every 0.2 s: how many succeed, and how long ``/readyz`` took to say 503.

Prints the table of targets; the figures go to ``bench/results/abuse-<UTC time>.json``, the servers'
logs, the hostile files and the dump to ``var/bench-abuse/``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.abuse_files import HOSTILE_EXPORTS, deep_locomo, over_limit_rows, write_export
from bench.abuse_http import RssSampler, graphql, request, stalled_bodies
from bench.abuse_races import forget_race, restore_tries
from bench.databases import database_url, setup_django, throwaway_database
from bench.locomo import DEFAULT_PATH
from bench.report import REPO_ROOT, finish, latency_figures, render, run_record, table
from bench.service import bench_api_key, child_env, served

__all__ = ["main", "restore_command", "run"]

BIG_USER_MESSAGES = 20_000
# The servers' logs, the hostile files and the dump (not committed).
WORK_DIR = REPO_ROOT / "var" / "bench-abuse"
# A request unanswered after this long counts as taking it (stalled bodies), or gives up (the others).
NORMAL_TIMEOUT, COSTLY_TIMEOUT = 15.0, 60.0
HISTORY = "query($u: String!) { history(userId: $u, pagination: {limit: 10}) { results { id } } }"
SEARCH_FIELD = '{n}: search(input: {{userId: "bench-user", query: "coffee in lisbon {n}"}}) {{ __typename }}'
ADD_FIELD = '{n}: addMessages(userId: "aliased", sessionId: "{n}", messages: $m) {{ __typename }}'
EXPORT = 'query { exportUser(userId: "bench-user") }'


def _p99_ms(seconds: list[float]) -> float:
    return latency_figures(seconds)["p99_ms"] if seconds else float("nan")


def stalled(port: int, key: str, *, seconds: float = 20.0) -> dict[str, Any]:
    """Scenario 1: ``/healthz`` and ``history`` p99 beside 10 stalled bodies (see the module doc)."""
    timings: dict[str, list[float]] = {"healthz": [], "history": []}

    def client(kind: str) -> None:
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            if kind == "healthz":
                answer = request(port, "GET", "/healthz", timeout=NORMAL_TIMEOUT)
            else:
                answer = graphql(port, key, HISTORY, {"u": "bench-user"}, timeout=NORMAL_TIMEOUT)
            timings[kind].append(answer.seconds if answer.status == 200 else NORMAL_TIMEOUT)

    with stalled_bodies(port, 10, key=key), ThreadPoolExecutor(2) as pool:
        list(pool.map(client, timings))
    return {kind: {"n": len(v), "p99_ms": _p99_ms(v)} for kind, v in timings.items()}


def costly(port: int, key: str) -> dict[str, Any]:
    """Scenario 2: each costly document's seconds to its answer and its error code."""
    messages = [{"role": "user", "content": f"Message {i} about my trip to Lisbon."} for i in range(1000)]
    documents = {
        "15 aliased search": ("query { " + " ".join(SEARCH_FIELD.format(n=f"s{i}") for i in range(15)) + " }", {}),
        "15 aliased addMessages x 1,000": (
            "mutation($m: [MessageInput!]!) { " + " ".join(ADD_FIELD.format(n=f"a{i}") for i in range(15)) + " }",
            {"m": messages},
        ),
        "15 aliased exportUser": (
            "query { " + " ".join(f'e{i}: exportUser(userId: "bench-user")' for i in range(15)) + " }",
            {},
        ),
        "9.9 MB of 900,000 __typename": ("{" + " __typename" * 900_000 + " }", {}),
    }
    out = {}
    for name, (query, variables) in documents.items():
        answer = graphql(port, key, query, variables, timeout=COSTLY_TIMEOUT)
        out[name] = {"seconds": round(answer.seconds, 2), "code": answer.code, "status": answer.status}
    out["aliased messages stored"] = _count(
        "SELECT count(*) FROM memories_message m JOIN memories_enduser u "
        "ON u.id = m.user_id WHERE u.external_id = 'aliased'"
    )
    return out


def exports(port: int, key: str, serve_pid: int) -> dict[str, Any]:
    """Scenario 3: 8 concurrent exports of the 20,000-message user; the web workers' RSS growth."""
    with RssSampler(serve_pid) as rss, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: graphql(port, key, EXPORT, timeout=120), range(8)))
    return {
        "rss_before_mb": rss.before,
        "rss_peak_mb": rss.peak,
        "rss_after_mb": rss.after,
        "growth_mb": round(rss.peak - rss.before, 1),
        "answers": sorted(answer.code for answer in answers),
        "seconds_max": round(max(answer.seconds for answer in answers), 2),
    }


def _limited() -> None:
    """In the child, before it runs: at most 6 GiB of address space (a runaway import fails instead)."""
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))


def _command(database: str, *args: str) -> dict[str, Any]:
    """``manage.py args`` as a child process on ``database``: exit status, errors met, peak RSS, seconds."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=child_env(database),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limited,
    )
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    last = stderr.strip().splitlines()[-1:] or [""]
    return {
        "exit": process.returncode,
        "recursion_error": "RecursionError" in stderr,
        "traceback": "Traceback" in stderr,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "seconds": round(time.monotonic() - started, 1),
        "last_line": last[0][:200],
    }


def imports(database: str, folder: Path) -> dict[str, Any]:
    """Scenario 4: each hostile file imported by its command; rows over a limit stored afterwards."""
    out: dict[str, Any] = {}
    for i, name in enumerate(HOSTILE_EXPORTS):
        path = write_export(folder / f"hostile-{i}.json", name, f"hostile-{i}")
        out[name] = _command(database, "import_user", str(path))
    out["locomo 100,000 deep"] = _command(database, "import_conversations", str(deep_locomo(folder / "deep.json")))
    out["rows over a limit"] = over_limit_rows()
    return out


def _count(sql: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def _conversation() -> list[tuple[str, list[dict[str, Any]]]]:
    """LoCoMo's conv-41 as ``(session id, addMessages messages)`` pairs."""
    from memories.importers import locomo_sessions

    return [
        (
            session.session_id,
            [
                {
                    "role": m.role,
                    "content": m.content,
                    "createdAt": m.created_at.isoformat(),
                    "metadata": m.metadata,
                    "externalId": m.external_id,
                }
                for m in session.messages
            ],
        )
        for session in locomo_sessions(DEFAULT_PATH)
        if session.user_id == "conv-41"
    ]


def _queue_drained(seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _count("SELECT count(*) FROM django_q_ormq") == 0:
            return True
        time.sleep(1)
    return False


def forgets(port: int, key: str, *, iterations: int) -> dict[str, Any]:
    """Scenario 5: forget races, then the rows left of the forgotten users and the failed tasks."""
    started = _count("SELECT count(*) FROM django_q_task WHERE NOT success")
    out = forget_race(port, key, _conversation(), iterations=iterations)
    out["queue_drained"] = _queue_drained(300)
    out["rows_left"] = sum(
        _count(
            f"SELECT count(*) FROM {table} t JOIN memories_enduser u ON u.id = t.user_id "
            "WHERE u.external_id LIKE 'forget-%'"
        )
        for table in ("memories_session", "memories_message", "memories_summary", "memories_knowledge")
    ) + _count("SELECT count(*) FROM memories_enduser WHERE external_id LIKE 'forget-%'")
    out["failed_tasks"] = _count("SELECT count(*) FROM django_q_task WHERE NOT success") - started
    return out


def _pg_tool(name: str) -> str:
    """A PostgreSQL client program: the embedded server's own, else the one on ``PATH``."""
    if os.environ.get("DATABASE_URL"):
        return shutil.which(name) or name
    import pgserver

    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def restore_command(url: str, dump: Path) -> list[str]:
    """The restore of docs/operations.md ("Backups"), of ``dump`` into the database at ``url``: under
    ``manage.py maintenance`` (a code without that command restored without it)."""
    restore = [_pg_tool("pg_restore"), "-d", url, "--clean", "--if-exists", "--single-transaction", str(dump)]
    if not (REPO_ROOT / "memories" / "management" / "commands" / "maintenance.py").exists():
        return restore
    return [sys.executable, "manage.py", "maintenance", "--", *restore]


def restores(port: int, key: str, database: str, folder: Path, *, tries: int) -> dict[str, Any]:
    """Scenario 6: a dump, then ``tries`` restores of it under a writer."""
    url = database_url(database)
    dump = folder / "abuse.dump"
    subprocess.run([_pg_tool("pg_dump"), "-Fc", "-f", str(dump), url], check=True, capture_output=True)
    return restore_tries(port, key, restore_command(url, dump), tries=tries, env=child_env(database))


SCENARIOS = ("stalled", "costly", "exports", "imports", "forgets", "restores")


def run(*, quick: bool = False, only: Sequence[str] = SCENARIOS) -> dict[str, Any]:
    """The scenarios ``only`` names (every one by default) on a throwaway database (see the module doc)."""
    setup_django()
    from django.db import connection

    from bench.export import build_user

    folder = WORK_DIR
    folder.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = run_record("abuse")
    with throwaway_database("abuse"):
        database = connection.settings_dict["NAME"]
        build_user(BIG_USER_MESSAGES)
        key = bench_api_key()
        connection.close()
        bodies: dict[str, tuple[Callable[..., dict[str, Any]], bool]] = {
            "stalled": (lambda s: stalled(s.port, key), False),
            "costly": (lambda s: costly(s.port, key), False),
            "exports": (lambda s: exports(s.port, key, s.process.pid), False),
            "forgets": (lambda s: forgets(s.port, key, iterations=10 if quick else 50), True),
            "restores": (lambda s: restores(s.port, key, database, folder, tries=3 if quick else 10), True),
        }
        for name in (n for n in SCENARIOS if n in only):
            if name == "imports":
                results[name] = imports(database, folder)
            else:
                body, worker = bodies[name]
                with served(database, key, folder / f"{name}.log", worker=worker) as server:
                    results[name] = body(server)
            print(f"{name}: {results[name]}", flush=True)
        connection.close()
    return results


def _row(what: str, measured: str, target: str, met: bool) -> list[str]:
    return [what, measured, target, "yes" if met else "NO"]


def _stalled_rows(figures: dict[str, Any]) -> list[list[str]]:
    return [
        _row(
            f"10 stalled bodies: {kind} p99",
            f"{figures[kind]['p99_ms']:.0f} ms",
            "< 1 s",
            figures[kind]["p99_ms"] < 1000,
        )
        for kind in ("healthz", "history")
    ]


def _costly_rows(figures: dict[str, Any]) -> list[list[str]]:
    rows = [
        _row(
            name,
            f"{f['seconds']} s, {f['code']}",
            "refused < 1 s, a code",
            f["code"] not in ("ok", "timeout") and f["seconds"] < 1,
        )  # fmt: skip
        for name, f in figures.items()
        if isinstance(f, dict)
    ]
    stored = figures["aliased messages stored"]
    return [
        *rows,
        _row("messages stored by the aliased addMessages", str(stored), "<= 1,000 (one field)", stored <= 1000),
    ]


def _exports_rows(figures: dict[str, Any]) -> list[list[str]]:
    growth, answers = figures["growth_mb"], ", ".join(sorted(set(figures["answers"])))
    return [
        _row("8 exportUser of 20,000 messages: web RSS growth", f"{growth} MB ({answers})", "< 100 MB", growth < 100)
    ]


def _imports_rows(figures: dict[str, Any]) -> list[list[str]]:
    over = figures["rows over a limit"]
    commands = [v for v in figures.values() if isinstance(v, dict)]
    recursion = sum(1 for v in commands if v["recursion_error"])
    peak = max(v["peak_rss_mb"] for v in commands)
    return [
        _row("import: rows stored over an API limit", str(over), "0", over == 0),
        _row("import: RecursionErrors (any depth)", f"{recursion} (peak RSS {peak:.0f} MB)", "0", recursion == 0),
    ]


def _forgets_rows(figures: dict[str, Any]) -> list[list[str]]:
    failures = sum(figures["forget_failures"].values())
    codes = ", ".join(f"{c} x{n}" for c, n in figures["forget_failures"].items())
    return [
        _row("forgetUser after import, under worker load: errors", f"{failures} {codes}".strip(), "0", failures == 0),
        _row("forgotten users' rows left", str(figures["rows_left"]), "0", figures["rows_left"] == 0),
        _row("failed worker tasks meanwhile", str(figures["failed_tasks"]), "(reported)", True),
    ]


def _restores_rows(figures: dict[str, Any]) -> list[list[str]]:
    succeeded, tries, slowest = figures["succeeded"], figures["tries"], figures["readyz_503_slowest_seconds"]
    readyz = f"{figures['readyz']['p50_ms']} / {figures['readyz']['p99_ms']} ms"
    return [
        _row("restore with a writer: succeeded", f"{succeeded} of {tries}", "all", succeeded == tries),
        _row("/readyz saying 503 during restores: slowest", f"{slowest} s", "< 1 s", slowest < 1),
        _row("/readyz during restores, all answers: p50 / p99", readyz, "(reported)", True),
    ]


_ROWS = {
    "stalled": _stalled_rows,
    "costly": _costly_rows,
    "exports": _exports_rows,
    "imports": _imports_rows,
    "forgets": _forgets_rows,
    "restores": _restores_rows,
}


def format_table(results: dict[str, Any]) -> str:
    """The targets of the scenarios run, each with what was measured and whether it was met."""
    rows = [row for name in SCENARIOS if name in results for row in _ROWS[name](results[name])]
    return render(table(["scenario", "measured", "target", "met"], rows, title="bench.abuse (issue 43 targets)"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.abuse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 forget races and 3 restores instead of 50 and 10.")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, default=SCENARIOS, help="Run these scenarios only.")
    args = parser.parse_args(argv)
    results = run(quick=args.quick, only=args.only)
    return finish(results, "abuse", None, format_table(results))


if __name__ == "__main__":
    sys.exit(main())
