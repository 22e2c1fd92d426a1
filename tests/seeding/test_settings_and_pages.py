"""The coordinator's pages and schema answer, and the admin needs a staff login."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def test_the_openapi_schema_documents_the_range_protocol(client):
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    for path in ("/api/v1/ranges/lease", "/api/v1/ranges/{range_id}/batch", "/api/v1/status"):
        assert path in text


def test_the_docs_page_renders_every_operation(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/api/v1/ranges/{range_id}/release" in html
    assert "uncounted" in html


def test_the_admin_needs_a_staff_login(client, django_user_model):
    assert client.get("/admin/seeding/seedrange/").status_code == 302
    user = django_user_model.objects.create_user("plain", password="pw-123456")
    client.force_login(user)
    assert client.get("/admin/seeding/seedrange/").status_code == 302


def test_status_needs_a_node_token_or_a_staff_session(client, admin_client):
    assert client.get("/api/v1/status").status_code == 401
    response = admin_client.get("/api/v1/status")
    assert response.status_code == 200
    assert set(response.json()) >= {"ranges", "nodes", "headers_last_hour", "paused"}


def manage_check(**env: str) -> subprocess.CompletedProcess[str]:
    """`manage.py check` in a fresh process with the given environment (no database needed)."""
    keep = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG", "DATABASE_URL")}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**keep, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_development_secret_key_is_refused_outside_development():
    production = {"DATABASE_URL": "postgres://coordinator@db.invalid/coordinator", "DEBUG": "0"}
    refused = manage_check(**production)
    assert refused.returncode != 0
    assert "indexer.E009" in refused.stderr
    assert manage_check(**production, SECRET_KEY="a-long-random-production-key").returncode == 0
    development = manage_check()  # the embedded database: a warning only
    assert development.returncode == 0, development.stderr
    assert "indexer.W001" in development.stderr + development.stdout
