-- The embedded PostgreSQL's own upkeep (core/embedded_postgres/server.py),
-- run on a plain psycopg connection to the `postgres` database. The
-- `{name}` and `{value}` slots are filled with psycopg.sql.Identifier and
-- psycopg.sql.Literal, never with string formatting.

-- name: server_setting
SELECT setting FROM pg_settings WHERE name = %(name)s;

-- name: set_server_setting
ALTER SYSTEM SET {name} = {value};

-- name: reload_server_settings
SELECT pg_reload_conf();

-- name: database_exists
SELECT true AS found FROM pg_database WHERE datname = %(name)s;

-- name: create_database
CREATE DATABASE {name};
