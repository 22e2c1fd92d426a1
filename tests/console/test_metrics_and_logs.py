"""/metrics (access, counters, multiprocess mode) and the per-request log line."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from tests.support.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def sample(text: str, name: str, default: float | None = None) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    if default is not None:
        return default
    raise AssertionError(f"{name} not in metrics")


@override_settings(METRICS_ALLOW_IPS=[], METRICS_TOKEN="")
def test_metrics_are_refused_to_strangers_and_served_to_staff(client, admin_client):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403
    response = admin_client.get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 200
    assert "seed_ranges" in response.content.decode()


def test_metrics_by_default_answer_loopback(client):
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403


@override_settings(METRICS_TOKEN="scrape-secret", METRICS_ALLOW_IPS=["10.0.0.0/8"])
def test_metrics_with_a_token_or_from_an_allowed_network(client):
    stranger = {"REMOTE_ADDR": "203.0.113.9"}
    assert client.get("/metrics", **stranger).status_code == 403
    bad = client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong", **stranger)
    assert bad.status_code == 401  # a wrong credential is refused as such
    assert bad["WWW-Authenticate"].startswith("Bearer")
    good = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret", **stranger)
    assert good.status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.9.8.7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


def test_counters_and_gauges_follow_the_protocol(client, node_client, settings):
    SeedRangeFactory(start_id=1, end_id=1000)
    before = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    node = node_client()
    lease = node.lease()
    body = {"epoch": lease["epoch"], "next": 501, "headers": 480}
    node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
    stale = node.post(f"/api/v1/ranges/{lease['id']}/batch", {**body, "epoch": 99})
    assert stale.status_code == 409
    settings.DB_MAX_BYTES = 1
    after = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    def grew(name: str) -> float:
        return sample(after, name) - sample(before, name, default=0.0)

    assert grew('seed_leases_total{kind="range"}') == 1
    assert grew("seed_batches_total") == 1
    assert grew("seed_headers_total") == 480
    assert grew("seed_api_conflicts_total") == 1
    assert grew("seed_lease_duration_seconds_count") == 1
    assert sample(after, 'seed_ranges{status="leased"}') == 1
    assert sample(after, "seed_leasing_paused") == 1


@pytest.mark.slow
def test_several_workers_add_up_in_multiprocess_mode(tmp_path):
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    bump = (
        "from core.metrics import LEASES, HEADERS;"
        "LEASES.labels(kind='range').inc(); HEADERS.inc(100)"
    )
    for _ in range(3):  # three worker processes
        subprocess.run([sys.executable, "-c", bump], env=env, cwd=ROOT, check=True)
    read = (
        "from prometheus_client import generate_latest;"
        "from core.metrics import counter_registry;"
        "print(generate_latest(counter_registry()).decode())"
    )
    out = subprocess.run(
        [sys.executable, "-c", read], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    assert sample(out, 'seed_leases_total{kind="range"}') == 3
    assert sample(out, "seed_headers_total") == 300


def test_one_log_line_per_api_request_without_secrets(node_client, caplog):
    SeedRangeFactory(start_id=1, end_id=1000)
    node = node_client(name="seed-logged")
    password = "hunter2-news-password"
    url = f"nntps://reader:{password}@news.example.invalid:563/"
    with override_settings(NEWS_SERVER_URL=url), caplog.at_level(logging.DEBUG):
        lease = node.lease()
        node.post(f"/api/v1/ranges/{lease['id']}/batch?token={node.node.token}", {"epoch": 1})
        # The overview relay uses NEWS_SERVER_URL (and fails: the host does not resolve).
        node.get(f"/api/v1/ranges/{lease['id']}/overviews?epoch={lease['epoch']}&from=1&to=2")
    lines = [r.getMessage() for r in caplog.records if r.name == "indexer.requests"]
    assert len(lines) == 3
    assert lines[0].startswith("api method=POST path=/api/v1/ranges/lease status=200 duration_ms=")
    assert lines[0].endswith("node=seed-logged")
    assert f"range={lease['id']}" in lines[1] and "status=" in lines[1]
    assert "path=/api/v1/ranges/" in lines[2] and "status=503" in lines[2], lines[2]
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    everything = caplog.text + "\n".join(handler.format(r) for r in caplog.records)
    assert node.node.token not in everything
    assert password not in everything


def test_a_path_cannot_forge_a_log_line(client, caplog):
    with caplog.at_level(logging.INFO, logger="indexer.requests"):
        client.get("/api/v1/x%0Aapi%20method=POST%20path=/api/v1/ranges/lease%20status=200")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "indexer.requests"]
    assert "\n" not in line
    assert line.startswith('api method=GET path="/api/v1/x\\napi method=POST')
    assert "status=404" in line
