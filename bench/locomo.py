"""The LoCoMo file the benchmarks read by default, and the question and turn texts they take from it.

Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024; github.com/snap-research/locomo), a JSON list of samples, each one conversation
(``conversation``: ``session_N`` lists of turns) and its questions (``qa``).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.report import REPO_ROOT

__all__ = ["DEFAULT_PATH", "questions", "turns"]

DEFAULT_PATH = REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


def questions(path: Path, sample: str | None = None) -> list[str]:
    """The question texts of ``path`` in file order, only those of sample ``sample`` when given.

    Raises:
        ValueError: the file has no sample ``sample``.
    """
    samples = json.loads(path.read_text())
    if sample is not None:
        samples = [s for s in samples if s["sample_id"] == sample]
        if not samples:
            raise ValueError(f"{path} has no sample {sample}.")
    return [qa["question"] for s in samples for qa in s["qa"] if qa.get("question")]


def turns(path: Path) -> list[tuple[str, str]]:
    """``(speaker, text)`` of every turn in ``path``.

    Raises:
        ValueError: the file has no turns.
    """
    found = []
    for sample in json.loads(path.read_text()):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                found.extend((t["speaker"], t["text"]) for t in value if t.get("text"))
    if not found:
        raise ValueError(f"{path} has no LoCoMo turns.")
    return found
