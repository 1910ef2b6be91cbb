"""Backends chosen by settings: short names, dotted paths, and rebuilt when a backend setting changes."""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from memories.llm import EmbeddingBatch, get_chat_model, get_embedder
from memories.llm.local import LocalEmbedder
from memories.llm.openai_backend import OpenAIChatModel, OpenAIEmbedder


class ConstantEmbedder:
    """An embedder chosen by its dotted path; built by ``from_settings``, which reads a setting."""

    model_name = "constant"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    @classmethod
    def from_settings(cls) -> ConstantEmbedder:
        from django.conf import settings

        return cls(settings.EMBEDDING_DIMENSIONS)

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        return EmbeddingBatch(vectors=[[1.0] + [0.0] * (self.dimensions - 1) for _ in texts])


class SilentChatModel:
    """A chat model with no ``from_settings``: called with no arguments."""

    model_name = "silent"
    mode = "generated"


def test_short_names_choose_the_bundled_backends(settings):
    assert isinstance(get_embedder(), LocalEmbedder)
    settings.OPENAI_API_KEY = "test"
    settings.EMBEDDING_BACKEND = settings.CHAT_BACKEND = "openai"
    settings.EMBEDDING_MODEL = "text-embedding-3-small"
    assert isinstance(get_embedder(), OpenAIEmbedder)
    assert get_embedder().model_name == "text-embedding-3-small"
    assert isinstance(get_chat_model(), OpenAIChatModel)


def test_a_dotted_path_chooses_any_class_and_a_setting_change_rebuilds_it(settings):
    settings.EMBEDDING_BACKEND = "tests.llm.test_registry.ConstantEmbedder"
    settings.CHAT_BACKEND = "tests.llm.test_registry.SilentChatModel"
    embedder = get_embedder()
    assert isinstance(embedder, ConstantEmbedder)
    assert get_embedder() is embedder  # built once
    assert isinstance(get_chat_model(), SilentChatModel)

    settings.EMBEDDING_DIMENSIONS = 8
    assert get_embedder() is not embedder
    assert len(get_embedder().embed(["hello"]).vectors[0]) == 8


@pytest.mark.parametrize(
    ("value", "message"),
    [("tensorflow", "must be 'local' or 'openai' or a dotted path"), ("tests.no_such.Embedder", "does not import")],
)
def test_an_unknown_backend_is_refused(settings, value, message):
    settings.EMBEDDING_BACKEND = value
    with pytest.raises(ImproperlyConfigured, match=message):
        get_embedder()


def test_reembed_with_a_model_the_backend_cannot_run_is_refused(db):
    with pytest.raises(CommandError, match="The local backend has one model"):
        call_command("reembed", "--model", "text-embedding-3-large", stdout=StringIO())
