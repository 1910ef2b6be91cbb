"""Vectors stay in the row (``STORAGE PLAIN``) instead of being moved to TOAST.

A 384-float vector is 1.5 kB; with a message's text and its full-text column a row passes
PostgreSQL's 2 kB TOAST threshold, and the vector (``EXTERNAL`` by pgvector's default) was
moved out of line, so an exact ranking of a user's rows fetched every vector from the TOAST
table. Rows written before this migration keep their layout until they are rewritten.
"""

from django.conf import settings
from django.db import migrations

TABLES = ("memories_message", "memories_summary", "memories_knowledge", "memories_diary")
# A row must fit in an 8 kB page: longer vectors (> 6 kB) stay EXTERNAL.
PLAIN_MAX_DIMENSIONS = 1536


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_message_unembedded_index")]

    operations = (
        [
            migrations.RunSQL(
                sql=[f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE PLAIN" for table in TABLES],
                reverse_sql=[f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL" for table in TABLES],
            )
        ]
        if settings.EMBEDDING_DIMENSIONS <= PLAIN_MAX_DIMENSIONS
        else []
    )
