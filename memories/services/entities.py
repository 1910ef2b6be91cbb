"""Entity memory: the people, pets, places and organisations an end user talks about.

Entities are raised with the facts (``knowledge_extract`` calls ``entities_record``), merged by
staff in the admin (``entities_merge``), and found in a query (``entities_named_in``) so search
can prefer what is known of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import BooleanField, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower

from memories.llm.base import EntityMention, Fact
from memories.llm.entities import find_entities
from memories.models import EndUser, Entity, EntityKind, Knowledge, Message
from memories.services.user_locks import users_facts_lock

__all__ = ["entities_list", "entities_merge", "entities_named_in", "entities_record"]


def _names(entity: Entity) -> list[str]:
    aliases = entity.aliases if isinstance(entity.aliases, list) else []
    return [entity.name, *(a for a in aliases if isinstance(a, str) and a.strip())]


def _pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """Any of ``names`` as a whole word or words, case aside."""
    names = [n.strip() for n in names if n.strip()]
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.I)


@transaction.atomic
def entities_record(
    *, user: EndUser, messages: Sequence[Message], knowledge: Sequence[Knowledge], facts: Sequence[Fact] = ()
) -> list[Entity]:
    """Record the entities ``messages`` (the user's turns) and ``knowledge`` (facts raised from them) name.

    An entity is found by the offline rules (``memories.llm.entities``) in a turn or a fact, or is
    one the extractor listed for a fact (``Fact.entities``, matched to a row by its text); an entity
    the user already has (by name or alias, case aside) is reused, and any turn or fact naming a
    known entity is linked to it too. A fact's entities are also linked to its source turns.
    ``first_mentioned_at``/``last_mentioned_at`` follow the conversation time of the linked turns
    (a fact's ``said_at`` when it has no turn here). Safe to run again on the same turns.

    Returns:
        The user's entities linked to anything here.
    """
    listed = {f.text: f.entities for f in facts if f.entities is not None}
    mentions: dict[str, tuple[EntityMention, set[int], set[int]]] = {}  # lower name -> (mention, messages, facts)

    def note(mention: EntityMention, *, message_ids: Sequence[int] = (), knowledge_ids: Sequence[int] = ()) -> None:
        if len(mention.name) > Entity._meta.get_field("name").max_length or "\x00" in mention.name:
            return  # not a name a model would list honestly, nor one the column takes
        entry = mentions.setdefault(mention.name.lower(), (mention, set(), set()))
        entry[1].update(message_ids)
        entry[2].update(knowledge_ids)

    for message in messages:
        for mention in find_entities(message.content):
            note(mention, message_ids=[message.pk])
    for row in knowledge:
        source_ids = list(row.source_messages.values_list("pk", flat=True))
        for mention in listed[row.content] if row.content in listed else find_entities(row.content):
            note(mention, message_ids=source_ids, knowledge_ids=[row.pk])
    existing = list(Entity.objects.filter(user=user))
    by_name = {n.lower(): e for e in existing for n in _names(e)}
    said = {m.pk: m.created_at for m in messages}
    touched: dict[int, Entity] = {}
    for key, (mention, message_ids, knowledge_ids) in mentions.items():
        times = [said[i] for i in message_ids if i in said] or [
            k.said_at or k.created_at for k in knowledge if k.pk in knowledge_ids
        ]
        entity = by_name.get(key)
        if entity is None:
            kind = mention.kind if mention.kind in EntityKind.values else EntityKind.OTHER
            entity = _entity_get_or_create(user=user, name=mention.name, kind=kind, times=times)
            by_name[key] = entity
            existing.append(entity)
        entity.messages.add(*message_ids)
        entity.knowledge.add(*knowledge_ids)
        touched[entity.pk] = entity
    # Turns and facts that name a known entity without a rule matching ("Sarah and I went hiking").
    for entity in existing:
        if (pattern := _pattern(_names(entity))) is None:
            continue
        named_messages = [m for m in messages if pattern.search(m.content)]
        named_facts = [k for k in knowledge if pattern.search(k.content)]
        if named_messages or named_facts:
            entity.messages.add(*named_messages)
            entity.knowledge.add(*named_facts)
            touched[entity.pk] = entity
    for entity in touched.values():
        times = list(entity.messages.values_list("created_at", flat=True)) or [
            k.said_at or k.created_at for k in entity.knowledge.all()
        ]
        if times:
            entity.first_mentioned_at = min([entity.first_mentioned_at, *times])
            entity.last_mentioned_at = max([entity.last_mentioned_at, *times])
            entity.save(update_fields=["first_mentioned_at", "last_mentioned_at", "updated_at"])
    return list(touched.values())


def _entity_get_or_create(*, user: EndUser, name: str, kind: str, times: Sequence[datetime]) -> Entity:
    """The user's entity ``name`` (case aside), created unless another transaction has just created it.

    Two extractions of one user naming the same new person run side by side: the insert skips a row
    that ``entity_unique_name_per_user`` already holds (ON CONFLICT DO NOTHING, which waits for the
    other transaction to commit), and the select then finds that row.
    """
    row = Entity(user=user, name=name, kind=kind, first_mentioned_at=min(times), last_mentioned_at=max(times))
    Entity.objects.bulk_create([row], ignore_conflicts=True)
    return Entity.objects.alias(lowered=Lower("name")).get(user=user, lowered=Lower(Value(name)))


@transaction.atomic
def entities_merge(*, entity_ids: Sequence[int]) -> Entity:
    """Merge entities into the first of ``entity_ids``: the others' names become its aliases, their
    facts and turns become its, their mention times widen its own, and they are deleted.

    Raises:
        ValueError: fewer than two entities, or entities of different end users.
        Entity.DoesNotExist: the first id names no entity.
    """
    users_facts_lock(user_pks=Entity.objects.filter(pk__in=entity_ids).values_list("user_id", flat=True))
    rows = {e.pk: e for e in Entity.objects.select_for_update().filter(pk__in=entity_ids).order_by("id")}
    target = rows.get(entity_ids[0]) if entity_ids else None
    if target is None:
        raise Entity.DoesNotExist(f"No entity with id {entity_ids[0] if entity_ids else None}.")
    others = [rows[i] for i in entity_ids[1:] if i in rows and i != target.pk]
    if not others:
        raise ValueError("Select at least two entities to merge.")
    if any(o.user_id != target.user_id for o in others):
        raise ValueError("Only entities of the same end user can be merged.")
    aliases = list(target.aliases)
    for other in others:
        for name in _names(other):
            if name.lower() != target.name.lower() and name.lower() not in {a.lower() for a in aliases}:
                aliases.append(name)
        target.knowledge.add(*other.knowledge.all())
        target.messages.add(*other.messages.all())
        target.first_mentioned_at = min(target.first_mentioned_at, other.first_mentioned_at)
        target.last_mentioned_at = max(target.last_mentioned_at, other.last_mentioned_at)
        other.delete()
    target.aliases = aliases
    target.save()
    return target


def entities_list(*, user_external_id: str, kind: str | None = None) -> QuerySet[Entity]:
    """A user's entities (only ``kind``, one of ``EntityKind``, when given), most recently mentioned first."""
    queryset = Entity.objects.filter(user__external_id=user_external_id)
    if kind:
        queryset = queryset.filter(kind=kind)
    return queryset.order_by("-last_mentioned_at", "-id")


# An entity whose name or an alias occurs in the text (as a substring, case aside): found by PostgreSQL,
# so a search reads only the few the query may name, not all of a user's entities.
_OCCURS_IN_TEXT = (
    "strpos(lower(%s), lower(btrim(memories_entity.name))) > 0 OR EXISTS (SELECT 1 FROM "
    "jsonb_array_elements_text(CASE jsonb_typeof(memories_entity.aliases) WHEN 'array' "
    "THEN memories_entity.aliases ELSE '[]' END) AS alias "
    "WHERE btrim(alias) <> '' AND strpos(lower(%s), lower(btrim(alias))) > 0)"
)


def entities_named_in(*, user_pks: Sequence[int], text: str) -> list[Entity]:
    """The entities of these end users that ``text`` names by name or alias (whole words, case aside), in
    one statement."""
    occurs = RawSQL(_OCCURS_IN_TEXT, [text, text], output_field=BooleanField())
    occurring = Entity.objects.filter(user_id__in=user_pks).alias(occurs=occurs).filter(occurs=True)
    return [entity for entity in occurring if _named(entity, text)]


def _named(entity: Entity, text: str) -> bool:
    pattern = _pattern(_names(entity))
    return pattern is not None and pattern.search(text) is not None
