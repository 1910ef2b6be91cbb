"""Training the reader's heads (``manage.py train_reader``): a development tool, not run by the service.

The examples are JSON Lines files in ``memories/llm/reader/examples/`` (format in its README): clause
lines (``text``, ``kind``, ``change``, ``about``) and act lines (``text``, ``act``, ``role``), written in
varied natural language for this project, plus a sample of the Multi-Session Chat persona statements
(Xu, Szlam & Weston, "Beyond Goldfish Memory", ACL 2022; ``../shared/data/msc``) as facts. Each text
is embedded as it is and as said by a named speaker (``"Ana: ..."``), as the worker embeds the
sentences of a client that names its speakers, so that one vector serves both.

Each head is scikit-learn's multinomial ``LogisticRegression`` (lbfgs, balanced class weights) over a
text's vector and its words (``CountVectorizer``: unigrams and bigrams of at least
``MIN_WORD_EXAMPLES`` examples, binary; see ``memories.llm.reader.heads``), with the inverse
regularisation of ``C_BY_HEAD``; ``--cv`` picks it again from ``C_GRID`` by 5-fold cross-validation
(folds grouped by text, so a text and its named form are never split) and prints the scores. The heads,
their vocabulary and the digest of the examples are written to ``heads.npz``: model and examples are
versioned together.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from memories.llm.person import third_person
from memories.llm.reader.heads import HEADS_FILE, TOKEN_PATTERN, Head, Heads
from memories.llm.reader.syntax import KIN

__all__ = [
    "ACTS",
    "C_GRID",
    "EXAMPLES_DIR",
    "FACT_KINDS",
    "MSC_SAMPLE",
    "NOT_FACTS",
    "Example",
    "augmented",
    "examples_digest",
    "load_examples",
    "train_heads",
]

EXAMPLES_DIR = Path(__file__).resolve().with_name("examples")
FACT_KINDS = (
    "job", "studies", "residence", "origin", "partner", "family", "pet", "diet", "allergy", "health", "plan", "name",
    "age", "birthday", "hobby", "preference", "language", "possession", "goal", "event", "trait",
)  # fmt: skip
NOT_FACTS = ("question", "wish", "passing", "other_person", "chat")
ACTS = ("statement", "question", "backchannel")
C_GRID = (1.0, 4.0, 16.0)
# Picked from C_GRID by cross-validation (``train_heads(cross_validate=True)``).
C_BY_HEAD = {"stance": 1.0, "kind": 4.0, "change": 1.0, "act": 4.0}
# How many MSC persona statements join the examples as facts (drawn with seed 0).
MSC_SAMPLE = 3000
_FOLDS = 5
# A word or word pair is a feature when at least this many examples hold it.
MIN_WORD_EXAMPLES = 2
_EMBED_CHUNK = 512
# How many composed examples join the written ones (``augmented``).
AUGMENT_TAILS = 2500
AUGMENT_TIMES = 1000
AUGMENT_RELATIVES = 2000
_JOINS = (", ", " - ", "... ", ", so ", ". ", " lol ", ", anyway ")
_TIMES = (
    "last week", "yesterday", "this morning", "a few days ago", "last month", "over the weekend", "on Friday",
    "earlier today", "recently", "back in March", "two weeks ago", "this week", "last night", "at the weekend",
)  # fmt: skip
_PAST = re.compile(r"\b(?:\w+ed|got|left|quit|took|began|sold|bought|lost|broke|went|came|made|gave|won|ran)\b", re.I)
_WHEN = re.compile(r"\d|\b(?:ago|last|yesterday|today|tomorrow|week|month|year|since|morning|night)\b", re.IGNORECASE)
_SPEAKERS = ("Ana", "Mel", "Joe", "Priya", "Kenji", "Fatima", "Olu", "Sven", "Lucía", "Wei", "Sam", "Noor")


@dataclass(frozen=True)
class Example:
    """One labelled text: for a clause, ``kind`` (a fact kind or a ``NOT_FACTS`` class) and ``change``;
    for a sentence of a turn, ``act``."""

    text: str
    kind: str | None = None
    change: str | None = None
    act: str | None = None


def _files() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.jsonl"))


def load_examples(*, msc_path: Path | None = None) -> list[Example]:
    """The examples of ``EXAMPLES_DIR`` and, with ``msc_path``, ``MSC_SAMPLE`` MSC persona statements as facts.

    Raises:
        ValueError: a line is not JSON or has an unknown label (the file and line are named).
    """
    found: list[Example] = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                found.append(_example(row))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path.name}:{number}: {exc}") from exc
    if msc_path is not None:
        statements = sorted(
            {s for pair in json.loads(msc_path.read_text()) for side in ("Speaker 1", "Speaker 2") for s in pair[side]}
        )
        for text in random.Random(0).sample(statements, min(MSC_SAMPLE, len(statements))):
            found.append(Example(text=text, kind="msc"))
    return found


def _example(row: dict) -> Example:
    text = row["text"].strip()
    if not text:
        raise ValueError("empty text")
    if "act" in row:
        if row["act"] not in ACTS:
            raise ValueError(f"unknown act {row['act']!r}")
        return Example(text=text, act=row["act"])
    kind = row["kind"]
    if kind not in FACT_KINDS and kind not in NOT_FACTS:
        raise ValueError(f"unknown kind {kind!r}")
    change = row.get("change", "holds")
    if change not in ("holds", "ends"):
        raise ValueError(f"unknown change {change!r}")
    return Example(text=text, kind=kind, change=change)


def examples_digest() -> str:
    """SHA-256 of the example files (names and bytes) and of the MSC sample's size: what the heads were
    trained on."""
    digest = hashlib.sha256()
    for path in _files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(f"msc:{MSC_SAMPLE}".encode())
    return digest.hexdigest()


def augmented(examples: Sequence[Example], *, seed: int = 0) -> list[Example]:
    """Examples composed from others, so that what does not change a clause's meaning does not change its
    label: a fact followed by a request, a question or a reaction ("I live in Austin, any taco places?") is
    still that fact, and a statement; a change told with when it happened ("I quit the bakery last week")
    is still a fact; what a speaker says of themselves is a fact of the same kind when said of a relative
    ("I have asthma" -> "My sister Ana has asthma"); a question is one without its question mark too."""
    rng = random.Random(seed)
    facts = [ex for ex in examples if ex.kind in FACT_KINDS]
    tails = [ex.text for ex in examples if ex.kind in ("question", "chat") or ex.act in ("question", "backchannel")]
    made = []
    for ex in rng.sample(facts, min(len(facts), AUGMENT_TAILS)):
        tail = rng.choice(tails)
        made.append(replace(ex, text=f"{ex.text.rstrip('.! ')}{rng.choice(_JOINS)}{tail[:1].lower()}{tail[1:]}"))
    changes = [ex for ex in facts if _PAST.search(ex.text) and not _WHEN.search(ex.text)]
    for ex in rng.sample(changes, min(len(changes), AUGMENT_TIMES)):
        made.append(replace(ex, text=f"{ex.text.rstrip('.! ')} {rng.choice(_TIMES)}"))
    # People leave the question mark out as often as not.
    made += [
        replace(ex, text=ex.text.rstrip(" ?")) for ex in examples if ex.kind == "question" and ex.text.endswith("?")
    ]
    mine = [ex for ex in facts if ex.kind != "name" and re.match(r"^I(?:'m|'ve| )", ex.text)]
    for ex in rng.sample(mine, min(len(mine), AUGMENT_RELATIVES)):
        made.append(replace(ex, text=_said_of_relative(ex.text, rng)))
    return made


def _said_of_relative(text: str, rng: random.Random) -> str:
    """A first-person ``text`` said of a relative: "I love my job" -> "My sister Ana loves her job"."""
    kin = rng.choice(sorted(k for k in KIN if KIN[k]))
    name = f" {rng.choice(_SPEAKERS)}" if rng.random() < 0.4 else ""
    said = third_person(text, subject=f"My {kin}{name}")
    his = {"he": ("his", "him", "himself"), "she": ("her", "her", "herself")}[KIN[kin]]
    for word, new in zip(("their", "them", "themselves"), his, strict=True):
        said = re.sub(rf"\b{word}\b", new, said)
    return re.sub(r"\bI\b", "I", said)


def _labels(examples: Sequence[Example]) -> dict[str, list[tuple[int, str]]]:
    """Per head, ``(example index, label)`` of the examples that train it."""
    heads: dict[str, list[tuple[int, str]]] = {"stance": [], "kind": [], "change": [], "act": []}
    for i, ex in enumerate(examples):
        if ex.act:
            heads["act"].append((i, ex.act))
            continue
        if ex.kind == "msc":
            heads["stance"].append((i, "fact"))
            continue
        fact = ex.kind in FACT_KINDS
        heads["stance"].append((i, "fact" if fact else ex.kind))
        if fact:
            heads["kind"].append((i, ex.kind))
            heads["change"].append((i, ex.change))
        # A clause is a sentence of a user's turn too: a question asks, the rest tells (chit-chat may only react).
        if ex.kind == "question":
            heads["act"].append((i, "question"))
        elif ex.kind != "chat":
            heads["act"].append((i, "statement"))
    return heads


def _fit(
    features,
    labels: Sequence[str],
    groups: np.ndarray,
    *,
    name: str,
    dimensions: int,
    cross_validate: bool,
    report: Callable[[str], None],
) -> Head:
    """One head on ``features`` (a sparse matrix: the vector's ``dimensions`` columns, then the words')."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, cross_val_score

    y = np.asarray(labels)
    best_c = C_BY_HEAD[name]
    if cross_validate:
        scores = {}
        for c in C_GRID:
            model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
            folds = GroupKFold(n_splits=_FOLDS)
            scores[c] = cross_val_score(model, features, y, groups=groups, cv=folds, scoring="balanced_accuracy").mean()
            report(f"  {name}: C={c:<5} balanced accuracy {scores[c]:.3f} (5-fold)")
        best_c = max(scores, key=scores.__getitem__)
    model = LogisticRegression(C=best_c, max_iter=3000, class_weight="balanced").fit(features, y)
    counts = dict(zip(*np.unique(y, return_counts=True), strict=True))
    report(f"  {name}: C={best_c}; examples per class {', '.join(f'{k} {v}' for k, v in counts.items())}")
    weights, bias = model.coef_, model.intercept_
    if len(model.classes_) == 2:  # one row for the second class: softmax([0, z]) is its sigmoid
        weights, bias = np.vstack([np.zeros_like(weights), weights]), np.concatenate([[0.0], bias])
    return Head(
        name=name,
        classes=tuple(str(c) for c in model.classes_),
        weights=weights[:, :dimensions].astype(np.float32),
        word_weights=weights[:, dimensions:].astype(np.float32),
        bias=bias.astype(np.float32),
    )


def train_heads(
    *,
    embed: Callable[[list[str]], np.ndarray],
    model_name: str,
    msc_path: Path,
    out: Path = HEADS_FILE,
    cross_validate: bool = False,
    report: Callable[[str], None] = print,
) -> Heads:
    """Embed the examples (as said and as said by a named speaker), fit the four heads, write them to ``out``.

    Args:
        embed: texts -> unit vectors, shape ``(len(texts), dimensions)``.
        model_name: the embedding model's name, recorded with the heads.
        msc_path: the MSC persona file to sample facts from.
        out: where to write the heads.
        cross_validate: pick each head's ``C`` from ``C_GRID`` by cross-validation (slower), printing the scores.
        report: called with each line of progress and cross-validation figures.

    Raises:
        ValueError: an example file has a bad line.
    """
    examples = load_examples(msc_path=msc_path)
    examples += augmented(examples)
    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    speakers = random.Random(0)
    texts = [ex.text for ex in examples] + [f"{speakers.choice(_SPEAKERS)}: {ex.text}" for ex in examples]
    report(f"Embedding {len(texts)} texts ({len(examples)} examples, each also as said by a named speaker)...")
    chunks = [texts[i : i + _EMBED_CHUNK] for i in range(0, len(texts), _EMBED_CHUNK)]
    vectors = np.concatenate([np.asarray(embed(chunk), dtype=np.float32) for chunk in tqdm(chunks, unit="chunk")])
    # The words of a text as said, without the speaker's name the vector may carry.
    counter = CountVectorizer(ngram_range=(1, 2), min_df=MIN_WORD_EXAMPLES, binary=True, token_pattern=TOKEN_PATTERN)
    bags = counter.fit_transform([ex.text for ex in examples])
    vocabulary = tuple(counter.get_feature_names_out())
    report(f"Vocabulary: {len(vocabulary)} words and word pairs in at least {MIN_WORD_EXAMPLES} examples.")
    n = len(examples)
    heads = {}
    for name, rows in _labels(examples).items():
        index = np.asarray([i for i, _ in rows])
        features = sparse.hstack(
            [sparse.csr_matrix(np.concatenate([vectors[index], vectors[index + n]])), sparse.vstack([bags[index]] * 2)]
        ).tocsr()
        labels = [label for _, label in rows] * 2
        groups = np.concatenate([index, index])
        heads[name] = _fit(
            features,
            labels,
            groups,
            name=name,
            dimensions=vectors.shape[1],
            cross_validate=cross_validate,
            report=report,
        )
    trained = Heads(**heads, vocabulary=vocabulary, model_name=model_name, examples_digest=examples_digest())
    trained.save(out)
    report(f"Wrote {out} ({out.stat().st_size // 1024} KiB).")
    return trained
