"""Retrieval-quality benchmark on LoCoMo: the search pipeline's retrieval against BM25 and dense baselines.

Run from the repository root::

    .venv/bin/python -m bench.retrieval [PATH] [--samples conv-26 ...] [--max-sessions N] [--k 1 3 5 10]
    .venv/bin/python -m bench.retrieval --smoke      # conv-26, sessions 1-3: well under a minute

``PATH`` defaults to ``../shared/data/locomo/locomo_dev.json`` (relative to the repository).
The table goes to stdout, the full results (machine, data, timings, per-question rankings) to
``bench/results/retrieval-<UTC timestamp>.json``.

The method and the metrics are in docs/benchmarks.md ("Retrieval quality on LoCoMo"). Data:
LoCoMo (Maharana et al., ACL 2024; ``bench.locomo``), each sample one end user. The
conversations are imported through the service's own write path (``bench.retrieval_import``)
into a throwaway database (``bench.databases``); each question goes through the GraphQL
``search`` in-process with the default arguments a frontend gets (only ``userId`` and
``query``); the baselines (``bench.baselines``: BM25, exact cosine over the stored turn
vectors) rank the same turns with the same query vector. Every system is scored by the same
functions (``bench.metrics.ranking_metrics``; ours also ``session_hit@K``,
``evidence_shown_any`` / ``_all``, ``retrieved_tokens``, ``answer_found``), and ours is compared
with each baseline on turn recall@10 and session recall@5 (``bench.metrics.paired_differences``).
Evidence entries not written as one clean id are read as the ids they hold; ids malformed,
absent from the conversation or not imported (``--max-sessions``) are skipped; both are counted
(``bench.metrics.clean_evidence``), and a question left with no evidence is skipped.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.databases import setup_django, throwaway_database, use_kept_database
from bench.locomo import DEFAULT_PATH
from bench.metrics import (
    CATEGORY_NAMES,
    GROUPS,
    RepairedEvidence,
    SkippedEvidence,
    clean_evidence,
    group_means,
    group_medians,
    paired_differences,
    ranking_metrics,
    session_key,
    session_of,
    session_recall,
)
from bench.report import finish, run_record
from bench.retrieval_import import (
    check_import,
    import_sessions,
    index_user,
    read_samples,
    sessions_to_import,
    turn_ids_in_file,
)
from bench.retrieval_tables import format_tables, summary_line
from bench.service import graphql_in_process, in_process_client

__all__ = ["SMOKE", "main", "run"]

DEFAULT_KS = (1, 3, 5, 10)
# --smoke: a tiny input, well under a minute.
SMOKE: dict[str, Any] = {"samples": ["conv-26"], "max_sessions": 3}
SYSTEMS = ("ours", "bm25", "dense")
BASELINES = ("bm25", "dense")


def run(
    path: Path | str = DEFAULT_PATH,
    samples: Sequence[str] | None = None,
    max_sessions: int | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    *,
    use_current_database: bool = False,
    keep_database: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Import the conversations, run every question through every system, return the results.

    Args:
        path: a LoCoMo-format JSON file.
        samples: only these ``sample_id``s (default: all).
        max_sessions: import only sessions 1..N of each sample.
        ks: cut-offs; retrieval runs once at ``max(ks)``, smaller cut-offs are prefixes.
        use_current_database: work in the database Django is connected to (e.g. a pytest-django
            test database with ``transaction=True``) instead of creating and dropping one.
        keep_database: work in a database named for the file (``bench_<file stem>``), created and
            imported on the first run and kept: later runs import only what it lacks (nothing, for
            the same file), so a ranking change is measured without embedding everything again.
            Drop it (``dropdb``) after changing what an import stores.
        progress: show tqdm progress bars.

    Returns:
        The results as a JSON-serialisable dict (see ``format_tables`` for the main figures).

    Raises:
        ValueError: bad ``ks``, unknown sample ids, or a file that is not LoCoMo-shaped.
        RuntimeError: tasks are not run in-process, or an import task failed.
    """
    setup_django()
    from django.conf import settings
    from django_q.conf import Conf

    ks = tuple(sorted(set(ks)))
    if not ks or ks[0] < 1 or ks[-1] > settings.SEARCH_MAX_TOP_K:
        raise ValueError(f"Each k must be between 1 and SEARCH_MAX_TOP_K ({settings.SEARCH_MAX_TOP_K}).")
    if not Conf.SYNC:
        raise RuntimeError("django-q2 is not in sync mode: set Q_SYNC=1 before Django starts.")
    path = Path(path)
    conversations = read_samples(path, samples)
    if use_current_database:
        return _benchmark(path, conversations, max_sessions, ks, progress, throwaway=False)
    if keep_database:
        use_kept_database(f"bench_{re.sub(r'[^a-z0-9]+', '_', path.stem.lower())}")
        return _benchmark(path, conversations, max_sessions, ks, progress, throwaway=False)

    with throwaway_database("memories"):
        return _benchmark(path, conversations, max_sessions, ks, progress, throwaway=True)


@contextmanager
def _timed(samples: list[float]) -> Iterator[None]:
    started = time.perf_counter()
    yield
    samples.append((time.perf_counter() - started) * 1000)


# --- The benchmark -----------------------------------------------------------------------


def _benchmark(
    path: Path,
    conversations: dict[str, dict[str, Any]],
    max_sessions: int | None,
    ks: tuple[int, ...],
    progress: bool,
    *,
    throwaway: bool,
) -> dict[str, Any]:
    from django.conf import settings
    from django.db import connection

    from memories.llm import get_embedder
    from memories.search.prompt import count_tokens

    stats = import_sessions(sessions_to_import(path, conversations, max_sessions), progress=progress)
    check_import(list(conversations))
    users = {sample_id: index_user(sample_id) for sample_id in conversations}
    client = in_process_client()

    top = max(ks)
    questions = [
        (sample_id, index, qa) for sample_id, sample in conversations.items() for index, qa in enumerate(sample["qa"])
    ]
    embedder = get_embedder()
    timings: dict[str, list[float]] = {"search": [], "embed": [], "bm25": [], "dense": []}
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {system: [] for system in SYSTEMS}
    skipped: list[SkippedEvidence] = []
    repaired: list[RepairedEvidence] = []
    skipped_questions: list[dict[str, Any]] = []
    per_question: list[dict[str, Any]] = []
    in_file = {sample_id: turn_ids_in_file(sample) for sample_id, sample in conversations.items()}

    for sample_id, index, qa in tqdm(questions, desc="questions", unit="q", disable=not progress):
        user = users[sample_id]
        evidence, dropped, read_otherwise = clean_evidence(
            sample_id=sample_id,
            question_index=index,
            evidence=qa.get("evidence") or [],
            in_file=in_file[sample_id],
            imported=set(user.turn_id_by_message.values()),
        )
        skipped.extend(dropped)
        repaired.extend(read_otherwise)
        category = int(qa["category"])
        if not evidence:
            skipped_questions.append({"sample_id": sample_id, "question_index": index, "category": category})
            continue
        question = str(qa["question"])
        with _timed(timings["search"]):
            variables = {"input": {"userId": user.external_id, "query": question}}
            result = graphql_in_process(client, _SEARCH, variables, "search", "SearchResult")
        with _timed(timings["embed"]):
            vector = embedder.embed([question]).vectors[0]
        with _timed(timings["bm25"]):
            bm25_turns = user.bm25.rank(question, top)
        with _timed(timings["dense"]):
            dense_turns = user.dense.rank(vector, top)

        hits = result["hits"][:top]
        # A fact stands in for the turns it was raised from, which it shows (its ``turns``) in their place.
        ours_turns = list(
            dict.fromkeys(
                turn
                for h in hits
                for turn in (
                    [user.turn_id_by_message[int(h["id"])]]
                    if h["kind"] == "MESSAGE"
                    else [user.turn_id_by_message[int(t["id"])] for t in h["turns"]]
                    if h["kind"] == "KNOWLEDGE"
                    else []
                )
            )
        )
        shown_turns = {user.turn_id_by_message[int(t["id"])] for h in hits for t in h["turns"]}
        hit_sessions = list(
            dict.fromkeys(
                session_of(user.turn_id_by_message[int(h["id"])])
                if h["kind"] == "MESSAGE"
                else session_key(h["sessionId"])
                for h in hits
                if h["kind"] == "MESSAGE" or h["sessionId"]
            )
        )
        evidence_sessions = {session_of(e) for e in evidence}
        ours = ranking_metrics(ours_turns, evidence, ks)
        ours.update(session_recall(hit_sessions, evidence_sessions, ks, name="session_recall"))
        ours[f"session_hit@{top}"] = float(bool(evidence_sessions & set(hit_sessions[:top])))
        ours["evidence_shown_any"] = float(bool(set(evidence) & shown_turns))
        ours["evidence_shown_all"] = float(set(evidence) <= shown_turns)
        ours["retrieved_tokens"] = float(sum(count_tokens([h["text"] for h in hits])))
        ours["answer_found"] = float(bool(result["found"]))
        rows["ours"].append((category, ours))
        rows["bm25"].append((category, ranking_metrics(bm25_turns, evidence, ks)))
        rows["dense"].append((category, ranking_metrics(dense_turns, evidence, ks)))
        per_question.append(
            {
                "sample_id": sample_id,
                "question_index": index,
                "category": category,
                "question": question,
                "evidence": sorted(evidence),
                "answer": result["answer"],
                "ranked_turns": {"ours": ours_turns, "bm25": bm25_turns, "dense": dense_turns},
                "ranked_sessions": hit_sessions,
                "hit_kinds": [h["kind"] for h in hits],
            }
        )

    evaluated = group_means(rows["ours"])
    return {
        **run_record("retrieval", at="created_at"),
        "database": {
            "vendor": connection.vendor,
            "server_version": getattr(connection, "pg_version", None),
            "embedded": not os.environ.get("DATABASE_URL"),
            "name": connection.settings_dict["NAME"],
            "throwaway": throwaway,
        },
        "settings": {
            "embedding_backend": settings.EMBEDDING_BACKEND,
            "embedding_model": settings.EMBEDDING_MODEL,
            "chat_backend": settings.CHAT_BACKEND,
            "hnsw_ef_search": settings.HNSW_EF_SEARCH,
            "summary_max_sentences": settings.SUMMARY_MAX_SENTENCES,
            "search_default_top_k": settings.SEARCH_DEFAULT_TOP_K,
            "search_min_similarity": settings.SEARCH_MIN_SIMILARITY,
        },
        "data": {
            "path": str(path.resolve()),
            "samples": list(conversations),
            "max_sessions": max_sessions,
            "import": asdict(stats),
        },
        "ks": list(ks),
        "categories": {str(n): name for n, name in CATEGORY_NAMES.items()},
        "questions": {
            "total": len(questions),
            "evaluated": len(per_question),
            "by_group": {group: evaluated[group]["n"] for group in GROUPS},
            "skipped_without_evidence": skipped_questions,
        },
        "skipped_evidence": {
            "count": len(skipped),
            "by_reason": {r: sum(s.reason == r for s in skipped) for r in sorted({s.reason for s in skipped})},
            "ids": [asdict(s) for s in skipped],
        },
        "repaired_evidence": {"count": len(repaired), "entries": [asdict(r) for r in repaired]},
        "timings": {
            "import_seconds": round(stats.seconds, 2),
            "median_ms_per_question": {
                part: round(statistics.median(values), 2) if values else None for part, values in timings.items()
            },
        },
        "systems": {system: group_means(rows[system]) for system in SYSTEMS},
        "retrieved_tokens_median": group_medians(rows["ours"], "retrieved_tokens"),
        "differences": {b: paired_differences(rows["ours"], rows[b], ks) for b in BASELINES},
        "per_question": per_question,
    }


_SEARCH = """
query Search($input: SearchInput!) {
  search(input: $input) {
    __typename
    ... on SearchResult { answer found hits { kind id sessionId text turns { id } } }
    ... on OperationInfo { messages { field message } }
  }
}
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH, help="LoCoMo-format JSON file.")
    parser.add_argument("--samples", nargs="+", help="Only these sample_ids.")
    parser.add_argument("--max-sessions", type=int, help="Import only sessions 1..N of each sample.")
    parser.add_argument("--k", nargs="+", type=int, default=list(DEFAULT_KS), dest="ks", help="Cut-offs.")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"Tiny input: samples {SMOKE['samples']}, {SMOKE['max_sessions']} sessions.",
    )
    parser.add_argument(
        "--keep-database",
        action="store_true",
        help="Keep the imported data in a database named for the file and reuse it on the next run.",
    )
    parser.add_argument("--output", type=Path, help="Results file (default bench/results/retrieval-<time>.json).")
    args = parser.parse_args(argv)
    if args.smoke:
        args.samples = args.samples or SMOKE["samples"]
        args.max_sessions = args.max_sessions or SMOKE["max_sessions"]
    if not args.path.is_file():
        parser.error(f"No such file: {args.path}")

    setup_django()
    for name in ("django-q", "sentence_transformers"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        results = run(
            args.path,
            samples=args.samples,
            max_sessions=args.max_sessions,
            ks=args.ks,
            keep_database=args.keep_database,
        )
    except ValueError as exc:
        parser.error(str(exc))

    return finish(results, "retrieval", args.output, format_tables(results), "", summary_line(results))


if __name__ == "__main__":
    sys.exit(main())
