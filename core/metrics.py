"""The Prometheus counters the services bump, and their registry: every gunicorn
worker's with PROMETHEUS_MULTIPROC_DIR set, else this process's. The console
serves them with gauges read at scrape time (console/metrics.py)."""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Histogram, multiprocess

LEASES = Counter("seed_leases_total", "Leases handed out to nodes.", ["kind"])
LEASE_SECONDS = Histogram(
    "seed_lease_duration_seconds",
    "Time to answer a range lease request (the claim), in seconds.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
BATCHES = Counter("seed_batches_total", "Batches accepted from nodes.")
HEADERS = Counter("seed_headers_total", "Headers reported in batches that moved a range on.")
CONFLICTS = Counter("seed_api_conflicts_total", "API answers with status 409 (lease lost).")

COUNTERS = (LEASES, LEASE_SECONDS, BATCHES, HEADERS, CONFLICTS)


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def counter_registry() -> CollectorRegistry:
    """The counters: every worker's (multiprocess mode) or this process's."""
    registry = CollectorRegistry()
    if multiprocess_dir():
        multiprocess.MultiProcessCollector(registry)
    else:
        for collector in COUNTERS:
            registry.register(collector)
    return registry
