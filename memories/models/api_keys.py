"""Keys of the GraphQL API and the end users each may act on."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

__all__ = ["ApiKey"]


class ApiKey(models.Model):
    """A key for the GraphQL API, scoped to some end users or, for a trusted backend, to all.

    Only a SHA-256 hash of the key is stored (the key is 256 random bits, so a fast hash is
    enough; the same choice as GitHub's tokens); ``prefix`` identifies it in lists and logs.
    """

    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    all_users = models.BooleanField(default=False, help_text="Trusted backend: may act on every end user.")
    may_curate = models.BooleanField(
        default=False, help_text="May approve, reject and edit fact candidates through the API."
    )
    # External ids, not foreign keys: a key keeps its scope when a user is forgotten and comes back.
    user_external_ids = ArrayField(
        models.CharField(max_length=255), default=list, blank=True, help_text="End user ids, comma-separated."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        """False once revoked."""
        return self.revoked_at is None
