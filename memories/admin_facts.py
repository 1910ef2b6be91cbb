"""The admin's page of one end user's facts: what is true now, and what was true when.

Within a slot (residence, job, partner...) the fact said last is current and each older one held from
when it was said until its successor was; facts without a slot stand alone. Rejected facts and those
awaiting approval are listed apart, as never used. Registered by ``memories.admin`` on ``EndUser``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse

from memories.models import EndUser, Knowledge, KnowledgeStatus
from memories.selectors import knowledge_timeline

__all__ = ["FactPeriod", "user_facts_view"]


@dataclass(frozen=True)
class FactPeriod:
    """A fact and the time it held: from ``since`` (when said, or added) until ``until`` (``None``: still)."""

    fact: Knowledge
    since: datetime
    until: datetime | None


def _period(fact: Knowledge) -> FactPeriod:
    successor = fact.superseded_by
    until = (successor.said_at or successor.created_at) if successor is not None else None
    return FactPeriod(fact=fact, since=fact.said_at or fact.created_at, until=until)


def user_facts_view(request: HttpRequest, user_id: int, *, admin_site: admin.AdminSite) -> HttpResponse:
    """The user's current (active) facts, their history by slot, and the facts never used."""
    user = get_object_or_404(EndUser, pk=user_id)
    facts = list(knowledge_timeline(user_id=user.pk))
    used = [f for f in facts if f.status in (KnowledgeStatus.ACTIVE, KnowledgeStatus.SUPERSEDED)]
    slots: dict[str, list[FactPeriod]] = {}
    for fact in used:
        if fact.slot:
            slots.setdefault(fact.slot, []).append(_period(fact))
    context = {
        **admin_site.each_context(request),
        "title": f"Facts of {user.external_id}",
        "end_user": user,
        "current": [f for f in used if f.status == KnowledgeStatus.ACTIVE],
        "slots": sorted(slots.items()),
        "unused": [f for f in facts if f not in used],
    }
    return TemplateResponse(request, "admin/memories/enduser/facts.html", context)
