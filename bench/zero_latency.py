"""A chat model that answers at once, for timing the search pipeline without an LLM's latency.

Used by ``bench.speed`` as ``CHAT_BACKEND=bench.zero_latency.ZeroLatencyChatModel``: the full
pipeline runs (prompt blocks built, the answer stage called, stage 2 entered because the
answer says the data is insufficient), and the time measured is the service's own.
"""

from __future__ import annotations

from collections.abc import Sequence

from memories.llm.base import Answer, Completion, FactExtraction, Usage

__all__ = ["ZeroLatencyChatModel"]


class ZeroLatencyChatModel:
    """Implements ``memories.llm.ChatModel``; every call returns immediately.

    ``answer`` returns the first block's first line and ``sufficient=False``, so a search with
    ``searchContent`` always runs both stages (the slowest path).
    """

    model_name = "zero-latency"
    mode = "generated"

    def summarize(self, *, lines: Sequence[str], max_sentences: int) -> Completion:
        return Completion(text=" ".join(lines[:max_sentences]), mode=self.mode, usage=Usage())

    def extract_facts(
        self, *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]]
    ) -> FactExtraction:
        return FactExtraction(facts=[], mode=self.mode, usage=Usage())

    def answer(self, *, question: str, blocks: Sequence[str], query_vector: Sequence[float] | None = None) -> Answer:
        first = blocks[0].splitlines()[0] if blocks else ""
        return Answer(text=first, mode=self.mode, usage=Usage(), sufficient=False)
