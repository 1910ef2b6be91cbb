"""A chatbot turn through each client against the same turn in plain HTTP: the Python client against the
standard library, the TypeScript client against ``fetch`` (in Node).

Run from the repository root::

    .venv/bin/python -m bench.client                 # 200 turns each
    .venv/bin/python -m bench.client --turns 50      # quicker

A turn is what a chatbot sends around its LLM call: the user's message stored with the context of
the reply returned (one ``addMessages { context }``), then the bot's reply stored (a second
``addMessages``); the LLM is a stand-in that answers at once. Both turns are run as the docs write
them, but for the URL and key: the client's is the README's (``MemoryClient.turn`` and
``add_messages``, over one keep-alive connection), the plain one the standard-library turn of
docs/integrations.md ("Without the client", the README's before the client: ``urllib``, a
connection per request). The two alternate, turn by turn (the first of each pair alternating too),
on the same user in sessions of 10 turns each, against ``manage.py serve`` (gunicorn, default
settings, no worker) on a fresh database ``bench_client`` that holds an earlier session of the user.
Then the same with the TypeScript client (``clients/typescript``, built and committed in ``dist``) in
Node: docs/integrations.md's client turn ("TypeScript client": ``memory.turn`` and ``addMessages``)
against its ``fetch`` turn ("Without the client"), alternating in one Node process
(``bench/client_turns.mjs``), on the same server.
Printed: the median, p90 and mean of each in milliseconds, the median CPU time the bench's
process (the bot's side) spent per turn, the ratio of the medians (client / plain; the targets:
<= 1 for Python, <= 1.10 for TypeScript) and the median of the ratios of each pair (less moved by
the machine's load drifting). The figures go to ``bench/results/client.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.databases import fresh_database, setup_django
from bench.report import REPO_ROOT, RESULTS_DIR, finish, percentile, render, run_record, table
from bench.service import bench_api_key, served

__all__ = ["main", "run", "typescript_examples", "typescript_turns"]

README = REPO_ROOT / "README.md"
INTEGRATIONS = REPO_ROOT / "docs" / "integrations.md"
DATABASE = "bench_client"
USER = "user-42"
TURNS_PER_SESSION = 10
WARM_UP = 5
EARLIER = [
    ("user", "My favourite food is okonomiyaki, Hiroshima style."),
    ("assistant", "Noted! Do you cook it at home?"),
    ("user", "Sometimes, but I am allergic to peanuts so I check the sauce."),
    ("assistant", "Good idea. Many okonomiyaki sauces are peanut-free, but check the label."),
]
ASKS = [
    "Any idea what I could cook for dinner tonight?",
    "I have cabbage, eggs and some pork in the fridge.",
    "Is there a sauce I should avoid?",
    "What about dessert?",
    "Thanks, that sounds good.",
]


def _example(doc: Path, marker: str, url: str, key: str) -> dict[str, Any]:
    """The names defined by ``doc``'s Python block holding ``marker``, run as written but for its URL and key."""
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), re.DOTALL) if marker in b]
    code = block.replace('"http://127.0.0.1:8000/graphql/"', repr(url)).replace('"mem_..."', repr(key))
    namespace: dict[str, Any] = {}
    exec(compile(code, str(doc), "exec"), namespace)  # the doc's own example, as a reader runs it
    return namespace


def typescript_examples(url: str, key: str, folder: Path) -> tuple[Path, Path]:
    """docs/integrations.md's TypeScript client turn and its ``fetch`` turn, as ES modules in ``folder``
    (written as the doc has them but for the URL, the key, and the client imported from its ``dist``)."""
    blocks = re.findall(r"```js\n(.*?)```", INTEGRATIONS.read_text(), re.DOTALL)
    (client,) = [b for b in blocks if 'from "memory-client"' in b]
    (plain,) = [b for b in blocks if "await fetch(" in b]
    module = (REPO_ROOT / "clients" / "typescript" / "dist" / "index.js").as_uri()
    paths = folder / "client_turn.mjs", folder / "plain_turn.mjs"
    for path, block in zip(paths, (client.replace('"memory-client"', f'"{module}"'), plain), strict=True):
        path.write_text(
            block.replace('"http://127.0.0.1:8000/graphql/"', json.dumps(url)).replace('"mem_..."', json.dumps(key))
        )
    return paths


def typescript_turns(url: str, key: str, *, turns: int, warm_up: int = WARM_UP, user: str = USER) -> dict[str, Any]:
    """Time ``turns`` TypeScript client turns and ``turns`` ``fetch`` turns in Node, alternating
    (``bench/client_turns.mjs``); returns ``{"typescript": {"ms": [...], "cpuMs": [...]}, "fetch": ...}``.

    Raises:
        subprocess.CalledProcessError: Node failed (its output is in the error).
    """
    with tempfile.TemporaryDirectory(prefix="bench-client-") as folder:
        client, plain = typescript_examples(url, key, Path(folder))
        done = subprocess.run(
            [
                "node",
                str(REPO_ROOT / "bench" / "client_turns.mjs"),
                str(client),
                str(plain),
                str(turns),
                str(warm_up),
                user,
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=3600,
        )
    return json.loads(done.stdout)


def _reply_with(system: str, message: str) -> str:
    assert "## Recent conversation" in system, system  # the context came back
    return "How about a vegetable stir-fry?"


def _figures(milliseconds: Sequence[float], cpu_milliseconds: Sequence[float]) -> dict[str, float]:
    return {
        "turns": len(milliseconds),
        "median_ms": round(statistics.median(milliseconds), 2),
        "p90_ms": round(percentile(milliseconds, 90), 2),
        "mean_ms": round(statistics.fmean(milliseconds), 2),
        "median_client_cpu_ms": round(statistics.median(cpu_milliseconds), 2),
    }


def run(*, turns: int = 200) -> dict[str, Any]:
    """Time ``turns`` client turns and ``turns`` plain turns, alternating; returns the figures."""
    setup_django()
    fresh_database(DATABASE)
    key = bench_api_key()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise

    with served(DATABASE, key, RESULTS_DIR / "client-server.log") as server:
        url = f"http://127.0.0.1:{server.port}/graphql/"
        readme = _example(README, "MemoryClient", url, key)
        without_client = _example(INTEGRATIONS, "urllib", url, key)
        memory = readme["memory"]
        memory.add_messages(USER, "earlier", [{"role": role, "content": text} for role, text in EARLIER])
        ways = {"client": readme["turn"], "plain": without_client["turn"]}
        timings: dict[str, list[float]] = {name: [] for name in ways}
        cpu: dict[str, list[float]] = {name: [] for name in ways}
        for i in range(-WARM_UP, turns):
            order = list(ways) if i % 2 == 0 else list(reversed(ways))
            for name in order:
                session = f"{name}-{i // TURNS_PER_SESSION}"
                started, cpu_started = time.perf_counter(), time.process_time()
                ways[name](USER, session, ASKS[i % len(ASKS)], _reply_with)
                if i >= 0:
                    timings[name].append((time.perf_counter() - started) * 1000)
                    cpu[name].append((time.process_time() - cpu_started) * 1000)
        memory.close()
        node = typescript_turns(url, key, turns=turns)

    client, plain = _figures(timings["client"], cpu["client"]), _figures(timings["plain"], cpu["plain"])
    typescript = _figures(node["typescript"]["ms"], node["typescript"]["cpuMs"])
    fetch = _figures(node["fetch"]["ms"], node["fetch"]["cpuMs"])
    pairs = [c / p for c, p in zip(timings["client"], timings["plain"], strict=True)]
    node_pairs = [c / p for c, p in zip(node["typescript"]["ms"], node["fetch"]["ms"], strict=True)]
    return {
        **run_record("client", at="time"),
        "database": DATABASE,
        "client": client,
        "plain": plain,
        "median_ratio_client_over_plain": round(client["median_ms"] / plain["median_ms"], 3),
        "median_of_pair_ratios": round(statistics.median(pairs), 3),
        "typescript": typescript,
        "fetch": fetch,
        "median_ratio_typescript_over_fetch": round(typescript["median_ms"] / fetch["median_ms"], 3),
        "median_of_typescript_pair_ratios": round(statistics.median(node_pairs), 3),
    }


def format_table(results: dict[str, Any]) -> str:
    """The figures of each kind of turn, and the ratios."""
    keys = ("turns", "median_ms", "p90_ms", "mean_ms", "median_client_cpu_ms")
    names = {"client": "Python client", "plain": "Python urllib", "typescript": "TypeScript client", "fetch": "fetch"}
    rows = [
        [label, *(f"{results[name][k]:.2f}" if k != "turns" else results[name][k] for k in keys)]
        for name, label in names.items()
    ]
    return render(
        table(["turn", "turns", "median ms", "p90 ms", "mean ms", "bench CPU ms"], rows),
        f"median ratio Python client / urllib: {results['median_ratio_client_over_plain']:.3f} (target <= 1); "
        f"median of the pairs' ratios: {results['median_of_pair_ratios']:.3f}\n"
        f"median ratio TypeScript client / fetch: {results['median_ratio_typescript_over_fetch']:.3f} "
        f"(target <= 1.10); median of the pairs' ratios: {results['median_of_typescript_pair_ratios']:.3f}",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="turns of each kind timed (default: %(default)s)")
    args = parser.parse_args(argv)
    results = run(turns=args.turns)
    return finish(results, "client", RESULTS_DIR / "client.json", format_table(results))


if __name__ == "__main__":
    sys.exit(main())
