"""The interfaces the rest of the service sees: ``Embedder`` and ``ChatModel``.

Only the backends in this package import ``openai`` or the local model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "Answer",
    "ChatModel",
    "Completion",
    "EmbeddingBatch",
    "Embedder",
    "EntityMention",
    "Fact",
    "FactExtraction",
    "ModelBackendError",
    "Usage",
]


@dataclass(frozen=True)
class Usage:
    """Token counts, where the backend reports them (``None`` where it does not)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    embedding_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            prompt_tokens=add(self.prompt_tokens, other.prompt_tokens),
            completion_tokens=add(self.completion_tokens, other.completion_tokens),
            embedding_tokens=add(self.embedding_tokens, other.embedding_tokens),
        )


@dataclass(frozen=True)
class EmbeddingBatch:
    """Unit-length vectors, one per input text and in input order."""

    vectors: list[list[float]]
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Completion:
    """A piece of text written by a ``ChatModel``; ``mode`` is ``generated`` or ``extractive``."""

    text: str
    mode: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Answer(Completion):
    """An answer to a question; ``sufficient`` is False when the model says the data is not enough."""

    sufficient: bool = True


@dataclass(frozen=True)
class EntityMention:
    """Someone or something a text names: ``kind`` is person, pet, place, organisation or other."""

    name: str
    kind: str


@dataclass(frozen=True)
class Fact:
    """A durable fact about a user, the messages (ids) it comes from, and the known fact it replaces.

    ``text`` is a third-person statement ("Caroline lives in Osaka."); ``slot`` names the attribute it
    fills when a person has one value at a time (``residence``, ``job``, ``favourite:food``, ...), else
    ``None``; ``confidence`` is the extractor's belief in it, 0..1. ``entities``: the people, pets,
    places and organisations it names, when the extractor says (``None``: not said; found by rules).
    ``ends``: it says a value ended ("The user quit the hospital."), filling its slot without a new
    value. ``by_meaning``: ``slot`` names a kind ("plan", "son:allergy"), and the fact joins the slot of
    the user's fact of that kind nearest it in meaning, when near enough (a new slot otherwise).
    """

    text: str
    message_ids: list[int]
    replaces_id: int | None = None
    slot: str | None = None
    confidence: float = 1.0
    entities: tuple[EntityMention, ...] | None = None
    ends: bool = False
    by_meaning: bool = False


@dataclass(frozen=True)
class FactExtraction:
    """Facts found in a conversation; ``mode`` is ``generated`` or ``extractive``; ``invalid``: facts the
    model wrote that did not fit the schema, even when asked again, and were left out."""

    facts: list[Fact]
    mode: str
    usage: Usage = field(default_factory=Usage)
    invalid: int = 0


class ModelBackendError(Exception):
    """The model backend failed (unreachable, timed out, refused). ``code`` is stable for clients.

    Codes: ``MODEL_BACKEND_UNAVAILABLE``, ``MODEL_BACKEND_TIMEOUT``, ``MODEL_BACKEND_ERROR``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Embedder(Protocol):
    """Turns texts into vectors of ``dimensions`` floats (cosine-comparable)."""

    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        """Embed ``texts`` (any number; batched by the backend).

        Raises:
            ModelBackendError: the backend failed.
        """
        ...


class ChatModel(Protocol):
    """Writes summaries and answers."""

    model_name: str
    mode: str

    def summarize(self, *, lines: Sequence[str], max_sentences: int) -> Completion:
        """Summarise a conversation given as ``"Speaker: text"`` lines, in order.

        Raises:
            ModelBackendError: the backend failed.
        """
        ...

    def extract_facts(
        self, *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]]
    ) -> FactExtraction:
        """Find durable facts about the user in ``messages`` (``(id, "Speaker: text")``, in order).

        Each fact is a third-person statement naming the speaker, with its ``slot`` (or ``None``)
        and ``confidence``. ``known_facts`` (``(id, text)``) are the user's active facts: a new
        fact without a slot that contradicts one of them names it in ``replaces_id``.

        Raises:
            ModelBackendError: the backend failed.
        """
        ...

    def answer(self, *, question: str, blocks: Sequence[str]) -> Answer:
        """Answer ``question`` from the retrieved ``blocks`` only (each starts with its number, ``[1]``...),
        citing the numbers of the blocks used.

        Only generated backends answer: with ``mode == "extractive"`` search quotes the supporting
        turns itself (``memories.search.answer``) and never calls this.

        Raises:
            ModelBackendError: the backend failed.
        """
        ...
