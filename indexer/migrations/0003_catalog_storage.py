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

FORWARD = """
CREATE FUNCTION catalog_message_id_hashes(ids text[]) RETURNS int[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT array_agg(hashtext(m)) FROM unnest(ids) AS m $$;

CREATE INDEX catalog_file_message_ids_idx ON catalog_file
    USING gin (catalog_message_id_hashes(message_ids))
    WITH (fastupdate = on, gin_pending_list_limit = 65536);

ALTER TABLE catalog_file SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);
"""
BACKWARD = """
DROP INDEX IF EXISTS catalog_file_message_ids_idx;
DROP FUNCTION IF EXISTS catalog_message_id_hashes(text[]);
ALTER TABLE catalog_file RESET (autovacuum_vacuum_scale_factor,
    autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor,
    autovacuum_vacuum_cost_delay);
"""


def create_trigram_index(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
        if cursor.fetchone() is None:
            return  # no contrib on this server: search scans (docs/catalog.md)
        try:
            with transaction.atomic(using=schema_editor.connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                cursor.execute(
                    "CREATE INDEX catalog_file_name_trgm_idx ON catalog_file"
                    " USING gin (upper(name) gin_trgm_ops)"
                )
        except Exception:  # noqa: BLE001  (no privilege to create it: search still works)
            return


def compress_with_lz4(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'"
            " AND 'lz4' = ANY(enumvals)"
        )
        if cursor.fetchone() is not None:
            cursor.execute(
                "ALTER TABLE catalog_file ALTER parts SET COMPRESSION lz4,"
                " ALTER articles SET COMPRESSION lz4, ALTER sizes SET COMPRESSION lz4,"
                " ALTER message_ids SET COMPRESSION lz4"
            )


def drop_trigram_index(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS catalog_file_name_trgm_idx")


class Migration(migrations.Migration):
    dependencies = [("indexer", "0002_catalog")]
    operations = [
        migrations.RunSQL(FORWARD, BACKWARD),
        migrations.RunPython(create_trigram_index, drop_trigram_index),
        migrations.RunPython(compress_with_lz4, migrations.RunPython.noop),
    ]
