"""A second retrieval set of another shape, built offline from a LoCoMo file's own annotations.

LoCoMo conversations are long sessions of short turns, where BM25 does well. Chatbot memory
often looks different: many short sessions in which an assistant answers at length. This
script rewrites a LoCoMo-format file into that shape from the authors' ``observation``
annotations (facts about each speaker, each citing the turn it comes from):

- each (session, speaker) pair becomes a short session of two turns: the user asks
  "What is new with <speaker>?" and the assistant answers with every observation about that
  speaker in that session, as one paragraph (a long answer, in the annotators' words, not the
  speakers': the words of a question match it less often, so dense retrieval has the edge);
- each question keeps its category; its evidence turns become the assistant answers holding
  an observation that cites them (questions none of whose evidence is cited are dropped).

Run from the repository root, then benchmark the result like any LoCoMo file::

    .venv/bin/python -m bench.reshape --out var/locomo-assistant-shape.json
    .venv/bin/python -m bench.retrieval var/locomo-assistant-shape.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.locomo import DEFAULT_PATH

__all__ = ["reshape"]

_SESSION = re.compile(r"^session_(\d+)$")


def reshape(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The samples rewritten as short assistant-answer sessions (see the module docstring)."""
    return [_reshape_sample(sample) for sample in samples]


def _reshape_sample(sample: dict[str, Any]) -> dict[str, Any]:
    conversation = sample["conversation"]
    speaker_a, speaker_b = conversation["speaker_a"], conversation["speaker_b"]
    new_conversation: dict[str, Any] = {"speaker_a": speaker_a, "speaker_b": speaker_b}
    turn_of_evidence: dict[str, str] = {}
    number = 0
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key)) and conversation[key]
    )
    for _, key in sessions:
        observations = sample.get("observation", {}).get(f"{key}_observation") or {}
        for speaker in (speaker_a, speaker_b):
            notes = [(str(text), str(cited)) for text, cited in observations.get(speaker) or []]
            if not notes:
                continue
            number += 1
            answer_id = f"D{number}:2"
            new_conversation[f"session_{number}"] = [
                {"speaker": speaker_a, "dia_id": f"D{number}:1", "text": f"What is new with {speaker}?"},
                {"speaker": speaker_b, "dia_id": answer_id, "text": " ".join(text for text, _ in notes)},
            ]
            new_conversation[f"session_{number}_date_time"] = conversation[f"{key}_date_time"]
            for _, cited in notes:
                for turn_id in re.findall(r"D\d+:\d+", cited):
                    turn_of_evidence.setdefault(turn_id, answer_id)
    qa = []
    for item in sample["qa"]:
        evidence = sorted({turn_of_evidence[e] for e in item.get("evidence") or [] if e in turn_of_evidence})
        if evidence:
            qa.append({**item, "evidence": evidence})
    return {"sample_id": sample["sample_id"], "conversation": new_conversation, "qa": qa}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reshape", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH, help="LoCoMo-format JSON file.")
    parser.add_argument("--out", type=Path, required=True, help="Where to write the reshaped file.")
    args = parser.parse_args(argv)
    samples = reshape(json.loads(args.path.read_text()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(samples, indent=1) + "\n")
    sessions = sum(sum(1 for k in s["conversation"] if _SESSION.match(k)) for s in samples)
    print(f"{len(samples)} samples, {sessions} sessions, {sum(len(s['qa']) for s in samples)} questions: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
