-- Catalog storage: the message-id lookup index, vacuum settings, name
-- search, TOAST compression (docs/catalog.md). Run by the indexer's
-- migration 0003.
-- A block a migration has run is never edited: a change is a new block and
-- a new migration (docs/architecture.md, "SQL").

-- name: create_message_id_index
-- The message-id lookup: a GIN index over the 32-bit hashes of a file's
-- message-ids; new entries gather in a 64 MB pending list (docs/catalog.md).
CREATE FUNCTION catalog_message_id_hashes(ids text[]) RETURNS int[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT array_agg(hashtext(m)) FROM unnest(ids) AS m $$;

CREATE INDEX catalog_file_message_ids_idx ON catalog_file
    USING gin (catalog_message_id_hashes(message_ids))
    WITH (fastupdate = on, gin_pending_list_limit = 65536);

-- name: tune_catalog_vacuum
-- A merge rewrites the row: vacuum early (which also flushes the GIN
-- pending list).
ALTER TABLE catalog_file SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);

-- name: drop_catalog_storage
DROP INDEX IF EXISTS catalog_file_message_ids_idx;
DROP FUNCTION IF EXISTS catalog_message_id_hashes(text[]);
ALTER TABLE catalog_file RESET (autovacuum_vacuum_scale_factor,
    autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor,
    autovacuum_vacuum_cost_delay);

-- name: pg_trgm_available
SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'

-- name: create_trigram_extension
CREATE EXTENSION IF NOT EXISTS pg_trgm

-- name: create_name_trigram_index
-- What Django's icontains and the API's `q` compare: upper(name).
CREATE INDEX catalog_file_name_trgm_idx ON catalog_file USING gin (upper(name) gin_trgm_ops)

-- name: drop_name_trigram_index
DROP INDEX IF EXISTS catalog_file_name_trgm_idx

-- name: lz4_available
SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)

-- name: compress_segments_with_lz4
-- Much cheaper to compress than the default pglz.
ALTER TABLE catalog_file ALTER parts SET COMPRESSION lz4, ALTER articles SET COMPRESSION lz4,
    ALTER sizes SET COMPRESSION lz4, ALTER message_ids SET COMPRESSION lz4
