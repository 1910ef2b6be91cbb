"""User tokens: short-lived, signed credentials for one end user, which a backend holding an API key
mints for a browser (``createUserToken``), so that no API key ever reaches a page.

A token is ``memu_`` and a payload signed with Django's ``Signer`` (HMAC-SHA256 under
``USER_TOKEN_SECRET``, or ``SECRET_KEY`` when that is empty): the key it was minted with (id and
the first characters of its stored hash), the end user and the expiry. Nothing is stored, so a
token is revoked by its expiry, by revoking its API key (or giving the key a new secret), by
taking its user out of the key's scope, or, for every token at once, by changing the secret.

Source: https://docs.djangoproject.com/en/5.2/topics/signing/
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core import signing
from django.core.exceptions import PermissionDenied

from memories.models import ApiKey
from memories.services.validation import raise_if, user_id_errors

__all__ = ["TOKEN_PREFIX", "UserToken", "user_token_authenticate", "user_token_create"]

TOKEN_PREFIX = "memu_"
_SALT = "memories.user-token"
# Characters of the key's SHA-256 hash in a token: enough that a new secret (a new hash) fails it.
_HASH_CHARS = 16


@dataclass(frozen=True)
class UserToken:
    """A minted token: ``token`` (the bearer credential), its ``user_external_id`` and ``expires_at`` (UTC)."""

    token: str
    user_external_id: str
    expires_at: datetime


def _signer() -> signing.Signer:
    if settings.USER_TOKEN_SECRET:
        return signing.Signer(key=settings.USER_TOKEN_SECRET, salt=_SALT)
    return signing.Signer(salt=_SALT)  # SECRET_KEY, and SECRET_KEY_FALLBACKS while rotating it


def user_token_create(*, api_key_id: int | None, user_external_id: str, ttl_seconds: int | None = None) -> UserToken:
    """Mint a token for one end user, valid ``ttl_seconds`` (default ``USER_TOKEN_SECONDS``).

    The caller's scope must cover the user (the GraphQL layer checks it, as for any field naming a
    user); the token's scope is that user alone, and it may not curate nor mint tokens.

    Args:
        api_key_id: the API key minting it (the token lives no longer than the key).
        user_external_id: the end user the token may act on.
        ttl_seconds: seconds until it expires, 1..``USER_TOKEN_MAX_SECONDS``.

    Raises:
        PermissionDenied: no API key (a staff session in GraphiQL): a token must belong to a key.
        ValidationError: an end user id no row could have, or ``ttl_seconds`` out of range.
    """
    if api_key_id is None:
        raise PermissionDenied("createUserToken needs an API key: a token lives no longer than the key it came from.")
    ttl = settings.USER_TOKEN_SECONDS if ttl_seconds is None else ttl_seconds
    raise_if(
        [
            ("user_external_id", user_id_errors(user_external_id)),
            (
                "ttl_seconds",
                []
                if 1 <= ttl <= settings.USER_TOKEN_MAX_SECONDS
                else [f"must be between 1 and {settings.USER_TOKEN_MAX_SECONDS} (USER_TOKEN_MAX_SECONDS)."],
            ),
        ]
    )
    key_hash = ApiKey.objects.values_list("key_hash", flat=True).get(pk=api_key_id)
    expires = int(time.time()) + ttl
    payload = {"k": api_key_id, "h": key_hash[:_HASH_CHARS], "u": user_external_id, "x": expires}
    return UserToken(
        token=TOKEN_PREFIX + _signer().sign_object(payload),
        user_external_id=user_external_id,
        expires_at=datetime.fromtimestamp(expires, tz=UTC),
    )


def user_token_authenticate(*, token: str) -> tuple[ApiKey, str] | None:
    """The API key a valid token was minted with and its end user; ``None`` for a token that is not
    one, is forged or expired, or whose key is revoked, has a new secret or no longer covers the user.
    One query."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    try:
        payload = _signer().unsign_object(token.removeprefix(TOKEN_PREFIX))
        key_id, key_hash, user, expires = payload["k"], payload["h"], payload["u"], payload["x"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None
    if not isinstance(key_id, int) or not isinstance(expires, int) or expires <= time.time():
        return None
    key = ApiKey.objects.filter(pk=key_id, revoked_at__isnull=True).first()
    if key is None or not key.key_hash.startswith(key_hash):
        return None
    if not (key.all_users or user in key.user_external_ids):
        return None
    return key, user
