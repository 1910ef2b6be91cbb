"""The worker's part, run in the test's own transaction: what a test needs after storing turns with a service."""

from __future__ import annotations

from memories import tasks
from memories.models import Knowledge, Message, Session

__all__ = ["raise_facts"]


def raise_facts(*, user: str, session: str) -> list[Knowledge]:
    """Embed (and so read) the session's turns and extract its facts, as the worker does; returns the facts
    the session raised this way, in the order stored."""
    row = Session.objects.get(user__external_id=user, external_id=session)
    before = set(Knowledge.objects.filter(source_session=row).values_list("pk", flat=True))
    tasks.embed_rows("message", list(Message.objects.filter(session=row).values_list("pk", flat=True)))
    tasks.extract_knowledge(row.pk)
    return list(Knowledge.objects.filter(source_session=row).exclude(pk__in=before).order_by("pk"))
