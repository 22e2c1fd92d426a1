"""The seed ranges as a leased work table: the range statements (sql/ranges.sql) the
shared lease machinery (leasing.py) runs."""

from __future__ import annotations

from .leasing import WorkTable
from .sql import queries

RANGES = WorkTable(
    noun="range",
    queries=queries,
    id_param="range_id",
    cap_setting="LEASE_MAX_PER_NODE",
    gate="lease_gate",
    gated_claim="gated_lease_range",
    claim="lease_range",
    sweep_task="retire_quiet_ranges",
    holder="range_holder",
    heartbeat="heartbeat_range",
    release="release_range",
    retire="retire_quiet_ranges",
    end_node="end_node_leases",
)
