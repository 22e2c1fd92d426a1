"""Prometheus metrics: counters the services bump, gauges read at scrape time.

Under gunicorn with several workers set PROMETHEUS_MULTIPROC_DIR (an empty
directory, cleared at start; `manage.py serve` uses var/prometheus): every
worker then writes its counters to files there and a scrape sums them
(prometheus_client's multiprocess mode). Unset, the counters live in the
process that serves /metrics. The gauges (ranges by status, paused) are read
from the database on each scrape: cheap queries on the range summary.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

LEASES = Counter("seed_leases_total", "Leases handed out to nodes.", ["kind"])
LEASE_SECONDS = Histogram(
    "seed_lease_duration_seconds",
    "Time to answer a range lease request (the claim), in seconds.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
BATCHES = Counter("seed_batches_total", "Batches accepted from nodes.")
HEADERS = Counter("seed_headers_total", "Headers reported in batches that moved a range on.")
CONFLICTS = Counter("seed_api_conflicts_total", "API answers with status 409 (lease lost).")


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class DatabaseCollector(Collector):
    """Gauges read at scrape time: ranges by status (the summary) and whether leasing is paused."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from indexer.space import leasing_paused
        from seeding.selectors import range_totals

        ranges = GaugeMetricFamily("seed_ranges", "Seed ranges by status.", labels=["status"])
        articles = GaugeMetricFamily(
            "seed_range_articles", "Articles in seed ranges by status.", labels=["status"]
        )
        for status, values in range_totals().items():
            ranges.add_metric([status], values["ranges"])
            articles.add_metric([status], values["articles"])
        yield ranges
        yield articles
        yield GaugeMetricFamily(
            "seed_leasing_paused",
            "1 while range leasing is paused for lack of space.",
            value=1 if leasing_paused() else 0,
        )


def counter_registry() -> CollectorRegistry:
    """The counters: every worker's (multiprocess mode) or this process's."""
    registry = CollectorRegistry()
    if multiprocess_dir():
        multiprocess.MultiProcessCollector(registry)
    else:
        for collector in (LEASES, LEASE_SECONDS, BATCHES, HEADERS, CONFLICTS):
            registry.register(collector)
    return registry


def render_metrics() -> bytes:
    """The exposition text: the counters and the gauges read from the database."""
    registry = counter_registry()
    registry.register(DatabaseCollector())
    return generate_latest(registry)


def address_allowed(address: str, allowed: list[str]) -> bool:
    """Whether `address` is one of `allowed` (addresses or networks, e.g. 10.0.0.0/8)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for entry in allowed:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False
