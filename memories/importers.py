"""Reading conversations in LoCoMo format (Maharana et al., ACL 2024; github.com/snap-research/locomo).

A file is a JSON list of samples; each sample's ``conversation`` holds ``speaker_a``,
``speaker_b`` and, for N = 1, 2, ..., ``session_N`` (turns ``{speaker, dia_id, text}``,
some with ``img_url``, ``blip_caption`` and ``query`` for a shared photo) and
``session_N_date_time`` (``"1:56 pm on 8 May, 2023"``, taken as UTC).

Real files are not always clean: a bad turn is repaired or dropped, and a bad session or
sample skipped, each noted in a ``LocomoReport`` naming the sample, session and turn, so one
bad row never stops the rest of a file from being read. An empty session is skipped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from memories.services.messages import MessageIn

__all__ = ["LocomoReport", "LocomoSession", "locomo_sessions", "parse_locomo_time"]

_SESSION_KEY = re.compile(r"^session_(\d+)$")
# Text no PostgreSQL text column holds: the NUL character and lone surrogates.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class LocomoSession:
    """One LoCoMo session, ready for ``messages_add``: user id is the ``sample_id``."""

    user_id: str
    session_id: str
    started_at: datetime
    messages: list[MessageIn]


@dataclass
class LocomoReport:
    """What reading a file left out or changed, one readable line each.

    ``warnings``: a turn's field dropped or shortened, or a turn dropped (the rest of its
    session is read); ``skipped``: a session or sample that could not be read at all.
    """

    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def parse_locomo_time(value: str) -> datetime:
    """Parse ``"1:56 pm on 8 May, 2023"`` as a UTC datetime.

    Raises:
        ValueError: not in that format.
    """
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def locomo_sessions(path: Path, *, report: LocomoReport | None = None) -> Iterator[LocomoSession]:
    """Yield every readable session of every sample in the file, in order.

    ``speaker_a``'s turns become role ``user`` and ``speaker_b``'s ``assistant``; the speaker's
    name, the turn's ``dia_id`` and any photo caption and (web) photo URLs go into metadata;
    ``dia_id`` is also the message's ``external_id``, so importing twice stores nothing twice.
    What cannot be stored as sent is repaired or left out and noted in ``report``: an inline
    ``data:`` photo URL (the caption is kept), text over ``MAX_MESSAGE_CHARS``, metadata over
    ``MAX_METADATA_BYTES``, a turn without a speaker or ``dia_id``, a session without a readable
    date, a sample without ``sample_id`` or ``conversation.speaker_a``.

    Raises:
        ValueError: the file is not JSON, is nested past Python's recursion limit, or is not a JSON
            list (the message says which).
        OSError: the file cannot be read.
    """
    report = report if report is not None else LocomoReport()
    try:
        samples = json.loads(Path(path).read_text(encoding="utf-8"))
    except RecursionError:
        raise ValueError("The file's JSON is nested too deeply to be a LoCoMo file.") from None
    if not isinstance(samples, list):
        raise ValueError("A LoCoMo file is a JSON list of samples.")
    for index, sample in enumerate(samples):
        try:
            user_id = str(sample["sample_id"])
            conversation = sample["conversation"]
            speaker_a = conversation["speaker_a"]
        except (KeyError, TypeError) as exc:
            report.skipped.append(f"sample #{index + 1}: no {exc}: each needs sample_id and conversation.speaker_a.")
            continue
        numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
        for number in numbers:
            where = f"{user_id}, session_{number}"
            turns = conversation[f"session_{number}"]
            if not turns:
                continue
            if not isinstance(turns, list):
                report.skipped.append(f"{where}: its turns are not a JSON list.")
                continue
            try:
                started_at = parse_locomo_time(conversation[f"session_{number}_date_time"])
            except (KeyError, ValueError, AttributeError) as exc:
                report.skipped.append(f"{where}: no session_{number}_date_time like '1:56 pm on 8 May, 2023' ({exc}).")
                continue
            messages = [
                message
                for position, turn in enumerate(turns, start=1)
                if (
                    message := _message(
                        turn, speaker_a=speaker_a, at=started_at, where=f"{where}, turn {position}", report=report
                    )
                )
            ]
            if messages:
                yield LocomoSession(
                    user_id=user_id, session_id=f"session_{number}", started_at=started_at, messages=messages
                )


def _message(turn: object, *, speaker_a: str, at: datetime, where: str, report: LocomoReport) -> MessageIn | None:
    """The turn as a message, repaired where it cannot be stored as sent (noted in ``report``).

    A photo shared without words is ``"(shared a photo)"`` (its caption is in metadata);
    ``None`` for a turn with neither, or one without a speaker or ``dia_id`` (noted).
    """
    if not isinstance(turn, dict) or not isinstance(turn.get("speaker"), str) or not turn.get("dia_id"):
        report.warnings.append(f"{where}: dropped: a turn needs a speaker and a dia_id.")
        return None
    dia_id = str(turn["dia_id"])
    metadata: dict[str, object] = {"speaker": turn["speaker"], "dia_id": dia_id}
    if turn.get("blip_caption"):
        metadata["image_caption"] = _storable(
            str(turn["blip_caption"]), what="blip_caption", where=where, report=report
        )
    if urls := _image_urls(turn.get("img_url"), where=where, report=report):
        metadata["image_urls"] = urls
    text = _storable(str(turn.get("text") or ""), what="text", where=where, report=report)
    if len(text) > settings.MAX_MESSAGE_CHARS:
        report.warnings.append(f"{where}: text cut to {settings.MAX_MESSAGE_CHARS} characters (MAX_MESSAGE_CHARS).")
        text = text[: settings.MAX_MESSAGE_CHARS]
    if not text.strip():
        if "image_caption" not in metadata:
            return None
        text = "(shared a photo)"
    return MessageIn(
        role="user" if turn["speaker"] == speaker_a else "assistant",
        content=text,
        created_at=at,
        metadata=_fitting(metadata, where=where, report=report),
        external_id=dia_id,
    )


def _image_urls(value: object, *, where: str, report: LocomoReport) -> list[str]:
    """The photo's web URLs; an inline ``data:`` URL (the photo itself, often 16 KB) is left out."""
    urls = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    kept = [url for url in urls if isinstance(url, str) and url and not url.lower().startswith("data:")]
    if len(kept) < len([url for url in urls if url]):
        report.warnings.append(f"{where}: img_url: an inline data: URL (the photo itself) is not stored.")
    return kept


def _storable(text: str, *, what: str, where: str, report: LocomoReport) -> str:
    """``text`` without the characters PostgreSQL cannot store (NUL, lone surrogates)."""
    if _UNSTORABLE.search(text) is None:
        return text
    report.warnings.append(f"{where}: {what}: characters PostgreSQL cannot store (NUL, lone surrogates) removed.")
    return _UNSTORABLE.sub("", text)


def _fitting(metadata: dict[str, object], *, where: str, report: LocomoReport) -> dict[str, object]:
    """``metadata`` within ``MAX_METADATA_BYTES``: photo URLs dropped first, then the caption cut."""
    limit = settings.MAX_METADATA_BYTES
    if len(json.dumps(metadata)) <= limit:
        return metadata
    if "image_urls" in metadata:
        metadata = {k: v for k, v in metadata.items() if k != "image_urls"}
        report.warnings.append(f"{where}: img_url dropped: metadata over {limit} bytes (MAX_METADATA_BYTES).")
    caption = metadata.get("image_caption")
    if isinstance(caption, str) and len(json.dumps(metadata)) > limit:
        report.warnings.append(f"{where}: blip_caption cut: metadata over {limit} bytes (MAX_METADATA_BYTES).")
        # Each character takes at least one byte of JSON: cutting the excess converges in a few rounds.
        while caption and (excess := len(json.dumps(metadata)) - limit) > 0:
            caption = caption[: max(0, len(caption) - excess)]
            metadata = {**metadata, "image_caption": caption}
    return metadata
