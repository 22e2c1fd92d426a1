-- Storage settings that keep the range claim fast in a steady state; the
-- figures behind them are in docs/performance.md. Installed by seeding's
-- migrations 0002 and 0005.
-- A block a migration has run is never edited: a change is a new block and
-- a new migration (docs/architecture.md, "SQL").

-- name: tune_range_storage
-- fillfactor leaves room on each page so heartbeat and batch updates (no
-- indexed column) stay HOT; vacuum runs early and unthrottled so the claim's
-- partial indexes stay small. Seeding's migration 0002.
ALTER TABLE seed_range SET (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE header_rollup SET (fillfactor = 70);

-- name: reset_range_storage
ALTER TABLE seed_range RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
    autovacuum_vacuum_cost_delay, autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor);
ALTER TABLE header_rollup RESET (fillfactor);

-- name: keep_claim_index_clean
-- Vacuum never skips index cleanup on seed_range (PostgreSQL >= 14 would,
-- with few heap pages dead: a queue's case). Seeding's migration 0005.
ALTER TABLE seed_range SET (vacuum_index_cleanup = on)

-- name: reset_claim_index_cleanup
ALTER TABLE seed_range RESET (vacuum_index_cleanup)
