"""LongMemEval_S questions as a LoCoMo-format file, to benchmark like any LoCoMo file.

Data: LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory", ICLR 2025; github.com/xiaowu0162/LongMemEval). Each question has its own haystack of about
50 sessions between a user and an assistant whose turns are long; ``has_answer`` marks the turns
that hold the answer. Unlike LoCoMo, a question is its own end user.

The conversion:

- each question becomes a sample (``sample_id`` = ``question_id``): ``speaker_a`` is ``user`` and
  ``speaker_b`` ``assistant``, the roles' own names, so a turn is stored and embedded exactly as a
  chatbot's turn without a speaker name; each haystack session becomes ``session_N`` with its date;
- its one question keeps its evidence: the ``has_answer`` turns (a question with none is dropped);
- the question type becomes a LoCoMo category, so that ``bench.retrieval`` reports the answerable
  ones together (categories 1-4) and the unanswerable ones (``_abs``) apart, as the benchmark's own
  retrieval metrics do: multi-session -> 1 (multi-hop), temporal-reasoning -> 2 (temporal),
  single-session-preference -> 3 (open-domain), single-session-user, single-session-assistant and
  knowledge-update -> 4 (single-hop), abstention -> 5.

``bench.retrieval`` then reports, beside turn recall, ``session_all@k``: whether all the answer
sessions are among the first ``k`` sessions (LongMemEval's ``recall_all@k``). Run from the
repository root::

    .venv/bin/python -m bench.longmemeval --out var/longmemeval.json
    .venv/bin/python -m bench.retrieval var/longmemeval.json --keep-database
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_PATH", "to_locomo"]

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json"

CATEGORIES = {
    "multi-session": 1,
    "temporal-reasoning": 2,
    "single-session-preference": 3,
    "single-session-user": 4,
    "single-session-assistant": 4,
    "knowledge-update": 4,
}
ABSTENTION = 5


def _locomo_time(value: str) -> str:
    """``"2023/05/20 (Sat) 02:21"`` as LoCoMo writes a session's time: ``"2:21 am on 20 May, 2023"``."""
    when = datetime.strptime(value.split(" (")[0] + " " + value.rsplit(" ", 1)[1], "%Y/%m/%d %H:%M")
    return f"{when.hour % 12 or 12}:{when:%M} {'am' if when.hour < 12 else 'pm'} on {when.day} {when:%B}, {when.year}"


def to_locomo(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The LongMemEval ``items`` as LoCoMo samples (see the module docstring); items without a marked
    answer turn are left out."""
    samples = []
    for item in items:
        conversation: dict[str, Any] = {"speaker_a": "user", "speaker_b": "assistant"}
        evidence = []
        for number, (turns, date) in enumerate(zip(item["haystack_sessions"], item["haystack_dates"], strict=True), 1):
            conversation[f"session_{number}"] = [
                {"speaker": turn["role"], "dia_id": f"D{number}:{index}", "text": turn["content"]}
                for index, turn in enumerate(turns, 1)
            ]
            conversation[f"session_{number}_date_time"] = _locomo_time(date)
            evidence += [f"D{number}:{index}" for index, turn in enumerate(turns, 1) if turn.get("has_answer")]
        if not evidence:
            continue
        question_id = str(item["question_id"])
        category = ABSTENTION if question_id.endswith("_abs") else CATEGORIES[item["question_type"]]
        qa = {"question": item["question"], "answer": item["answer"], "evidence": evidence, "category": category}
        samples.append({"sample_id": question_id, "conversation": conversation, "qa": [qa]})
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.longmemeval", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH, help="LongMemEval-format JSON file.")
    parser.add_argument("--out", type=Path, required=True, help="Where to write the LoCoMo-format file.")
    args = parser.parse_args(argv)
    items = json.loads(args.path.read_text())
    samples = to_locomo(items)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(samples) + "\n")
    turns = sum(len(v) for s in samples for k, v in s["conversation"].items() if isinstance(v, list))
    print(f"{len(items)} questions -> {len(samples)} samples ({turns} turns): {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
