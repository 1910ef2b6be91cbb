"""Retrieval-quality benchmark on LoCoMo: the search pipeline's retrieval against BM25 and dense baselines.

Run from the repository root::

    .venv/bin/python -m bench.retrieval [PATH] [--samples conv-26 ...] [--max-sessions N] [--k 1 3 5 10]
    .venv/bin/python -m bench.retrieval --smoke      # conv-26, sessions 1-3: well under a minute

``PATH`` defaults to ``../shared/data/locomo/locomo_dev.json`` (relative to the repository).
The table goes to stdout, the full results (machine, data, timings, per-question rankings) to
``bench/results/retrieval-<UTC timestamp>.json``.

Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
Agents", ACL 2024; github.com/snap-research/locomo). Each sample is one end user; each
question names the turns that answer it (``evidence``, dialogue ids such as ``"D3:12"`` =
session 3, turn 12) and has a category: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial (unanswerable). Categories 1-4 are reported one by one and
together; category 5 apart.

How:

1. A throwaway database is created (Django's test-database machinery: it works with the
   embedded server and with ``DATABASE_URL``) and always dropped at the end.
2. Every conversation is imported through the service's own write path, as
   ``manage.py import_conversations`` does: ``messages_add`` per session; django-q2 runs in
   sync mode, so embedding and the summary of the previous session run when each session's
   transaction commits. The last session of each user is then summarised with
   ``summary_create`` (production does that through the idle sweep).
3. Each question goes through the GraphQL ``search`` in-process (Django's test client, an
   all-users API key) with the default arguments a frontend gets: only ``userId`` and
   ``query``. So the hits are what the service returns by default (``SEARCH_DEFAULT_TOP_K``,
   messages, summaries, knowledge and diaries ranked together) and the answer stage runs.
4. Baselines on the same data and the same query vector (``bench.baselines``): BM25 over
   the user's turns, and exact cosine over the turn vectors the service stored.

Metrics (``bench.metrics``), averaged over questions:

- ``turn_recall@k``: share of the question's evidence turns among the first ``k`` results'
  message hits and the turns the facts among them were raised from (which a fact stands in for);
  a summary in the results takes a place, and counts no turn;
- ``turn_hit@k``: 1 if any evidence turn is among them;
- ``mrr@K``: mean reciprocal rank of the first evidence turn within the top ``K = max(k)``,
  0 when none is there (Voorhees, "The TREC-8 Question Answering Track Report", 1999);
- ``session_recall@k``: share of the evidence sessions among the first ``k`` sessions the
  results point at (a message's session or a summary's, duplicates dropped); for the
  baselines, the sessions of their ranked turns;
- ours only: ``session_hit@K`` (any evidence session among the results), ``evidence_shown_any``
  / ``_all`` (any / every evidence turn among the turns the results show, neighbouring turns
  included), ``retrieved_tokens`` (the results' text blocks, by ``memories.search.prompt``'s
  tokenizer; the median is reported) and ``answer_found`` (the answer passed the relevance gate).

Ours is compared with each baseline on the targets' metrics (turn recall@10, session
recall@5) per report group (``bench.metrics.paired_difference``): the mean per-question
difference, its 95% interval by a paired bootstrap over questions, the p-value of a
sign-flip permutation test, and a verdict, "ahead" or "behind" when both rule out 0, else
"within noise". They say whether a gap can be told from 0 given how much the questions
vary; they treat the questions as independent, though they come from a few conversations.

Evidence entries not written as one clean id (``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``)
are read as the ids they hold (``bench.metrics.read_evidence``) and counted; ids that are
malformed (``"D10:"``), absent from the conversation, or in a session not imported
(``--max-sessions``) are skipped and counted; a question left with no evidence is skipped.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from bench.databases import setup_django, throwaway_database, use_kept_database
from bench.locomo import DEFAULT_PATH
from bench.metrics import (
    CATEGORY_NAMES,
    GROUPS,
    RepairedEvidence,
    SkippedEvidence,
    clean_evidence,
    compared_metrics,
    group_means,
    group_medians,
    paired_difference,
    ranking_metrics,
    session_key,
    session_of,
    session_recall,
)
from bench.report import code_version, machine, save_results
from bench.retrieval_import import check_import, import_sessions, index_user
from bench.retrieval_tables import format_tables, summary_line
from bench.service import graphql_in_process

if TYPE_CHECKING:
    pass

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
    conversations = _read_samples(path, samples)
    if use_current_database:
        return _benchmark(path, conversations, max_sessions, ks, progress, throwaway=False)
    if keep_database:
        use_kept_database(f"bench_{re.sub(r'[^a-z0-9]+', '_', path.stem.lower())}")
        return _benchmark(path, conversations, max_sessions, ks, progress, throwaway=False)

    with throwaway_database("memories"):
        return _benchmark(path, conversations, max_sessions, ks, progress, throwaway=True)


# --- Input -----------------------------------------------------------------------------


def _read_samples(path: Path, samples: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    """The file's samples by ``sample_id``, in file order, only ``samples`` when given."""
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError("A LoCoMo file is a JSON list of samples.")
    by_id = {str(sample["sample_id"]): sample for sample in data}
    if samples:
        unknown = sorted(set(samples) - by_id.keys())
        if unknown:
            raise ValueError(f"No such samples in {path}: {', '.join(unknown)}.")
        by_id = {sample_id: sample for sample_id, sample in by_id.items() if sample_id in samples}
    return by_id


def _session_number(session_id: str) -> int:
    return int(session_id.rsplit("_", 1)[1])


def _turn_ids_in_file(sample: dict[str, Any]) -> set[str]:
    conversation = sample["conversation"]
    return {
        str(turn["dia_id"])
        for key, turns in conversation.items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    }


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
    from django.test import Client

    from memories.importers import locomo_sessions
    from memories.llm import get_embedder
    from memories.search.prompt import count_tokens
    from memories.services.api_keys import api_key_create

    sessions = [
        s
        for s in locomo_sessions(path)
        if s.user_id in conversations and (max_sessions is None or _session_number(s.session_id) <= max_sessions)
    ]
    stats = import_sessions(sessions, progress=progress)
    check_import(list(conversations))
    users = {sample_id: index_user(sample_id) for sample_id in conversations}
    _, api_key = api_key_create(name="retrieval benchmark", user_external_ids=[], all_users=True)
    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {api_key}")

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
    in_file = {sample_id: _turn_ids_in_file(sample) for sample_id, sample in conversations.items()}

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
        "benchmark": "retrieval",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "code": code_version(),
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
        "differences": _differences(rows, ks),
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


def _differences(
    rows: dict[str, list[tuple[int, dict[str, float]]]], ks: Sequence[int]
) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Ours minus each baseline per report group and compared metric: ``{baseline: {group: {metric: ...}}}``.

    Each entry holds ``paired_difference``'s fields (the mean per-question difference, its 95%
    interval, the permutation test's p-value, ``n``) and its ``verdict``. ``rows`` are the
    systems' ``(category, metrics)`` per question, in the same question order for every system.

    Raises:
        RuntimeError: two systems' rows are not in the same question order (their categories differ).
    """
    differences: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for baseline in BASELINES:
        by_group = differences.setdefault(baseline, {})
        for group in GROUPS:
            pairs = []
            for (category, ours), (their_category, theirs) in zip(rows["ours"], rows[baseline], strict=True):
                if category != their_category:
                    raise RuntimeError(f"The {baseline} rows are not in the same question order as ours.")
                if str(category) == group or (group == "1-4" and 1 <= category <= 4):
                    pairs.append((ours, theirs))
            if not pairs:
                continue
            by_group[group] = {}
            for metric in compared_metrics(ks):
                difference = paired_difference([o[metric] for o, _ in pairs], [t[metric] for _, t in pairs])
                by_group[group][metric] = {**asdict(difference), "verdict": difference.verdict}
    return differences


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

    output = save_results(results, "retrieval", args.output)
    print(format_tables(results))
    print()
    print(summary_line(results))
    print(f"results: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
