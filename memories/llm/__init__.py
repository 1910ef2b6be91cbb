"""Models for embeddings and text generation, chosen by settings.

``get_embedder()`` and ``get_chat_model()`` return the configured backend. ``EMBEDDING_BACKEND``
and ``CHAT_BACKEND`` name one: ``local`` (offline; the default without an API key), ``openai``
(any OpenAI-compatible server), or the dotted path of a class or function (as mem0's
provider factory does). A class with a ``from_settings()`` class method is built by it,
anything else is called with no arguments. Each is built once per process and rebuilt when a
backend setting changes (Django's ``setting_changed`` signal, sent by ``override_settings``
and the test ``settings`` fixture).
"""

from __future__ import annotations

from functools import cache

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from memories.llm.base import Answer, ChatModel, Completion, Embedder, EmbeddingBatch, ModelBackendError, Usage

__all__ = [
    "CHAT_BACKENDS",
    "EMBEDDING_BACKENDS",
    "Answer",
    "ChatModel",
    "Completion",
    "EmbeddingBatch",
    "Embedder",
    "ModelBackendError",
    "Usage",
    "get_chat_model",
    "get_embedder",
    "make_embedder",
]

# The short names EMBEDDING_BACKEND and CHAT_BACKEND accept, and the dotted paths they stand for.
EMBEDDING_BACKENDS = {
    "local": "memories.llm.local.LocalEmbedder",
    "openai": "memories.llm.openai_backend.OpenAIEmbedder",
}
CHAT_BACKENDS = {
    "local": "memories.llm.local.extractive_chat_model",
    "openai": "memories.llm.openai_backend.OpenAIChatModel",
}
# A change to a setting named so (or starting so) rebuilds the backends.
_BACKEND_SETTINGS = ("EMBEDDING_", "CHAT_", "OPENAI_", "MODEL_CACHE_DIR")


@cache
def get_embedder() -> Embedder:
    """The configured ``Embedder`` (``EMBEDDING_BACKEND``), built once per process.

    Raises:
        ImproperlyConfigured: the backend does not import, or refuses its settings.
    """
    return _build("EMBEDDING_BACKEND", EMBEDDING_BACKENDS)


def make_embedder(*, model: str) -> Embedder:
    """A new ``Embedder`` of the configured backend for ``model`` instead of ``EMBEDDING_MODEL`` (not cached).

    ``manage.py reembed --model`` uses it; the backend's ``from_settings`` must take ``model``.

    Raises:
        ImproperlyConfigured: the backend does not import, or cannot run ``model``.
    """
    return _build("EMBEDDING_BACKEND", EMBEDDING_BACKENDS, model=model)


@cache
def get_chat_model() -> ChatModel:
    """The configured ``ChatModel`` (``CHAT_BACKEND``): ``local`` is the extractive model, ``openai`` an LLM.

    Raises:
        ImproperlyConfigured: the backend does not import, or refuses its settings.
    """
    return _build("CHAT_BACKEND", CHAT_BACKENDS)


def _build(setting: str, aliases: dict[str, str], **overrides: object) -> object:
    from django.conf import settings

    name = getattr(settings, setting)
    path = aliases.get(name, name)
    if "." not in path:
        names = " or ".join(map(repr, aliases))
        raise ImproperlyConfigured(f"{setting} must be {names} or a dotted path, not {name!r}.")
    try:
        backend = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"{setting} {name!r} does not import: {exc}") from exc
    return getattr(backend, "from_settings", backend)(**overrides)


def _settings_changed(*, setting: str, **kwargs: object) -> None:
    if setting.startswith(_BACKEND_SETTINGS):
        get_embedder.cache_clear()
        get_chat_model.cache_clear()


setting_changed.connect(_settings_changed)
