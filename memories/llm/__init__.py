"""Models for embeddings and text generation, chosen by settings.

``get_embedder()`` and ``get_chat_model()`` return the configured backend:
``EMBEDDING_BACKEND`` / ``CHAT_BACKEND`` are ``local`` (offline; the default without an API
key) or ``openai`` (any OpenAI-compatible server). Instances are cached per configuration,
so a loaded local model is reused for the life of the process.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from memories.llm.base import Answer, ChatModel, Completion, Embedder, EmbeddingBatch, ModelBackendError, Usage

__all__ = [
    "Answer",
    "ChatModel",
    "Completion",
    "EmbeddingBatch",
    "Embedder",
    "ModelBackendError",
    "Usage",
    "get_chat_model",
    "get_embedder",
]


def _client_kwargs() -> dict[str, object]:
    return {
        "api_key": settings.OPENAI_API_KEY,
        "base_url": settings.OPENAI_BASE_URL,
        "timeout": settings.OPENAI_TIMEOUT_SECONDS,
        "max_retries": settings.OPENAI_MAX_RETRIES,
    }


def get_embedder() -> Embedder:
    """The configured ``Embedder``.

    Raises:
        ImproperlyConfigured: unknown ``EMBEDDING_BACKEND`` or ``EMBEDDING_RUNTIME``.
    """
    return _embedder(
        settings.EMBEDDING_BACKEND,
        settings.EMBEDDING_MODEL,
        settings.EMBEDDING_DIMENSIONS,
        settings.OPENAI_EMBEDDING_DIMENSIONS,
        settings.EMBEDDING_BATCH_SIZE,
        settings.EMBEDDING_THREADS,
        settings.EMBEDDING_PROCESS,
        settings.EMBEDDING_RUNTIME,
        settings.MODEL_CACHE_DIR,
        settings.WEB_THREADS,
        tuple(sorted(_client_kwargs().items())),
    )


@lru_cache(maxsize=4)
def _embedder(
    backend: str,
    model: str,
    dimensions: int,
    request_dimensions: int | None,
    batch_size: int,
    threads: int,
    own_process: bool,
    runtime: str,
    cache_dir: Path,
    requests: int,
    client_items: tuple[tuple[str, object], ...],
) -> Embedder:
    if backend == "local":
        from memories.llm.local import RUNTIMES, LocalEmbedder

        if model != LocalEmbedder.model_name:
            raise ImproperlyConfigured(
                f"The local backend has one model, {LocalEmbedder.model_name!r}; EMBEDDING_MODEL is {model!r}."
            )
        # One pipe per request thread, and a few for other threads (the warm-up).
        if runtime not in RUNTIMES:
            raise ImproperlyConfigured(f"EMBEDDING_RUNTIME must be one of {', '.join(RUNTIMES)}, not {runtime!r}.")
        embedder = LocalEmbedder(
            batch_size=batch_size,
            threads=threads,
            own_process=own_process,
            channels=requests + 2,
            runtime=runtime,
            cache_dir=cache_dir,
        )
        if dimensions != embedder.dimensions:
            raise ImproperlyConfigured(
                f"EMBEDDING_DIMENSIONS is {dimensions}, but the local model gives {embedder.dimensions}."
            )
        return embedder
    if backend == "openai":
        from memories.llm.openai_backend import OpenAIEmbedder

        return OpenAIEmbedder(
            model_name=model,
            dimensions=dimensions,
            request_dimensions=request_dimensions,
            batch_size=batch_size,
            background_requests=requests,
            **dict(client_items),
        )
    raise ImproperlyConfigured(f"EMBEDDING_BACKEND must be 'local' or 'openai', not {backend!r}.")


def get_chat_model() -> ChatModel:
    """The configured ``ChatModel``: ``local`` is the extractive model, ``openai`` an LLM.

    ``CHAT_BACKEND`` may also be the dotted path of a class implementing ``ChatModel`` with a
    constructor taking no arguments (e.g. ``bench.zero_latency.ZeroLatencyChatModel``, which
    the speed benchmark uses to time the pipeline without an LLM's latency).

    Raises:
        ImproperlyConfigured: unknown ``CHAT_BACKEND``, or a dotted path that does not import.
    """
    return _chat_model(
        settings.CHAT_BACKEND,
        settings.CHAT_MODEL,
        settings.EXTRACTIVE_SUFFICIENT_SIMILARITY,
        tuple(sorted(_client_kwargs().items())),
        get_embedder(),
    )


@lru_cache(maxsize=4)
def _chat_model(backend, model, sufficient_similarity, client_items, embedder) -> ChatModel:  # noqa: ANN001
    if backend == "local":
        from memories.llm.extractive import ExtractiveChatModel

        return ExtractiveChatModel(embedder=embedder, sufficient_similarity=sufficient_similarity)
    if backend == "openai":
        from memories.llm.openai_backend import OpenAIChatModel

        return OpenAIChatModel(model_name=model, **dict(client_items))
    if "." in backend:
        try:
            return import_string(backend)()
        except ImportError as exc:
            raise ImproperlyConfigured(f"CHAT_BACKEND {backend!r} does not import: {exc}") from exc
    raise ImproperlyConfigured(f"CHAT_BACKEND must be 'local', 'openai' or a dotted class path, not {backend!r}.")
