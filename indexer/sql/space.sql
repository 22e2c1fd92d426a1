-- Sizes behind the space limits (indexer/space.py), measured at most every
-- SPACE_CHECK_CACHE_SECONDS per process.

-- name: database_size
SELECT pg_database_size(current_database()) AS size;

-- name: catalog_size
-- The catalog's tables with their indexes and TOAST.
SELECT pg_total_relation_size('catalog_file'::regclass)
       + pg_total_relation_size('rule_set_version'::regclass) AS size;
