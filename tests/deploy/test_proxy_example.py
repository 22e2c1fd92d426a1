"""The nginx example (deploy/nginx/) is valid nginx and sets what the settings rely on."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from tests.support.net import free_port
from tests.support.proxy import CONF

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")


def test_the_proxy_always_sets_the_header_secure_proxy_ssl_header_names() -> None:
    text = CONF.read_text()
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in text
    # The client's address, believed from the proxy TRUSTED_PROXIES trusts by default.
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in text
    assert "server 127.0.0.1:" in text and "127.0.0.1" in settings.TRUSTED_PROXIES
    example = (ROOT / ".env.example").read_text()
    assert "SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO" in example
    # Long streams pass uncut; /metrics stays off the public side.
    timeout = re.search(r"proxy_read_timeout (\d+)s;", text)
    assert timeout is not None and int(timeout.group(1)) >= 3600
    assert "location = /metrics { return 404; }" in text


def locations(text: str) -> dict[str, str]:
    """Each `location … { … }` of the example by its pattern (no nested blocks)."""
    found = re.finditer(r"location\s+(?:[~=]\s+)?(\S+)\s*\{([^{}]*)\}", text)
    return {m.group(1): m.group(2) for m in found}


def test_only_the_snapshot_upload_streams_through_unbuffered_and_uncapped() -> None:
    text = CONF.read_text()
    https = text[text.index("listen 443") :]
    server_level = re.sub(r"location[^{]*\{[^{}]*\}", "", https)
    # Everywhere else nginx reads the body whole first (a slow client holds
    # nginx, not a coordinator thread), up to API_MAX_BODY_BYTES's default.
    assert "proxy_request_buffering" not in server_level
    assert "client_max_body_size 64m;" in server_level
    unbuffered = {
        pattern
        for pattern, block in locations(https).items()
        if "proxy_request_buffering off;" in block
    }
    assert len(unbuffered) == 1
    pattern = re.compile(unbuffered.pop())
    assert pattern.search("/api/v1/groups/12/lanes/history/snapshot")
    for path in ("/admin/login/", "/api/v1/ranges/1/batch", "/api/v1/groups/12/lanes/tail/next"):
        assert not pattern.search(path), path
    assert "client_max_body_size 0;" in locations(https)[pattern.pattern]


@pytest.mark.slow
@pytest.mark.skipif(NGINX is None, reason="nginx is missing: run .ci/install-nginx as root")
def test_nginx_accepts_the_example(tmp_path: Path) -> None:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=seed.example.org", "-keyout", tmp_path / "key.pem",
         "-out", tmp_path / "cert.pem"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    site = CONF.read_text()
    site = site.replace(
        "/etc/letsencrypt/live/seed.example.org/fullchain.pem", str(tmp_path / "cert.pem")
    )
    site = site.replace(
        "/etc/letsencrypt/live/seed.example.org/privkey.pem", str(tmp_path / "key.pem")
    )
    # nginx -t binds the ports: unprivileged ones, so the test runs as any user.
    plain, tls = free_port(), free_port()
    site = re.sub(r"listen (\[::\]:)?80\b", lambda m: f"listen {m.group(1) or ''}{plain}", site)
    site = re.sub(r"listen (\[::\]:)?443\b", lambda m: f"listen {m.group(1) or ''}{tls}", site)
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log stderr;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  include {tmp_path}/site.conf;\n}}\n"
    )
    done = subprocess.run(
        [NGINX, "-t", "-q", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
