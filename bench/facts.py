"""Fact-candidate benchmark on LoCoMo: precision and recall of extracted facts against the annotated observations.

Run from the repository root::

    .venv/bin/python -m bench.facts [PATH] [--threshold 0.7]
    .venv/bin/python -m bench.facts --msc [--examples]        # recall on MSC persona statements
    CHAT_BACKEND=bench.facts.ObservationChatModel .venv/bin/python -m bench.facts   # the fake LLM

``PATH`` defaults to ``../shared/data/locomo/locomo_dev.json``. Data: LoCoMo (Maharana et al., ACL 2024);
each session of a sample carries ``observation`` annotations: per speaker, statements with the turns
(``"D3:12"``) they come from.

How: for every session, the turns of ``speaker_a`` (role ``user`` in ``memories.importers``, so the only
turns ``knowledge_extract`` reads) go to the configured ``ChatModel.extract_facts`` (``CHAT_BACKEND``)
as ``(id, "Speaker: text")`` lines, exactly as the service sends them. Candidates and the session's
observations about ``speaker_a`` are embedded with the configured (offline) embedder.

- A candidate is correct when its cosine similarity to some observation of the same speaker in the same
  session is >= ``--threshold``; precision = correct / candidates.
- An observation is recalled when some candidate of its session reaches the threshold with it;
  recall = recalled / observations.

The threshold defaults to 0.7: with all-MiniLM-L6-v2, two statements of the same fact in different
words ("Caroline lives in Osaka." / "Caroline has moved to Osaka.") score above it, while two different
facts about the same person sharing the name and a topic mostly score below it; 0.6 and 0.8 are printed
beside it to show how much the figures depend on the choice.

``--msc``: recall on Multi-Session Chat's persona statements (Xu, Szlam & Weston, ACL 2022;
``../shared/data/msc/msc_personas_train.json``): 46,171 short first-person statements, each a fact
its speaker states about themselves ("I am a vegetarian.", "My sister lives in Osaka."). Each is sent
alone as a user's turn; recall is the share that raise at least one fact. ``--examples`` prints a
random sample of statements with what they raised, for reading precision by eye.

``--paraphrase [--split dev|test]``: the reader on statements and distractors written for this project
(``bench/data/paraphrase_{dev,test}.jsonl``, one user turn each, by an author who saw neither the
reader's examples nor its code; the test split is read once, at the end of a piece of work). A statement
names its ``slot`` (the kind: job, residence, pet...), whose it is (``about``: ``self`` or a kin word),
whether it ``ends`` a value, and ``value`` words any correct fact holds. Scores: *right fact* (a fact of
that kind, that owner, with every value word and the right ending), *opposite* (an ending raised as a
value that holds: a fact of that kind not marked as ending), *distractors raising a fact*.

``ObservationChatModel`` is a fake LLM for an upper-bound check of the pipeline: it returns the
session's own observations about the user as facts, so precision and recall should both be ~1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.locomo import DEFAULT_PATH

__all__ = [
    "DEFAULT_PATH",
    "MSC_PATH",
    "PARAPHRASE_DIR",
    "ObservationChatModel",
    "main",
    "msc_recall",
    "paraphrase",
    "run",
]

PARAPHRASE_DIR = Path(__file__).resolve().parent / "data"

MSC_PATH = DEFAULT_PATH.parent.parent / "msc" / "msc_personas_train.json"
# Message ids the bench hands the chat model: session * 1000 + turn, from dialogue ids such as "D3:12".
_ID_STRIDE = 1000


def _message_id(dia_id: str) -> int:
    session, turn = re.fullmatch(r"D(\d+):(\d+)", dia_id).groups()
    return int(session) * _ID_STRIDE + int(turn)


def _sessions(sample: dict) -> list[tuple[int, list[dict], list[str]]]:
    """``(number, speaker_a's turns, observations about speaker_a)`` per annotated session."""
    conversation, speaker = sample["conversation"], sample["conversation"]["speaker_a"]
    sessions = []
    for key, per_speaker in sample.get("observation", {}).items():
        number = int(re.fullmatch(r"session_(\d+)_observation", key).group(1))
        turns = [t for t in conversation.get(f"session_{number}", []) if t.get("speaker") == speaker]
        observations = [text for text, *_ in per_speaker.get(speaker, [])]
        sessions.append((number, turns, observations))
    return sessions


class ObservationChatModel:
    """A fake ``ChatModel`` whose ``extract_facts`` returns LoCoMo's observations about the speaker of the
    given turns, for the session they belong to (found by message id, see ``bench.facts``).

    Reads the file named by ``BENCH_FACTS_PATH`` (default ``DEFAULT_PATH``). Only ``extract_facts`` works.
    """

    mode = "generated"
    model_name = "locomo-observations"

    def __init__(self) -> None:
        samples = json.loads(Path(os.environ.get("BENCH_FACTS_PATH", DEFAULT_PATH)).read_text())
        self._by_turn: dict[tuple[str, int], list[str]] = {}
        for sample in samples:
            speaker = sample["conversation"]["speaker_a"]
            for number, _turns, observations in _sessions(sample):
                self._by_turn[(speaker, number)] = observations

    @classmethod
    def from_settings(cls) -> ObservationChatModel:
        """The instance ``CHAT_BACKEND = "bench.facts.ObservationChatModel"`` selects."""
        return cls()

    def extract_facts(self, *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]]):
        """The observations of the session of ``messages`` about their speaker, each citing every message."""
        from memories.llm.base import Fact, FactExtraction

        if not messages:
            return FactExtraction(facts=[], mode=self.mode)
        speaker = messages[0][1].partition(": ")[0]
        observations = self._by_turn.get((speaker, messages[0][0] // _ID_STRIDE), [])
        ids = [i for i, _ in messages]
        return FactExtraction(facts=[Fact(text=o, message_ids=ids) for o in observations], mode=self.mode)


def run(path: Path, thresholds: Sequence[float]) -> dict:
    """Extract, embed and score every session of ``path``.

    Returns:
        ``{"backend", "candidates", "observations", "sessions", "by_threshold": {t: {"precision", "recall"}},
        "examples"}``.
    """
    from memories.llm import get_chat_model, get_embedder

    chat, embedder = get_chat_model(), get_embedder()
    correct = {t: 0 for t in thresholds}
    recalled = {t: 0 for t in thresholds}
    n_candidates = n_observations = n_sessions = 0
    examples: list[tuple[float, str, str]] = []
    for sample in json.loads(path.read_text()):
        speaker = sample["conversation"]["speaker_a"]
        for _number, turns, observations in _sessions(sample):
            n_sessions += 1
            messages = [(_message_id(t["dia_id"]), f"{speaker}: {t['text']}") for t in turns]
            facts = [f.text for f in chat.extract_facts(messages=messages, known_facts=[]).facts]
            n_candidates += len(facts)
            n_observations += len(observations)
            if not facts or not observations:
                continue
            vectors = np.asarray(embedder.embed(facts + observations).vectors)
            similarity = vectors[: len(facts)] @ vectors[len(facts) :].T
            for t in thresholds:
                correct[t] += int((similarity.max(axis=1) >= t).sum())
                recalled[t] += int((similarity.max(axis=0) >= t).sum())
            for i, fact in enumerate(facts):
                j = int(similarity[i].argmax())
                examples.append((float(similarity[i, j]), fact, observations[j]))
    return {
        "backend": f"{type(chat).__module__}.{type(chat).__name__}",
        "sessions": n_sessions,
        "candidates": n_candidates,
        "observations": n_observations,
        "by_threshold": {
            t: {
                "precision": correct[t] / n_candidates if n_candidates else None,
                "recall": recalled[t] / n_observations if n_observations else None,
            }
            for t in thresholds
        },
        "examples": sorted(examples),
    }


def msc_recall(path: Path = MSC_PATH, *, limit: int | None = None, sample: int = 0) -> dict:
    """The share of MSC persona statements that raise at least one fact with the configured chat model.

    Args:
        limit: only the first ``limit`` statements (file order).
        sample: how many ``(statement, facts)`` pairs to return, drawn at random (seed 0).

    Returns:
        ``{"statements", "raised", "recall", "facts", "by_slot", "sample"}``.
    """
    import random

    from memories.llm import get_chat_model

    chat = get_chat_model()
    statements = [s for pair in json.loads(path.read_text()) for side in ("Speaker 1", "Speaker 2") for s in pair[side]]
    statements = statements[:limit] if limit else statements
    raised, facts, by_slot, pairs = 0, 0, {}, []
    for index, statement in enumerate(statements):
        found = chat.extract_facts(messages=[(index, f"user: {statement}")], known_facts=[]).facts
        raised += bool(found)
        facts += len(found)
        for fact in found:
            by_slot[fact.slot or "-"] = by_slot.get(fact.slot or "-", 0) + 1
        pairs.append((statement, [f.text for f in found]))
    return {
        "statements": len(statements),
        "raised": raised,
        "recall": raised / len(statements) if statements else None,
        "facts": facts,
        "by_slot": dict(sorted(by_slot.items(), key=lambda item: -item[1])[:15]),
        "sample": random.Random(0).sample(pairs, min(sample, len(pairs))),
    }


def _owner_matches(whose: str | None, about: str) -> bool:
    if about == "self":
        return whose is None
    return whose is not None and whose.split()[0] == about.lower()


def paraphrase(split: str = "dev") -> dict:
    """Score the configured chat model's ``extract_facts`` on ``paraphrase_{split}.jsonl`` (see the module docstring).

    Returns:
        ``{"statements", "right", "right_share", "endings", "opposite", "distractors", "raised_by_distractors",
        "distractor_share", "by_slot": {slot: [right, n]}, "misses": [(text, expected, facts)]}``.
    """
    from memories.llm import get_chat_model
    from memories.llm.reader import slot_parts

    chat = get_chat_model()
    items = [
        json.loads(line) for line in (PARAPHRASE_DIR / f"paraphrase_{split}.jsonl").read_text().splitlines() if line
    ]
    right = opposite = endings = raised = distractors = 0
    by_slot: dict[str, list[int]] = {}
    misses = []
    for index, item in enumerate(items):
        facts = chat.extract_facts(messages=[(index, f"user: {item['text']}")], known_facts=[]).facts
        if item["slot"] is None:
            distractors += 1
            raised += bool(facts)
            if facts:
                misses.append((item["text"], f"nothing ({item['why']})", [f.text for f in facts]))
            continue
        of_kind = [
            f
            for f in facts
            if slot_parts(f.slot)[1] == item["slot"] and _owner_matches(slot_parts(f.slot)[0], item["about"])
        ]
        ok = any(f.ends == item["ends"] and all(v.lower() in f.text.lower() for v in item["value"]) for f in of_kind)
        right += ok
        tally = by_slot.setdefault(item["slot"], [0, 0])
        tally[0] += ok
        tally[1] += 1
        if item["ends"]:
            endings += 1
            opposite += any(not f.ends for f in of_kind)
        if not ok:
            expected = f"{item['slot']} ({item['about']}{', ends' if item['ends'] else ''}) {item['value']}"
            misses.append((item["text"], expected, [f"{f.text} [{f.slot}{', ends' if f.ends else ''}]" for f in facts]))
    statements = len(items) - distractors
    return {
        "statements": statements,
        "right": right,
        "right_share": right / statements if statements else None,
        "endings": endings,
        "opposite": opposite,
        "distractors": distractors,
        "raised_by_distractors": raised,
        "distractor_share": raised / distractors if distractors else None,
        "by_slot": by_slot,
        "misses": misses,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print candidate precision and recall per threshold, and each candidate with its nearest observation."""
    parser = argparse.ArgumentParser(prog="python -m bench.facts", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--examples", action="store_true", help="print every candidate with its nearest observation")
    parser.add_argument("--msc", action="store_true", help="recall on MSC persona statements instead")
    parser.add_argument("--limit", type=int, help="with --msc: only the first N statements")
    parser.add_argument("--paraphrase", action="store_true", help="the reader on paraphrased statements instead")
    parser.add_argument("--split", choices=["dev", "test"], default="dev", help="with --paraphrase: which split")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")
    os.environ.setdefault("BENCH_FACTS_PATH", str(args.path))
    import django

    django.setup()
    if args.paraphrase:
        result = paraphrase(args.split)
        print(
            f"paraphrase {args.split}: right fact {result['right']}/{result['statements']} "
            f"({result['right_share']:.3f}); "
            f"endings read as holding {result['opposite']}/{result['endings']}; distractors raising a fact "
            f"{result['raised_by_distractors']}/{result['distractors']} ({result['distractor_share']:.3f})"
        )
        print("by slot: " + ", ".join(f"{k} {r}/{n}" for k, (r, n) in sorted(result["by_slot"].items())))
        if args.examples:
            for text, expected, facts in result["misses"]:
                print(f"- {text}\n    expected {expected}; got {facts}")
        return
    if args.msc:
        result = msc_recall(limit=args.limit, sample=60 if args.examples else 0)
        print(
            f"MSC persona statements: {result['statements']}, raising a fact: {result['raised']} "
            f"(recall {result['recall']:.3f}), facts: {result['facts']}; by slot: {result['by_slot']}"
        )
        for statement, found in result["sample"]:
            print(f"{statement}  ->  {found}")
        return
    thresholds = sorted({0.6, args.threshold, 0.8})
    result = run(args.path, thresholds)
    print(
        f"backend {result['backend']}: {result['sessions']} sessions, {result['candidates']} candidates, "
        f"{result['observations']} observations about the user"
    )
    for t, scores in result["by_threshold"].items():
        p, r = scores["precision"], scores["recall"]
        mark = "  <- stated threshold" if t == args.threshold else ""
        print(
            f"  cosine >= {t:.2f}: precision {p if p is None else f'{p:.3f}'}  "
            f"recall {r if r is None else f'{r:.3f}'}{mark}"
        )
    if args.examples:
        for score, fact, observation in result["examples"]:
            print(f"{score:.2f}  {fact}  ~  {observation}")


if __name__ == "__main__":
    main()
