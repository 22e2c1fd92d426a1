"""Deployment defaults: no public SECRET_KEY, HTTPS settings, a clean check --deploy."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from coordinator.local_secrets import local_secret_key
from core.checks import PUBLIC_DEVELOPMENT_KEY
from tests.support.factories import GroupFactory
from tests.support.reports import report, store

ROOT = Path(__file__).resolve().parents[2]


def readme_production_settings() -> dict[str, str]:
    """The environment README.md documents for production (its marked block)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- production-settings -->", 1)[1].split("```sh", 1)[1]
    block = block.split("```", 1)[0]
    return dict(line.split("=", 1) for line in block.split() if "=" in line)


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # The browser tests' conftest sets DJANGO_ALLOW_ASYNC_UNSAFE for Playwright;
    # a deployment never has it (check --deploy refuses it: async.E001).
    names = {"SECRET_KEY", "DEBUG", "DATABASE_URL", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    keep = {k: v for k, v in os.environ.items() if k not in names and not k.startswith("SECURE_")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**keep, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.slow
def test_check_deploy_is_clean_with_the_readme_production_settings():
    production = readme_production_settings()
    assert {"SECRET_KEY", "SECURE_PROXY_SSL_HEADER", "SECURE_COOKIES"} <= set(production)
    done = manage("check", "--deploy", "--fail-level", "WARNING", **production)
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout + done.stderr
    # drf-spectacular's deploy check builds the schema: no view it cannot describe
    # (W001) and no name clash (W002).
    assert "drf_spectacular" not in done.stdout + done.stderr


def test_the_csrf_middleware_and_its_secure_cookie_are_checked_for_the_subclass(settings):
    """Django's W003 and W016 find the CSRF middleware by its dotted path only; the
    subclass installed (core.api.node_calls) is checked by indexer.W004 and W005."""
    from core.checks import check_csrf_middleware

    assert "core.api.node_calls.CsrfViewMiddleware" in settings.MIDDLEWARE
    settings.CSRF_USE_SESSIONS, settings.CSRF_COOKIE_SECURE = False, True
    assert check_csrf_middleware(None) == []
    settings.CSRF_COOKIE_SECURE = False  # W016 would stay silent for the subclass
    assert [m.id for m in check_csrf_middleware(None)] == ["indexer.W005"]
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if "Csrf" not in m]
    assert [m.id for m in check_csrf_middleware(None)] == ["indexer.W004"]


def test_a_missing_secret_key_is_made_once_kept_private_and_reused(tmp_path):
    path = tmp_path / "var" / "secret-key"
    key = local_secret_key(path)
    assert len(key) >= 50 and key != PUBLIC_DEVELOPMENT_KEY
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert local_secret_key(path) == key
    assert local_secret_key(tmp_path / "elsewhere") != key


def test_without_secret_key_the_settings_use_the_key_kept_in_var():
    if settings.SECRET_KEY_FILE is None:
        pytest.skip("SECRET_KEY is set in this environment")
    assert settings.SECRET_KEY == Path(settings.SECRET_KEY_FILE).read_text().strip()
    assert settings.SECRET_KEY != PUBLIC_DEVELOPMENT_KEY


@pytest.mark.slow
def test_the_public_development_key_is_refused_everywhere():
    refused = manage("check", SECRET_KEY=PUBLIC_DEVELOPMENT_KEY)
    assert refused.returncode != 0
    assert "indexer.E009" in refused.stderr


@pytest.mark.slow
def test_production_without_a_key_warns_that_hosts_need_one():
    done = manage("check", DATABASE_URL="postgres://c@db.invalid/c", DEBUG="0")
    assert done.returncode == 0, done.stderr
    assert "indexer.W002" in done.stdout + done.stderr


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("proxy_header", "scheme"),
    [(("HTTP_X_FORWARDED_PROTO", "https"), "https://"), (None, "http://")],
)
def test_catalog_next_links_are_https_behind_a_tls_proxy(
    node_client, settings, proxy_header, scheme
):
    settings.SECURE_PROXY_SSL_HEADER = proxy_header
    settings.CATALOG_PAGE_SIZE = 1
    group = GroupFactory()
    store(group, report("a.rar", [1], 1))
    store(group, report("b.rar", [1], 1))
    # As a proxy forwards it: the Host header, and the scheme in X-Forwarded-Proto.
    body = (
        node_client()
        .get("/api/v1/files", HTTP_HOST="testserver", HTTP_X_FORWARDED_PROTO="https")
        .json()
    )
    assert re.match(rf"^{re.escape(scheme)}testserver/api/v1/files\?", body["next"]), body["next"]


@pytest.mark.slow
def test_https_settings_come_from_the_environment():
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT)"
    )
    done = manage(
        "shell",
        "-c",
        code,
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO",
        SECURE_COOKIES="1",
        SECURE_HSTS_SECONDS="60",
        SECURE_SSL_REDIRECT="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "('HTTP_X_FORWARDED_PROTO', 'https') True True 60 True"
