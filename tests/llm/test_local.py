"""The offline backend, for real: the bundled MiniLM model and the extractive chat model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memories.llm import get_chat_model, get_embedder
from memories.llm.local import LocalEmbedder
from memories.llm.text import split_sentences

ROOT = Path(__file__).resolve().parents[2]


def test_paraphrase_ranks_above_unrelated_sentence():
    embedder = get_embedder()
    query, paraphrase, unrelated = embedder.embed(
        ["What is my favourite food?", "I love eating sushi more than any other dish.", "The train left at noon."]
    ).vectors
    assert embedder.dimensions == len(query) == 384
    assert np.dot(query, paraphrase) > np.dot(query, unrelated) + 0.1
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)


def test_empty_input_embeds_to_nothing():
    assert get_embedder().embed([]).vectors == []


def test_extractive_summary_is_built_from_conversation_sentences():
    lines = [
        "Caroline: Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful.",
        "Melanie: Wow, that sounds amazing. I painted a sunrise over the lake last weekend.",
        "Caroline: I am thinking about studying psychology so I can become a counselor.",
        "Melanie: That is great. My kids keep me busy with swimming lessons every Tuesday.",
        "Caroline: Thanks! See you soon.",
    ]
    completion = get_chat_model().summarize(lines=lines, max_sentences=3)
    assert completion.mode == "extractive"
    conversation_sentences = {
        f"{line.split(': ', 1)[0]}: {s}" for line in lines for s in split_sentences(line.split(": ", 1)[1])
    }
    picked = [s for s in conversation_sentences if s in completion.text]
    assert len(picked) == 3, completion.text
    # Kept in conversation order.
    positions = [completion.text.index(s) for s in picked]
    order_in_conversation = sorted(
        picked, key=lambda s: [i for i, line in enumerate(lines) if s.split(": ", 1)[1] in line][0]
    )
    assert [completion.text.index(s) for s in order_in_conversation] == sorted(positions)


class _RecordingModel:
    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def encode(self, texts, *, batch_size, **kwargs):
        self.batch_sizes.append(batch_size)
        return np.zeros((len(texts), 384), dtype=np.float32)


@pytest.mark.parametrize(("batch_size", "threads", "forward"), [(64, 1, 8), (64, 2, 16), (4, 2, 4)])
def test_forward_passes_hold_a_few_texts_per_thread(batch_size, threads, forward):
    # Texts are padded to the longest of their forward batch: small batches waste little.
    embedder = LocalEmbedder(batch_size=batch_size, threads=threads)
    embedder._model = _RecordingModel()
    assert len(embedder.embed(["a short text", "a much longer text " * 20] * 32).vectors) == 64
    assert embedder._model.batch_sizes == [forward]


# Texts whose vectors must not depend on the runtime: a query, a turn, an empty text, emoji,
# and one far over the model's 256-token limit (cut there by both runtimes).
AGREEMENT_TEXTS = [
    "What is my favourite food?",
    "Melanie: I painted a sunrise over the lake last weekend, and the kids loved the colours!",
    "",
    "🎉 naïve café — ça va? 東京",
    "Caroline talked about her adoption plans and the support group. " * 40,
]


@pytest.fixture(scope="module")
def torch_vectors():
    return np.asarray(LocalEmbedder(threads=1, runtime="torch").embed(AGREEMENT_TEXTS).vectors)


@pytest.mark.parametrize("batch_size", [1, 2, 64])
def test_onnx_runtime_gives_sentence_transformers_vectors(torch_vectors, batch_size):
    # Stored vectors and query vectors may come from either runtime: they must be the same
    # vectors, however the texts are padded together in a forward batch.
    onnx = LocalEmbedder(threads=1, runtime="onnxruntime", batch_size=batch_size)
    vectors = np.asarray(onnx.embed(AGREEMENT_TEXTS).vectors)
    assert vectors.shape == (len(AGREEMENT_TEXTS), 384)
    np.testing.assert_allclose(vectors, torch_vectors, atol=1e-5)


def test_unknown_runtime_is_refused(settings):
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ValueError, match="onnxruntime, torch"):
        LocalEmbedder(runtime="tensorflow")
    settings.EMBEDDING_RUNTIME = "tensorflow"
    with pytest.raises(ImproperlyConfigured, match="EMBEDDING_RUNTIME"):
        get_embedder()


def test_onnx_export_is_made_once_and_then_reused(tmp_path, monkeypatch, torch_vectors):
    from memories.llm import onnx_encoder

    cache_dir = tmp_path / "models"
    embedder = LocalEmbedder(threads=1, cache_dir=cache_dir)
    np.testing.assert_allclose(embedder.embed(AGREEMENT_TEXTS[:1]).vectors, torch_vectors[:1], atol=1e-5)
    (exported,) = cache_dir.glob("*.onnx")
    assert not list(cache_dir.glob("*.partial"))

    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder.subprocess, "run", no_export)
    assert onnx_encoder.onnx_model_file(cache_dir=cache_dir) == exported


def test_a_failed_onnx_export_is_reported_and_tried_again(tmp_path, monkeypatch):
    import sys

    from memories.llm import onnx_encoder

    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(RuntimeError, match="Exporting the embedding model to ONNX failed"):
        onnx_encoder.onnx_model_file(cache_dir=tmp_path)
    assert not list(tmp_path.glob("*.onnx"))
    monkeypatch.undo()
    assert onnx_encoder.onnx_model_file(cache_dir=tmp_path).exists()


_IMPORT_BACKENDS = """
import os, django
django.setup()
before = dict(os.environ)
import memories.llm.local, memories.llm.onnx_encoder, memories.checks
print(sorted(set(os.environ.items()) ^ set(before.items())))
"""


def test_importing_the_backends_sets_no_environment_variable():
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TOKENIZERS_PARALLELISM")}
    env["DJANGO_SETTINGS_MODULE"] = "memoryproject.settings"
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_BACKENDS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
