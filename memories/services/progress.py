"""How far fact extraction has read each session (``Session.facts_read_through``), for the backlog.

The backlog counts the user turns extraction has not read (``selectors.message_list_awaiting_facts``);
these writes move each session's watermark forward.
"""

from __future__ import annotations

from django.db.models import OuterRef, Subquery
from django.db.models.functions import Coalesce, Greatest

from memories.models import Session, Summary

__all__ = ["session_facts_read_mark", "sessions_facts_read_as_summarised"]


def session_facts_read_mark(*, session_id: int, through_message_id: int) -> None:
    """Record that fact extraction has read the session up to the message ``through_message_id`` (by id).

    The watermark only moves forward: a late, older extraction never marks read turns as unread.
    """
    Session.objects.filter(pk=session_id).update(facts_read_through=Greatest("facts_read_through", through_message_id))


def sessions_facts_read_as_summarised(*, session_ids: list[int]) -> int:
    """Mark these sessions read for facts up to their summary's watermark (an imported summary comes with
    the facts raised from it). Returns the sessions changed."""
    watermark = Summary.objects.filter(session=OuterRef("pk")).values("last_message_id")[:1]
    return Session.objects.filter(pk__in=session_ids).update(
        facts_read_through=Greatest("facts_read_through", Coalesce(Subquery(watermark), 0))
    )
