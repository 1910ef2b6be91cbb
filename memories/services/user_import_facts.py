"""The knowledge and entities lists of an import: facts with their audit history and their
references to each other, and the entities with the facts and turns that mention them."""

from __future__ import annotations

from array import array
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection, models

from memories.kinds import MemoryKind
from memories.models import EndUser, Entity, EntityKind, Knowledge, KnowledgeStatus
from memories.services.jobs import embedding_enqueue
from memories.services.user_import_items import ImportItem
from memories.services.user_import_statements import LINK_FACTS, ROWS_PER_INSERT, restamp

__all__ = ["FactSections"]

# The choices, once (Django's ``Choices.values`` builds its list on every call).
_STATUSES, _ENTITY_KINDS, _CHANGE_TYPES = tuple(KnowledgeStatus.values), tuple(EntityKind.values), ("+", "~", "-")


class FactSections:
    """The knowledge and entities sections of ``memories.services.user_import``'s import state, which
    holds the attributes declared here and provides ``_session_pk`` and ``_count``."""

    merge: bool
    user: EndUser | None
    messages: array  # pk by position
    knowledge: array  # pk by position
    fact_links: list[tuple[bool, int, str, int, str]]

    def _fact_positions(self, item: ImportItem) -> list[tuple[str, int, str]]:
        """The facts ``item`` refers to: ``(column, position, where)`` each, resolved by ``_link_facts``."""
        links = []
        for key in ("replaces", "superseded_by"):
            value = item.data.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise item.fail(key, f"must be the position of a fact in the knowledge list, not {value!r}.")
            links.append((f"{key}_id", value, f"{item.path}.{key}"))
        return links

    def _link_facts(self) -> None:
        """Fill the facts' (and their history's) references to facts, now that every fact has its id."""
        links: dict[tuple[bool, str], tuple[list[int], list[int]]] = {}
        for history, pk, column, position, path in self.fact_links:
            if position >= len(self.knowledge):
                raise ValidationError({path: [f"{path}: refers to fact {position}, which is not in the list."]})
            ids, targets = links.setdefault((history, column), ([], []))
            ids.append(pk)
            targets.append(self.knowledge[position])
        for (history, column), (ids, targets) in links.items():
            model = Knowledge.history.model if history else Knowledge
            statement = LINK_FACTS.format(
                table=connection.ops.quote_name(model._meta.db_table),
                column=column,
                key="history_id" if history else "id",
            )
            with connection.cursor() as cursor:
                cursor.execute(statement, [ids, targets])

    def _fact(self, item: ImportItem, model: type[models.Model], **fields: Any) -> models.Model:
        return model(
            user=self.user,
            content=item.text("content", field=(Knowledge, "content")),
            status=item.choice("status", _STATUSES),
            slot=item.text("slot", max_length=Knowledge._meta.get_field("slot").max_length),
            confidence=item.number("confidence", (int, float), null=True),
            said_at=item.time("said_at", null=True),
            needs_review=item.number("needs_review", bool),
            reviewed=item.number("reviewed", bool),
            # Documents exported before these existed do not have them.
            ends=item.number("ends", bool, null=True) or False,
            corrected=item.number("corrected", bool, null=True) or False,
            source_session_id=self._session_pk(item, "source_session", null=True),
            **fields,
        )

    def _knowledge(self, items: list[ImportItem]) -> None:
        names = {c.get("by") for i in items for c in i.json("history", list) if isinstance(c, dict)}
        staff = dict(
            get_user_model()
            .objects.filter(username__in=[n for n in names if isinstance(n, str)])
            .values_list("username", "pk")
        )
        facts = [(self._fact(item, Knowledge), item) for item in items]
        # bulk_create sends no post_save: django-simple-history records nothing of its own here.
        Knowledge.objects.bulk_create([fact for fact, _ in facts], batch_size=ROWS_PER_INSERT)
        self.knowledge.extend(fact.pk for fact, _ in facts)
        restamp(Knowledge, [(fact.pk, item.time("created_at"), item.time("updated_at")) for fact, item in facts])
        through = Knowledge.source_messages.through
        through.objects.bulk_create(
            [
                through(knowledge_id=fact.pk, message_id=pk)
                for fact, item in facts
                for pk in item.positions("source_messages", self.messages)
            ],
            batch_size=ROWS_PER_INSERT,
        )
        changes = []
        for fact, item in facts:
            for n, data in enumerate(item.json("history", list)):
                change = ImportItem(f"{item.path}.history.{n}", data)
                by = change.data.get("by")
                record = self._fact(
                    change,
                    Knowledge.history.model,
                    id=fact.pk,
                    history_date=change.time("at"),
                    history_type=change.choice("type", _CHANGE_TYPES),
                    history_change_reason=change.text("reason", max_length=100, null=True),
                    history_user_id=staff.get(by) if isinstance(by, str) else None,
                    created_at=change.time("created_at"),
                    updated_at=change.time("updated_at"),
                )
                changes.append((record, change))
        Knowledge.history.model.objects.bulk_create([record for record, _ in changes], batch_size=ROWS_PER_INSERT)
        for history, rows in ((False, facts), (True, changes)):
            for row, item in rows:
                pk = row.history_id if history else row.pk
                self.fact_links += [(history, pk, *link) for link in self._fact_positions(item)]
        embedding_enqueue(kind=MemoryKind.KNOWLEDGE, ids=[fact.pk for fact, _ in facts])
        self._count("knowledge", created=len(facts))

    def _entities(self, items: list[ImportItem]) -> None:
        known = {e.name.lower(): e for e in Entity.objects.filter(user=self.user)} if self.merge else {}
        new, stamps, links, kept = [], [], [], 0
        facts = self.knowledge
        for item in items:
            name = item.text("name", max_length=Entity._meta.get_field("name").max_length, blank=False)
            aliases = item.texts("aliases")
            first, last = item.time("first_mentioned_at"), item.time("last_mentioned_at")
            linked = (item.positions("knowledge", facts), item.positions("messages", self.messages))
            entity = known.get(name.lower())
            if entity is None:
                entity = Entity(
                    user=self.user,
                    name=name,
                    kind=item.choice("kind", _ENTITY_KINDS),
                    aliases=aliases,
                    first_mentioned_at=first,
                    last_mentioned_at=last,
                )
                new.append(entity)
                stamps.append((item.time("created_at"), item.time("updated_at")))
            else:
                kept += 1
                entity.aliases += [a for a in aliases if a.lower() not in {n.lower() for n in [name, *entity.aliases]}]
                entity.first_mentioned_at = min(entity.first_mentioned_at, first)
                entity.last_mentioned_at = max(entity.last_mentioned_at, last)
                entity.save(update_fields=["aliases", "first_mentioned_at", "last_mentioned_at", "updated_at"])
            links.append((entity, *linked))
        Entity.objects.bulk_create(new, batch_size=ROWS_PER_INSERT)
        restamp(Entity, [(entity.pk, *times) for entity, times in zip(new, stamps, strict=True)])
        Entity.knowledge.through.objects.bulk_create(
            [Entity.knowledge.through(entity_id=e.pk, knowledge_id=k) for e, ks, _ in links for k in ks],
            ignore_conflicts=True,
            batch_size=ROWS_PER_INSERT,
        )
        Entity.messages.through.objects.bulk_create(
            [Entity.messages.through(entity_id=e.pk, message_id=m) for e, _, ms in links for m in ms],
            ignore_conflicts=True,
            batch_size=ROWS_PER_INSERT,
        )
        self._count("entities", created=len(new), kept=kept)
