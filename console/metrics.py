"""/metrics: the services' counters and gauges read from the database at scrape time.

Under gunicorn with several workers set PROMETHEUS_MULTIPROC_DIR (an empty
directory, cleared at start; `manage.py serve` uses var/prometheus): every
worker writes its counters to files there and a scrape sums them
(prometheus_client's multiprocess mode). The gauges (ranges by status,
catalog totals, paused) are cheap queries on the range and catalog summaries.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from catalog.selectors import catalog_totals
from core.metrics import counter_registry
from core.replicas import replica_state
from indexer.space import leasing_paused
from seeding.selectors import range_totals

CATALOG_GAUGES = (
    ("files", "seed_catalog_files", "Files in the catalog."),
    ("complete", "seed_catalog_complete_files", "Complete files in the catalog."),
    ("segments", "seed_catalog_segments", "Segments stored in the catalog."),
    ("bytes", "seed_catalog_bytes", "Bytes of the posts the catalog's segments make up."),
    ("conflicts", "seed_catalog_conflicts", "Conflicting message-ids remembered in the catalog."),
)


def catalog_gauges() -> Iterator[GaugeMetricFamily]:
    """The catalog's totals, exact (the per-group summary its triggers keep)."""
    totals = catalog_totals()
    for attribute, name, text in CATALOG_GAUGES:
        yield GaugeMetricFamily(name, text, value=getattr(totals, attribute))
    if totals.newest is not None:
        yield GaugeMetricFamily(
            "seed_catalog_newest_post_timestamp_seconds",
            "Date of the newest post in the catalog (Unix time).",
            value=totals.newest.timestamp(),
        )


class DatabaseCollector(Collector):
    """Gauges read at scrape time: ranges by status and catalog totals (the summaries),
    and whether leasing is paused."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        ranges = GaugeMetricFamily("seed_ranges", "Seed ranges by status.", labels=["status"])
        articles = GaugeMetricFamily(
            "seed_range_articles", "Articles in seed ranges by status.", labels=["status"]
        )
        for status, values in range_totals().items():
            ranges.add_metric([status], values["ranges"])
            articles.add_metric([status], values["articles"])
        yield ranges
        yield articles
        yield from catalog_gauges()
        yield GaugeMetricFamily(
            "seed_leasing_paused",
            "1 while range leasing is paused for lack of space.",
            value=1 if leasing_paused() else 0,
        )
        yield from replica_gauges()


def replica_gauges() -> Iterator[GaugeMetricFamily]:
    """The read replica's lag and whether it serves the reads that tolerate lag (none
    without DATABASE_REPLICA_URL)."""
    state = replica_state()
    if not state.configured:
        return
    yield GaugeMetricFamily(
        "seed_replica_serving",
        "1 while the read replica answers the reads that tolerate lag (searches, lists).",
        value=1 if state.serving else 0,
    )
    if state.lag_seconds is not None:
        yield GaugeMetricFamily(
            "seed_replica_lag_seconds",
            "At most how many seconds of the primary's writes the read replica misses.",
            value=state.lag_seconds,
        )


def render_metrics() -> bytes:
    """The exposition text: the counters and the gauges read from the database."""
    registry = counter_registry()
    registry.register(DatabaseCollector())
    return generate_latest(registry)
