"""The order in which writers lock an end user's rows, one for every writer, so that a delete never
deadlocks with the worker or with ``addMessages``.

Every transaction that writes rows of an end user takes that user's row lock first, before any
other row of theirs:

1. **The end user's row** (``user_lock``): ``FOR UPDATE`` (``exclusive``) by what deletes a user's
   rows (``forgetUser``, ``deleteHistory``, ``deleteKnowledge``, ``deleteAllKnowledge``, and the
   admin's deletes, which call the same services); ``FOR KEY SHARE`` by what adds rows derived from
   their conversations (``addMessages``, the worker's summaries, facts and entities). Those share
   it, so they never wait for each other here; a delete waits for them to commit, and they for it.
2. Then, as each needs them: the user's sessions (``FOR UPDATE``), their messages, and the rows
   derived from them (summaries, knowledge, entities).

No other statement locks the user's row: a ``select_for_update`` that joins it (a session's default
ordering, a filter on ``user__external_id``) names its own table (``of=("self",)``), or two
writers sharing the user's lock would each wait for the other's ``FOR UPDATE`` of it.

A writer that finds the user gone once it holds the lock (forgotten meanwhile) writes nothing: a
task ends quietly, ``addMessages`` creates the user anew. Writers of a user's facts (two workers may read
turns of one user at once) also take ``user_facts_lock`` after the user's row, so they write facts,
entities and supersessions one after the other; curation (approving, rejecting, reviving or deleting
facts, merging entities) takes both for each user it touches, in the order of their ids
(``users_facts_lock``), before it locks a fact. The worker's embedding, which reads the
turns for facts in the same transaction, locks the users of the messages it is about to claim
before it claims them (``FOR NO KEY UPDATE SKIP LOCKED``). What is left is retried
(``memories.database.retry_transient``).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.db.transaction import TransactionManagementError

__all__ = ["user_facts_lock", "user_lock", "users_facts_lock"]

# The first key of the advisory lock ``user_facts_lock`` takes (its second is the user's primary key).
_FACTS_LOCK_NAMESPACE = 1835363696

_BY_PK = "SELECT id FROM memories_enduser WHERE id = %s FOR {mode}"
_BY_EXTERNAL_ID = "SELECT id FROM memories_enduser WHERE external_id = %s FOR {mode}"


def user_lock(
    *, user_pk: int | None = None, user_external_id: str | None = None, exclusive: bool = False
) -> int | None:
    """Lock an end user's row (by primary key or external id) until the current transaction ends
    (see the module's docstring).

    Args:
        user_pk: the ``EndUser``'s primary key, or
        user_external_id: its external id.
        exclusive: ``FOR UPDATE`` (a delete), else ``FOR KEY SHARE`` (a writer that adds rows).

    Returns:
        The user's primary key, or ``None`` when there is no such user (deleted before the lock was granted).

    Raises:
        TransactionManagementError: called outside a transaction (the lock would end at once).
    """
    if not connection.in_atomic_block:
        raise TransactionManagementError("user_lock needs a transaction: the lock lasts until it ends.")
    statement, key = (_BY_PK, user_pk) if user_pk is not None else (_BY_EXTERNAL_ID, user_external_id)
    with connection.cursor() as cursor:
        cursor.execute(statement.format(mode="UPDATE" if exclusive else "KEY SHARE"), [key])
        row = cursor.fetchone()
    return row[0] if row else None


def user_facts_lock(*, user_pk: int) -> None:
    """Wait for, then hold until the current transaction ends, the right to write an end user's facts and
    entities (a PostgreSQL transaction-level advisory lock on the user's primary key): two transactions
    settling the same slot or naming the same entity would otherwise lock each other's rows in turn.

    Raises:
        TransactionManagementError: called outside a transaction (the lock would end at once).
    """
    if not connection.in_atomic_block:
        raise TransactionManagementError("user_facts_lock needs a transaction: the lock lasts until it ends.")
    with connection.cursor() as cursor:
        # The two-key form takes 32-bit keys; users whose ids share a key only write facts one after the other.
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_FACTS_LOCK_NAMESPACE, user_pk % 2**31])


def users_facts_lock(*, user_pks: Iterable[int | None]) -> None:
    """Lock the rows (``FOR KEY SHARE``) and then the facts (``user_facts_lock``) of these end users, in the
    order of their primary keys, as the worker does: what settles facts outside the worker (curation) takes
    this before locking any fact, so the two never hold each other's rows in turn. A user already gone, or
    ``None`` (shared knowledge), is passed over.

    Raises:
        TransactionManagementError: called outside a transaction (the locks would end at once).
    """
    # Shared knowledge has no owner (None) and nothing of a user to lock.
    held = [pk for pk in sorted(set(user_pks) - {None}) if user_lock(user_pk=pk) is not None]
    for pk in held:
        user_facts_lock(user_pk=pk)
