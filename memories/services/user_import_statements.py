"""The SQL an import runs where Django's ORM would not keep the document's order or times."""

from __future__ import annotations

from datetime import datetime

from django.db import connection, models

__all__ = ["INSERT_MESSAGES", "LINK_FACTS", "ROWS_PER_INSERT", "restamp"]

# Rows per INSERT of the other lists: Django builds each statement whole, a few KiB of Python objects
# per row, and the process keeps the memory of its largest statement.
ROWS_PER_INSERT = 250

# Every column of a message, one array each (``UNNEST``), inserted in document order so ids keep it; read
# already (the document carries its facts and entities).
INSERT_MESSAGES = """
INSERT INTO memories_message
    (user_id, session_id, external_id, role, content, channel, metadata, created_at, received_at,
     dialogue_act, embedding_model, read)
SELECT %s, m.session_id, m.external_id, m.role, m.content, m.channel, m.metadata::jsonb, m.created_at,
    m.received_at, m.dialogue_act, '', TRUE
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[],
    %s::timestamptz[], %s::text[]) WITH ORDINALITY
    AS m(session_id, external_id, role, content, channel, metadata, created_at, received_at, dialogue_act, position)
ORDER BY m.position
RETURNING id
"""

# ``bulk_create`` stamps ``auto_now`` columns with the present: the document's times are set after.
_RESTAMP = """
UPDATE {table} AS t SET created_at = v.created_at, updated_at = v.updated_at
FROM unnest(%s::bigint[], %s::timestamptz[], %s::timestamptz[]) AS v(id, created_at, updated_at)
WHERE t.id = v.id
"""

# Facts refer to facts later in the list too: those columns are filled once every fact is stored.
LINK_FACTS = """
UPDATE {table} AS t SET {column} = v.target
FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, target)
WHERE t.{key} = v.id
"""


def restamp(model: type[models.Model], stamps: list[tuple[int, datetime, datetime]]) -> None:
    """Set these rows' ``created_at`` and ``updated_at`` to the document's."""
    if not stamps:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _RESTAMP.format(table=connection.ops.quote_name(model._meta.db_table)),
            [[pk for pk, *_ in stamps], [c for _, c, _ in stamps], [u for *_, u in stamps]],
        )
