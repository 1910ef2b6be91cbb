"""The conversations ``bench.retrieval`` reads and imports through the service's own write path, and each end
user as the systems see them (their turns' LoCoMo ids, BM25 and dense rankers over them)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from bench.baselines import BM25Ranker, DenseRanker

if TYPE_CHECKING:
    from memories.importers import LocomoSession

__all__ = [
    "ImportStats",
    "UserIndex",
    "check_import",
    "import_sessions",
    "index_user",
    "read_samples",
    "sessions_to_import",
    "turn_ids_in_file",
]

CHANNEL = "locomo"  # the channel the imported sessions are stored on


def read_samples(path: Path, samples: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    """The file's samples by ``sample_id``, in file order, only ``samples`` when given.

    Raises:
        ValueError: a file that is not a JSON list, or unknown sample ids.
    """
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError("A LoCoMo file is a JSON list of samples.")
    by_id = {str(sample["sample_id"]): sample for sample in data}
    if samples:
        unknown = sorted(set(samples) - by_id.keys())
        if unknown:
            raise ValueError(f"No such samples in {path}: {', '.join(unknown)}.")
        by_id = {sample_id: sample for sample_id, sample in by_id.items() if sample_id in samples}
    return by_id


def turn_ids_in_file(sample: dict[str, Any]) -> set[str]:
    """Every turn id (``dia_id``) of the sample's conversation."""
    conversation = sample["conversation"]
    return {
        str(turn["dia_id"])
        for key, turns in conversation.items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    }


def sessions_to_import(path: Path, samples: dict[str, Any], max_sessions: int | None) -> list[LocomoSession]:
    """The file's sessions of ``samples``, only sessions 1..``max_sessions`` of each when given."""
    from memories.importers import locomo_sessions

    return [
        s
        for s in locomo_sessions(path)
        if s.user_id in samples and (max_sessions is None or int(s.session_id.rsplit("_", 1)[1]) <= max_sessions)
    ]


@dataclass(frozen=True)
class ImportStats:
    """What ``import_sessions`` stored, and how long it took."""

    users: int
    sessions: int
    messages_stored: int
    messages_already_there: int
    last_sessions_summarised: int
    seconds: float


def import_sessions(sessions: list[LocomoSession], *, progress: bool = True) -> ImportStats:
    """Import through ``messages_add`` (tasks run on commit), then summarise each user's last session."""
    from memories.models import Session
    from memories.services.messages import messages_add
    from memories.services.summaries import summary_create

    started = time.perf_counter()
    stored = already = summarised = users = 0
    with tqdm(total=len(sessions), desc="import", unit="session", disable=not progress) as bar:
        for user_id, user_sessions in groupby(sessions, key=lambda s: s.user_id):
            users += 1
            bar.set_postfix_str(user_id)
            for session in user_sessions:
                added = messages_add(
                    user_external_id=session.user_id,
                    session_external_id=session.session_id,
                    channel=CHANNEL,
                    messages=session.messages,
                )
                stored += len(added.messages)
                already += added.skipped
                bar.update()
            # Production summarises the last session once it is idle (the sweep); do it now.
            for session_pk in Session.objects.filter(user__external_id=user_id, summary__isnull=True).values_list(
                "pk", flat=True
            ):
                summarised += summary_create(session_id=session_pk) is not None
    return ImportStats(
        users=users,
        sessions=len(sessions),
        messages_stored=stored,
        messages_already_there=already,
        last_sessions_summarised=summarised,
        seconds=time.perf_counter() - started,
    )


def check_import(user_ids: Sequence[str]) -> None:
    """Fail when a task left a message without a vector or a session without a summary."""
    from django.conf import settings
    from django.db.models import Q

    from memories.models import Message, Session

    unembedded = (
        Message.objects.filter(user__external_id__in=user_ids)
        .filter(Q(embedding__isnull=True) | ~Q(embedding_model=settings.EMBEDDING_MODEL))
        .count()
    )
    unsummarised = Session.objects.filter(user__external_id__in=user_ids, summary__isnull=True).count()
    if unembedded or unsummarised:
        raise RuntimeError(
            f"Import incomplete: {unembedded} messages without a current vector, {unsummarised} sessions "
            "without a summary (a background task failed; see the log above)."
        )


@dataclass(frozen=True)
class UserIndex:
    """One end user (LoCoMo sample) as the systems see it."""

    external_id: str
    turn_id_by_message: dict[int, str]
    bm25: BM25Ranker
    dense: DenseRanker


def index_user(external_id: str) -> UserIndex:
    """The user's turns (LoCoMo ids from ``metadata["dia_id"]``), and baselines over them."""
    from memories.models import EndUser, Message

    user = EndUser.objects.get(external_id=external_id)
    messages = list(Message.objects.filter(user=user).order_by("created_at", "id"))
    turn_ids = [str(m.metadata.get("dia_id") or m.external_id) for m in messages]
    return UserIndex(
        external_id=user.external_id,
        turn_id_by_message={m.pk: turn_id for m, turn_id in zip(messages, turn_ids, strict=True)},
        bm25=BM25Ranker(turn_ids, [m.embedding_text for m in messages]),
        dense=DenseRanker(turn_ids, [m.embedding for m in messages]),
    )
