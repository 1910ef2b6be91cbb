"""The ``openai`` backend: any server that speaks the OpenAI API (OpenAI, vLLM, Ollama, LiteLLM, ...).

The client is built on first use, never at import time (it raises without a key).
Embeddings are requested in batches; results are put back in input order by ``index``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

import openai
from django.conf import settings

from memories.llm import prompts
from memories.llm.base import (
    Answer,
    Completion,
    EmbeddingBatch,
    EntityMention,
    Fact,
    FactExtraction,
    ModelBackendError,
    Usage,
)

__all__ = ["OpenAIChatModel", "OpenAIEmbedder"]

T = TypeVar("T")
logger = logging.getLogger(__name__)


def _client_settings(*, embeddings: bool = False) -> dict[str, object]:
    """The client's settings: the embeddings' own server and key when set (``OPENAI_EMBEDDING_*``), else the shared."""
    return {
        "api_key": (embeddings and settings.OPENAI_EMBEDDING_API_KEY) or settings.OPENAI_API_KEY,
        "base_url": (embeddings and settings.OPENAI_EMBEDDING_BASE_URL) or settings.OPENAI_BASE_URL,
        "timeout": settings.OPENAI_TIMEOUT_SECONDS,
        "max_retries": settings.OPENAI_MAX_RETRIES,
    }


class _Client:
    def __init__(self, *, api_key: str, base_url: str | None, timeout: float, max_retries: int) -> None:
        self._kwargs = {
            "api_key": api_key or "unset",
            "base_url": base_url,
            "timeout": timeout,
            "max_retries": max_retries,
        }
        self._client: openai.OpenAI | None = None

    @property
    def client(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai.OpenAI(**self._kwargs)
        return self._client

    def call(self, fn: Callable[[openai.OpenAI], T]) -> T:
        """Run ``fn(client)``, turning the client's failures into ``ModelBackendError``."""
        try:
            return fn(self.client)
        except openai.APITimeoutError as exc:
            raise ModelBackendError("MODEL_BACKEND_TIMEOUT", "The model backend timed out.") from exc
        except openai.APIConnectionError as exc:
            raise ModelBackendError("MODEL_BACKEND_UNAVAILABLE", "The model backend is unreachable.") from exc
        except openai.APIError as exc:
            # The provider's text may name keys or gateway internals: log it, do not pass it on.
            logger.warning("model backend refused a request: %s", exc)
            status = getattr(exc, "status_code", None)
            raise ModelBackendError(
                "MODEL_BACKEND_ERROR", f"The model backend refused the request (HTTP {status or 'error'})."
            ) from exc


class OpenAIEmbedder(_Client):
    """Embeddings from ``POST /embeddings``.

    Args:
        model_name: e.g. ``text-embedding-3-small``.
        dimensions: the length of the vectors the columns hold.
        request_dimensions: sent as ``dimensions`` only when set (some servers reject it).
        batch_size: texts per request.
    """

    def __init__(
        self,
        *,
        model_name: str,
        dimensions: int,
        request_dimensions: int | None = None,
        batch_size: int = 64,
        **client_kwargs: object,
    ) -> None:
        super().__init__(**client_kwargs)  # type: ignore[arg-type]
        self.model_name = model_name
        self.dimensions = dimensions
        self.request_dimensions = request_dimensions
        self.batch_size = batch_size

    @classmethod
    def from_settings(cls, *, model: str | None = None) -> OpenAIEmbedder:
        """The embedder ``EMBEDDING_BACKEND = "openai"`` selects.

        Reads ``EMBEDDING_MODEL`` (unless ``model`` is given), ``EMBEDDING_DIMENSIONS``,
        ``OPENAI_EMBEDDING_DIMENSIONS``, ``EMBEDDING_BATCH_SIZE``, ``OPENAI_EMBEDDING_BASE_URL`` /
        ``OPENAI_EMBEDDING_API_KEY`` (falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``) and the other
        ``OPENAI_*`` client settings.
        """
        return cls(
            model_name=model or settings.EMBEDDING_MODEL,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            request_dimensions=settings.OPENAI_EMBEDDING_DIMENSIONS,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            **_client_settings(embeddings=True),
        )

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        """Embed ``texts`` in batches of ``batch_size``.

        Raises:
            ModelBackendError: the server failed, or returned the wrong number or size of vectors.
        """
        vectors: list[list[float]] = []
        tokens = 0
        extra = {"dimensions": self.request_dimensions} if self.request_dimensions else {}
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            response = self.call(
                lambda c, batch=batch: c.embeddings.create(
                    model=self.model_name, input=batch, encoding_format="float", **extra
                )
            )
            data = sorted(response.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise ModelBackendError(
                    "MODEL_BACKEND_ERROR", f"Asked for {len(batch)} embeddings, received {len(data)}."
                )
            for item in data:
                if len(item.embedding) != self.dimensions:
                    raise ModelBackendError(
                        "MODEL_BACKEND_ERROR",
                        f"The model returned {len(item.embedding)} dimensions; EMBEDDING_DIMENSIONS is "
                        f"{self.dimensions}.",
                    )
                vectors.append(list(item.embedding))
            tokens += getattr(response.usage, "prompt_tokens", 0) or 0
        return EmbeddingBatch(vectors=vectors, usage=Usage(embedding_tokens=tokens))


class OpenAIChatModel(_Client):
    """Summaries and answers from ``POST /chat/completions``."""

    mode = "generated"

    def __init__(self, *, model_name: str, **client_kwargs: object) -> None:
        super().__init__(**client_kwargs)  # type: ignore[arg-type]
        self.model_name = model_name

    @classmethod
    def from_settings(cls) -> OpenAIChatModel:
        """The chat model ``CHAT_BACKEND = "openai"`` selects: ``CHAT_MODEL`` and the ``OPENAI_*`` client settings."""
        return cls(model_name=settings.CHAT_MODEL, **_client_settings())

    def _complete(self, system: str, user: str, *, response_format: dict | None = None) -> tuple[str, Usage]:
        extra = {"response_format": response_format} if response_format else {}
        response = self.call(
            lambda c: c.chat.completions.create(
                model=self.model_name,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0,
                **extra,
            )
        )
        if not response.choices:
            raise ModelBackendError("MODEL_BACKEND_ERROR", "The model backend returned no choices.")
        text = (response.choices[0].message.content or "").strip()
        usage = response.usage
        return text, Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
        )

    def summarize(self, *, lines: Sequence[str], max_sentences: int) -> Completion:
        """Summarise the conversation ``lines`` in at most ``max_sentences`` sentences."""
        text, usage = self._complete(prompts.SUMMARY_SYSTEM.format(max_sentences=max_sentences), "\n".join(lines))
        return Completion(text=text, mode=self.mode, usage=usage)

    def extract_facts(
        self, *, messages: Sequence[tuple[int, str]], known_facts: Sequence[tuple[int, str]]
    ) -> FactExtraction:
        """One structured-output call (``prompts.FACTS_SCHEMA``), sent again once if the reply is not that JSON
        or holds facts that do not fit the schema; the facts of the second reply that still do not fit are
        left out and counted (``FactExtraction.invalid``).

        Facts naming unknown message or fact ids keep only the known ones; confidence is clamped to 0..1.

        Raises:
            ModelBackendError: a call failed, or both replies were not JSON with a list of facts.
        """
        user = prompts.FACTS_USER.format(
            known="\n".join(f"[{i}] {t}" for i, t in known_facts) or "(none)",
            conversation="\n".join(f"[{i}] {t}" for i, t in messages),
        )
        message_ids, fact_ids = {i for i, _ in messages}, {i for i, _ in known_facts}
        usage = Usage()
        found: list[Fact | None] | None = None
        for _attempt in range(2):
            text, used = self._complete(prompts.FACTS_SYSTEM, user, response_format=prompts.FACTS_SCHEMA)
            usage += used
            try:
                items = json.loads(text)["facts"]
            except (ValueError, KeyError, TypeError):
                continue
            if not isinstance(items, list):
                continue
            found = [_fact(item, message_ids=message_ids, fact_ids=fact_ids) for item in items]
            if None not in found:
                break
        if found is None:
            raise ModelBackendError("MODEL_BACKEND_ERROR", "The model did not reply with the facts JSON, twice.")
        facts = [f for f in found if f is not None and f.text]
        return FactExtraction(facts=facts, mode=self.mode, usage=usage, invalid=found.count(None))

    def answer(self, *, question: str, blocks: Sequence[str]) -> Answer:
        """Answer from ``blocks``; ``sufficient`` is False when the model replies ``INSUFFICIENT_DATA`` or nothing."""
        text, usage = self._complete(
            prompts.ANSWER_SYSTEM, prompts.ANSWER_USER.format(data="\n\n".join(blocks), question=question)
        )
        sufficient = bool(text) and prompts.INSUFFICIENT not in text
        return Answer(text="" if not sufficient else text, mode=self.mode, usage=usage, sufficient=sufficient)


def _fact(item: object, *, message_ids: set[int], fact_ids: set[int]) -> Fact | None:
    """The fact an item of the reply's ``facts`` list states, or ``None`` when it does not fit the schema."""
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        return None
    try:
        cited = [int(i) for i in item.get("message_ids") or []]
        confidence = min(1.0, max(0.0, float(item.get("confidence", 1.0))))
    except (TypeError, ValueError):
        return None
    slot = item.get("slot")
    if slot is not None and not isinstance(slot, str):
        return None
    return Fact(
        text=item["text"].strip(),
        message_ids=[i for i in cited if i in message_ids],
        replaces_id=item["replaces_id"] if item.get("replaces_id") in fact_ids else None,
        slot=(slot or "").strip().lower() or None,
        confidence=confidence,
        entities=_entity_mentions(item.get("entities")),
    )


def _entity_mentions(items: object) -> tuple[EntityMention, ...] | None:
    """The entities a fact names, as the model listed them; ``None`` when it listed none at all."""
    if not isinstance(items, list):
        return None
    kinds = {"person", "pet", "place", "organisation"}
    return tuple(
        EntityMention(name=str(e["name"]).strip(), kind=e.get("kind") if e.get("kind") in kinds else "other")
        for e in items
        if isinstance(e, dict) and str(e.get("name", "")).strip()
    )
