"""Who and what end users talk about, linked to the facts and turns that mention them."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from memories.models.conversations import EndUser, Message
from memories.models.derived import Knowledge

__all__ = ["Entity", "EntityKind"]


class EntityKind(models.TextChoices):
    PERSON = "person"
    PET = "pet"
    PLACE = "place"
    ORGANISATION = "organisation"
    OTHER = "other"


class Entity(models.Model):
    """Someone or something an end user talks about: a person, pet, place or organisation.

    Raised with the facts (``memories.services.entities``); ``knowledge`` and ``messages`` are the
    facts and turns that mention it. ``aliases`` are other names it goes by (a JSON list of strings);
    names are unique per user, case aside.
    """

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=EntityKind.choices, default=EntityKind.OTHER)
    aliases = models.JSONField(default=list, blank=True)
    first_mentioned_at = models.DateTimeField()
    last_mentioned_at = models.DateTimeField()
    knowledge = models.ManyToManyField(Knowledge, blank=True, related_name="entities")
    messages = models.ManyToManyField(Message, blank=True, related_name="entities")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-last_mentioned_at", "id"]
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint("user", models.functions.Lower("name"), name="entity_unique_name_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    def clean(self) -> None:
        """Refuse a name (case aside) another entity of the user has, whatever fields a form edits.

        Raises:
            ValidationError: naming ``name``.
        """
        others = Entity.objects.filter(user_id=self.user_id, name__iexact=self.name).exclude(pk=self.pk)
        if self.user_id is not None and others.exists():
            raise ValidationError({"name": [f"This user already has an entity named {self.name!r}."]})
