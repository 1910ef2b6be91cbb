"""The reader's classifiers: multinomial logistic regression heads over the shipped sentence embedding and
the words of the text.

Each head maps a text to probabilities over its classes: ``softmax(W @ v + U @ w + b)``, where ``v`` is the
text's unit vector from the embedding model (all-MiniLM-L6-v2, 384 floats) and ``w`` marks which words
and word pairs of a vocabulary learned from the examples the text holds (``words``: lower-cased, with "?"
and "!"; a binary bag of unigrams and bigrams, as scikit-learn's ``CountVectorizer(ngram_range=(1, 2),
binary=True)`` makes it). The vector carries meaning in any words; the words carry what an average of
token vectors blurs ("if", "wish", "quit", "?"). They are trained on the labelled examples in
``memories/llm/reader/examples/`` by ``manage.py train_reader`` (scikit-learn, a development
requirement) and shipped as one NumPy file, ``heads.npz``, loaded here with NumPy alone.

- ``stance``: what a clause is: ``fact`` (something lasting or notable about the speaker or a
  relative of theirs), or ``question``, ``wish`` (wishes, hypotheticals, maybes), ``passing`` (a
  passing moment), ``other_person`` (someone else's news), ``chat``.
- ``kind``: for a fact, what it is about (``job``, ``residence``, ``partner``, ``pet``, ``plan``, ...).
- ``change``: for a fact, whether it ``holds`` (starts or continues a value) or ``ends`` one (quit,
  moved out, split up, passed away, cancelled, postponed).
- ``act``: a sentence's dialogue act: ``statement``, ``question`` or ``backchannel`` (after the coarse
  classes of Jurafsky, Shriberg & Biasca, "Switchboard SWBD-DAMSL Shallow-Discourse-Function
  Annotation", 1997).

Sources: Reimers & Gurevych, "Sentence-BERT", 2019 (the frozen encoder); linear probes of sentence
embeddings as in Conneau et al., "SentEval", 2018; word n-gram features beside them as in Wang &
Manning, "Baselines and Bigrams", ACL 2012.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

__all__ = ["HEADS_FILE", "HEAD_NAMES", "TOKEN_PATTERN", "Head", "Heads", "reader_heads", "words"]

HEADS_FILE = Path(__file__).resolve().with_name("heads.npz")
HEAD_NAMES = ("stance", "kind", "change", "act")
# A word, or a "?" or "!" (scikit-learn's ``token_pattern`` as the training passes it).
TOKEN_PATTERN = r"(?u)\b\w+\b|[?!]"
_TOKEN = re.compile(TOKEN_PATTERN)


def words(text: str) -> list[str]:
    """The unigrams and bigrams of ``text``, lower-cased, in order (``CountVectorizer``'s analyzer)."""
    tokens = _TOKEN.findall(text.lower())
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]


@dataclass(frozen=True)
class Head:
    """One classifier: ``weights`` (classes x dimensions) over unit vectors, ``word_weights`` (classes x
    vocabulary) over the words present, and ``bias`` (classes)."""

    name: str
    classes: tuple[str, ...]
    weights: np.ndarray
    word_weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, vectors: np.ndarray, present: Sequence[Sequence[int]]) -> np.ndarray:
        """Class probabilities, shape ``(n, len(classes))``, for ``n`` texts given by their vectors (shape ``(n,
        dimensions)``) and the vocabulary indices of the words each holds (``Heads.present``)."""
        logits = np.asarray(vectors, dtype=np.float32) @ self.weights.T + self.bias
        for row, indices in enumerate(present):
            if indices:
                logits[row] += self.word_weights[:, list(indices)].sum(axis=1, dtype=np.float32)
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Heads:
    """The four heads, their word vocabulary, the embedding model they were trained on, and the digest of
    their examples."""

    stance: Head
    kind: Head
    change: Head
    act: Head
    vocabulary: tuple[str, ...]
    model_name: str
    examples_digest: str
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {word: i for i, word in enumerate(self.vocabulary)})

    def present(self, texts: Sequence[str]) -> list[list[int]]:
        """For each text, the vocabulary indices of the words it holds (each once)."""
        return [sorted({self._index[w] for w in words(text) if w in self._index}) for text in texts]

    def save(self, path: Path = HEADS_FILE) -> None:
        """Write the heads to ``path`` (NumPy's ``.npz``, compressed; weights as float16)."""
        arrays: dict[str, np.ndarray] = {
            "vocabulary": np.array(self.vocabulary),
            "model_name": np.array(self.model_name),
            "examples_digest": np.array(self.examples_digest),
        }
        for name in HEAD_NAMES:
            head: Head = getattr(self, name)
            arrays[f"{name}.classes"] = np.array(head.classes)
            arrays[f"{name}.weights"] = head.weights.astype(np.float16)
            arrays[f"{name}.word_weights"] = head.word_weights.astype(np.float16)
            arrays[f"{name}.bias"] = head.bias.astype(np.float32)
        with path.open("wb") as file:
            np.savez_compressed(file, **arrays)

    @classmethod
    def load(cls, path: Path = HEADS_FILE) -> Heads:
        """The heads saved at ``path``.

        Raises:
            FileNotFoundError: no such file (``manage.py train_reader`` writes it).
        """
        with np.load(path, allow_pickle=False) as data:
            heads = {
                name: Head(
                    name=name,
                    classes=tuple(str(c) for c in data[f"{name}.classes"]),
                    weights=data[f"{name}.weights"].astype(np.float32),
                    word_weights=data[f"{name}.word_weights"].astype(np.float32),
                    bias=data[f"{name}.bias"],
                )
                for name in HEAD_NAMES
            }
            return cls(
                **heads,
                vocabulary=tuple(str(w) for w in data["vocabulary"]),
                model_name=str(data["model_name"]),
                examples_digest=str(data["examples_digest"]),
            )


@cache
def reader_heads() -> Heads:
    """The shipped heads (``HEADS_FILE``), loaded once per process."""
    return Heads.load()
