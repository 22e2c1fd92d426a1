"""Catalog storage: the message-id lookup index, vacuum settings, name search.

- Message-id lookup: a GIN index over the 32-bit hashes of a file's
  message-ids (4-byte keys instead of the ids' 30-80 bytes of text). A lookup
  asks the index for the hash and re-checks the text (docs/catalog.md). New
  entries gather in a 64 MB pending list that (auto)vacuum merges into the
  index off the batch path; a batch only merges it when it is full.
- TOAST: lz4 for the segment arrays where the server has it (much cheaper
  to compress than the default pglz).
- Vacuum: a merge rewrites the row, so dead tuples accumulate as fast as
  batches merge; vacuum early (which also flushes the GIN pending list).
- Name search: a trigram index over upper(name) (what Django's icontains
  and the API's `q` compare) when the server has pg_trgm; without it the
  same ILIKE-style search runs as a scan.
"""

from __future__ import annotations

from django.db import migrations, transaction

from indexer.sql import queries

# The statements are in sql/migrations/catalog_storage.sql; a block run here is never edited.
FORWARD = "\n".join([queries["create_message_id_index"], queries["tune_catalog_vacuum"]])
BACKWARD = queries["drop_catalog_storage"]


def create_trigram_index(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(queries["pg_trgm_available"])
        if cursor.fetchone() is None:
            return  # no contrib on this server: search scans (docs/catalog.md)
        try:
            with transaction.atomic(using=schema_editor.connection.alias):
                cursor.execute(queries["create_trigram_extension"])
                cursor.execute(queries["create_name_trigram_index"])
        except Exception:  # noqa: BLE001  (no privilege to create it: search still works)
            return


def compress_with_lz4(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(queries["lz4_available"])
        if cursor.fetchone() is not None:
            cursor.execute(queries["compress_segments_with_lz4"])


def drop_trigram_index(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(queries["drop_name_trigram_index"])


class Migration(migrations.Migration):
    dependencies = [("indexer", "0002_catalog")]
    operations = [
        migrations.RunSQL(FORWARD, BACKWARD),
        migrations.RunPython(create_trigram_index, drop_trigram_index),
        migrations.RunPython(compress_with_lz4, migrations.RunPython.noop),
    ]
