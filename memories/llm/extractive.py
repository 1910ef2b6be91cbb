"""The offline ``ChatModel``: summaries and answers built from existing sentences.

Nothing is generated: every sentence returned is a sentence of the conversation or of the
retrieved data, and results are marked ``mode="extractive"``.

- Summaries: centroid-based selection with maximal marginal relevance. Sentences are scored
  by cosine similarity to the mean sentence embedding of the session (Radev et al.,
  "Centroid-based summarization of multiple documents", 2004) and picked greedily with MMR
  (Carbonell & Goldstein, SIGIR 1998, lambda 0.7) so near-repeats are skipped.
- Facts: the first-person heuristic of ``memories.llm.facts``.
- Answers: not written here; offline, search quotes the supporting turns itself
  (``memories.search.answer``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memories.llm.base import Completion, Embedder, FactExtraction
from memories.llm.facts import extract_facts_heuristic
from memories.llm.text import split_sentences

__all__ = ["ExtractiveChatModel"]

_MMR_LAMBDA = 0.7
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

        Each sentence keeps its speaker (``"Caroline: I went to a support group."``).
        """
        candidates: list[str] = []
        for line in lines:
            speaker, _, text = line.partition(": ") if ": " in line else ("", "", line)
            for sentence in split_sentences(text):
                if len(sentence.split()) >= _MIN_WORDS:
                    candidates.append(f"{speaker}: {sentence}" if speaker else sentence)
        if not candidates:
            candidates = [line for line in lines if line.strip()]
        if len(candidates) <= max_sentences:
            return Completion(text=" ".join(candidates), mode=self.mode)
        vectors = np.asarray(self.embedder.embed(candidates).vectors)
        centroid = vectors.mean(axis=0)
        centroid /= np.linalg.norm(centroid) or 1.0
        relevance = vectors @ centroid
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
        """Durable first-person facts, by the heuristic documented in ``memories.llm.facts``."""
        return FactExtraction(facts=extract_facts_heuristic(messages=messages, known_facts=known_facts), mode=self.mode)
