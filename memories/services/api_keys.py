"""API keys: creating, authenticating and revoking them."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memories.models import ApiKey

__all__ = [
    "api_key_assign_secret",
    "api_key_authenticate",
    "api_key_create",
    "api_key_hash",
    "api_key_revoke",
]

_KEY_PREFIX = "mem_"
# last_used_at is written at most this often per key, not on every request.
_TOUCH_EVERY = timedelta(minutes=1)


def api_key_hash(raw_key: str) -> str:
    """SHA-256 hex digest of a key, as stored."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_assign_secret(*, key: ApiKey) -> str:
    """Give an unsaved key a new random secret (256 bits); returns the secret, stored only hashed."""
    raw_key = _KEY_PREFIX + secrets.token_urlsafe(32)
    key.prefix = raw_key[:12]
    key.key_hash = api_key_hash(raw_key)
    return raw_key


@transaction.atomic
def api_key_create(
    *, name: str, user_external_ids: list[str] | None = None, all_users: bool = False, may_curate: bool = False
) -> tuple[ApiKey, str]:
    """Create a key and return it with its secret, which is shown only this once.

    Args:
        name: what the key is for (e.g. ``"slack-bot"``).
        user_external_ids: the end users the key may act on (they need not exist yet).
        all_users: a trusted backend's key, allowed to act on every end user.
        may_curate: may approve, reject and edit fact candidates (of the end users it covers).

    Raises:
        ValidationError: no name, or neither users nor ``all_users``; a name over 200 characters or
            a user id over 255 (no end user could have it).
    """
    user_external_ids = [u for u in (user_external_ids or []) if u.strip()]
    if not name.strip():
        raise ValidationError({"name": ["Give the key a name."]})
    if not user_external_ids and not all_users:
        raise ValidationError({"users": ["Scope the key to at least one end user, or to all users."]})
    key = ApiKey(
        name=name, all_users=all_users, user_external_ids=sorted(set(user_external_ids)), may_curate=may_curate
    )
    raw_key = api_key_assign_secret(key=key)
    key.full_clean()
    key.save()
    return key, raw_key


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key with this secret, or ``None``; one query. Records when it was last used."""
    if not raw_key.startswith(_KEY_PREFIX):
        return None
    key = ApiKey.objects.filter(key_hash=api_key_hash(raw_key), revoked_at__isnull=True).first()
    if key is not None:
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at > _TOUCH_EVERY:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def api_key_revoke(*, key_id: int) -> ApiKey:
    """Revoke a key: from now on it authenticates nothing.

    Raises:
        ApiKey.DoesNotExist: no such key.
    """
    key = ApiKey.objects.get(pk=key_id)
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key
