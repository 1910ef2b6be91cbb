"""The offline ``ChatModel``: summaries and answers built from existing sentences.

Nothing is generated: every sentence returned is a sentence of the conversation or of the
retrieved data, and results are marked ``mode="extractive"``.

- Summaries: centroid-based selection with maximal marginal relevance, favouring sentences
  that carry facts. Sentences are scored by cosine similarity to the mean sentence embedding
  of the session (Radev et al., "Centroid-based summarization of multiple documents", 2004)
  plus their informativeness (names, numbers, time expressions, first-person statements; a
  question counts against), the surface features of Edmundson, "New Methods in Automatic
  Extracting", JACM 1969; then picked greedily with MMR (Carbonell & Goldstein, SIGIR 1998,
  lambda 0.7) so near-repeats are skipped. Each sentence keeps its speaker.
- Facts: the offline reader, ``memories.llm.reader``.
- Answers: not written here; offline, search quotes the supporting turns itself
  (``memories.search.answer``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from memories.llm.base import Completion, Embedder, FactExtraction
from memories.llm.reader import read_facts, reader_embedding, sentence_acts
from memories.llm.text import split_sentences

__all__ = ["ExtractiveChatModel"]

_MMR_LAMBDA = 0.7
# Weight of a sentence's informativeness (scaled to 0..1 within the session) beside its centrality.
INFORMATIVENESS_WEIGHT = 0.5
_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tomorrow|tonight|ago|last|next|since|until|week|weekend|month|year|years|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|birthday|anniversary)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'll|I'd|my|me|we|our|us)\b")
_PRONOUN_I = {"I", "I'm", "I've", "I'll", "I'd"}
_MIN_WORDS = 4


class ExtractiveChatModel:
    """A ``ChatModel`` that selects sentences instead of writing them.

    Args:
        embedder: used to embed candidate sentences.
    """

    mode = "extractive"
    model_name = "extractive"

    def __init__(self, *, embedder: Embedder) -> None:
        self.embedder = embedder

    def summarize(self, *, lines: Sequence[str], max_sentences: int) -> Completion:
        """Pick up to ``max_sentences`` central, non-redundant sentences, kept in conversation order.

        Each sentence keeps its speaker (``"Caroline: I went to a support group."``); questions and
        acknowledgements (the reader's dialogue acts, ``memories.llm.reader``) are not candidates, so a
        session of nothing else has an empty summary (never searched); sentences of fewer than four
        words only when no longer one tells anything.
        """
        said, sentences = [], []
        for line in lines:
            speaker, _, text = line.partition(": ") if ": " in line else ("", "", line)
            for sentence in split_sentences(text):
                said.append(f"{speaker}: {sentence}" if speaker else sentence)
                sentences.append(sentence)
        if not said:
            return Completion(text="", mode=self.mode)
        vectors = np.asarray(self.embedder.embed(said).vectors)
        embed, reuse = reader_embedding(self.embedder)
        acts = sentence_acts(vectors if reuse else embed(said), sentences)
        telling = [i for i, act in enumerate(acts) if act == "statement"]
        long = [i for i in telling if len((said[i].partition(": ")[2] or said[i]).split()) >= _MIN_WORDS]
        chosen_from = long or telling
        candidates = [said[i] for i in chosen_from]
        if len(candidates) <= max_sentences:
            return Completion(text=" ".join(candidates), mode=self.mode)
        vectors = vectors[chosen_from]
        centroid = vectors.mean(axis=0)
        centroid /= np.linalg.norm(centroid) or 1.0
        informativeness = np.asarray([_informativeness(c.partition(": ")[2] or c) for c in candidates], dtype=float)
        informativeness = np.clip(informativeness, 0, None) / (informativeness.max() or 1.0)
        relevance = vectors @ centroid + INFORMATIVENESS_WEIGHT * informativeness
        chosen: list[int] = []
        while len(chosen) < max_sentences:
            if chosen:
                redundancy = (vectors @ vectors[chosen].T).max(axis=1)
            else:
                redundancy = np.zeros(len(candidates))
            score = _MMR_LAMBDA * relevance - (1 - _MMR_LAMBDA) * redundancy
            score[chosen] = -np.inf
            chosen.append(int(score.argmax()))
        return Completion(text=" ".join(candidates[i] for i in sorted(chosen)), mode=self.mode)

    def extract_facts(
        self, *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]]
    ) -> FactExtraction:
        """The facts the offline reader (``memories.llm.reader``) finds in the user's turns; ``known_facts``
        are not needed (a fact replaces another by its slot)."""
        return FactExtraction(facts=read_facts(messages, embed=reader_embedding(self.embedder)[0]), mode=self.mode)


def _informativeness(sentence: str) -> float:
    """Surface signs that a sentence carries a fact: names, numbers, time expressions, a first
    person speaking of themselves; a question carries none of its own."""
    words = [w.strip(".,!?;:'\"()") for w in sentence.split()]
    names = sum(1 for w in words[1:] if w[:1].isupper() and w not in _PRONOUN_I)
    numbers = sum(1 for w in words if any(ch.isdigit() for ch in w))
    times = len(_TIME_WORDS.findall(sentence))
    first_person = 1 if _FIRST_PERSON.search(sentence) else 0
    question = 2 if sentence.rstrip().endswith("?") else 0
    return names + numbers + times + first_person - question
