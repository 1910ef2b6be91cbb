"""Reading conversations in LoCoMo format (Maharana et al., ACL 2024; github.com/snap-research/locomo).

A file is a JSON list of samples; each sample's ``conversation`` holds ``speaker_a``,
``speaker_b`` and, for N = 1, 2, ..., ``session_N`` (turns ``{speaker, dia_id, text}``,
some with ``img_url``, ``blip_caption`` and ``query`` for a shared photo) and
``session_N_date_time`` (``"1:56 pm on 8 May, 2023"``, taken as UTC). An empty session is
skipped; a session without a readable date and time is an error (``ValueError``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memories.services.messages import MessageIn

__all__ = ["LocomoSession", "locomo_sessions", "parse_locomo_time"]

_SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class LocomoSession:
    """One LoCoMo session, ready for ``messages_add``: user id is the ``sample_id``."""

    user_id: str
    session_id: str
    started_at: datetime
    messages: list[MessageIn]


def parse_locomo_time(value: str) -> datetime:
    """Parse ``"1:56 pm on 8 May, 2023"`` as a UTC datetime.

    Raises:
        ValueError: not in that format.
    """
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def locomo_sessions(path: Path) -> Iterator[LocomoSession]:
    """Yield every session of every sample in the file, in order.

    ``speaker_a``'s turns become role ``user`` and ``speaker_b``'s ``assistant``; the speaker's
    name, the turn's ``dia_id`` and any photo caption go into metadata; ``dia_id`` is also the
    message's ``external_id``, so importing twice stores nothing twice.

    Raises:
        ValueError: the file is not LoCoMo-shaped (the message says what is missing).
    """
    samples = json.loads(Path(path).read_text())
    if not isinstance(samples, list):
        raise ValueError("A LoCoMo file is a JSON list of samples.")
    for sample in samples:
        try:
            user_id = str(sample["sample_id"])
            conversation = sample["conversation"]
            speaker_a = conversation["speaker_a"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"Sample without {exc}: each needs sample_id and conversation.speaker_a.") from exc
        numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
        for number in numbers:
            turns = conversation[f"session_{number}"]
            if not turns:
                continue
            try:
                started_at = parse_locomo_time(conversation[f"session_{number}_date_time"])
            except (KeyError, ValueError) as exc:
                raise ValueError(
                    f"{user_id}, session_{number}: no session_{number}_date_time like '1:56 pm on 8 May, 2023' ({exc})."
                ) from exc
            messages = [m for turn in turns if (m := _message(turn, speaker_a=speaker_a, at=started_at))]
            if messages:
                yield LocomoSession(
                    user_id=user_id, session_id=f"session_{number}", started_at=started_at, messages=messages
                )


def _message(turn: dict, *, speaker_a: str, at: datetime) -> MessageIn | None:
    """The turn as a message; a photo shared without words is ``"(shared a photo)"`` (its
    caption is in metadata); ``None`` for a turn with neither."""
    metadata: dict[str, object] = {"speaker": turn["speaker"], "dia_id": turn["dia_id"]}
    if turn.get("blip_caption"):
        metadata["image_caption"] = turn["blip_caption"]
    if turn.get("img_url"):
        metadata["image_urls"] = turn["img_url"]
    text = str(turn.get("text") or "")
    if not text.strip():
        if "image_caption" not in metadata:
            return None
        text = "(shared a photo)"
    return MessageIn(
        role="user" if turn["speaker"] == speaker_a else "assistant",
        content=text,
        created_at=at,
        metadata=metadata,
        external_id=turn["dia_id"],
    )
