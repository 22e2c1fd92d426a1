"""Behind the documented nginx (deploy/nginx/), a real `manage.py serve` keys the login
limits and the access log by each client's own address, not by nginx's 127.0.0.1.

nginx runs the example's server block on unprivileged ports; clients connect from
addresses of their own on the loopback network (127.0.0.0/8 is all loopback on
Linux), so nginx forwards a different `$remote_addr` for each. An attacker failing
logins under random names is refused at its address; an operator elsewhere logs in.
"""

from __future__ import annotations

import http.client
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.db import connection

from tests.support.net import free_port
from tests.support.proxy import CONF

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
FAILURES_PER_ADDRESS = 5

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(NGINX is None, reason="nginx is missing: run .ci/install-nginx as root"),
    pytest.mark.slow,
]


def wait_for(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            probe.request("GET", "/healthz")
            if probe.getresponse().status == 200:
                return
        except OSError:
            assert time.monotonic() < deadline and process.poll() is None, log.read_text()
            time.sleep(0.1)  # waiting for another process to listen


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """`serve` on loopback; yields its port and its log."""
    params = connection.get_connection_params()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{params.get('user', 'postgres')}@/{settings.DATABASES['default']['NAME']}",
        "PGHOST": str(params["host"]),
        "PGPORT": str(params.get("port") or 5432),
        "DATA_DIR": str(tmp_path / "var"),
        "SECRET_KEY": "test-proxy-key",
        "DB_CONN_MAX_AGE": "0",
        "LOGIN_FAILURES_PER_ADDRESS": str(FAILURES_PER_ADDRESS),
    }
    log_path = tmp_path / "serve.log"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "2"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for(port, process, log_path)
        yield port, log_path
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture
def nginx(tmp_path: Path, served: tuple[int, Path]) -> Iterator[int]:
    """The example's server block in front of `served`; yields its TLS port."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=seed.example.org", "-keyout", tmp_path / "key.pem",
         "-out", tmp_path / "cert.pem"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    upstream, _log = served
    plain, tls = free_port(), free_port()
    site = CONF.read_text()
    site = site.replace(
        "/etc/letsencrypt/live/seed.example.org/fullchain.pem", str(tmp_path / "cert.pem")
    )
    site = site.replace(
        "/etc/letsencrypt/live/seed.example.org/privkey.pem", str(tmp_path / "key.pem")
    )
    site = site.replace("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};")
    site = re.sub(r"listen (\[::\]:)?80\b", lambda m: f"listen {m.group(1) or ''}{plain}", site)
    site = re.sub(r"listen (\[::\]:)?443\b", lambda m: f"listen {m.group(1) or ''}{tls}", site)
    (tmp_path / "site.conf").write_text(site)
    temp = "".join(f"  {name}_temp_path {tmp_path}/{name};\n"
                   for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))  # fmt: skip
    user = "user root;\n" if os.geteuid() == 0 else ""
    (tmp_path / "nginx.conf").write_text(
        f"{user}daemon off;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/nginx-error.log;\n"
        f"events {{}}\nhttp {{\n  access_log off;\n{temp}  include {tmp_path}/site.conf;\n}}\n"
    )
    process = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not listening(tls):
            assert time.monotonic() < deadline and process.poll() is None, (
                tmp_path / "nginx-error.log"
            ).read_text()
            time.sleep(0.1)  # waiting for nginx to listen
        yield tls
    finally:
        process.terminate()
        process.wait(timeout=30)


class Browser:
    """One client at its own loopback address, through nginx over TLS, with cookies."""

    def __init__(self, port: int, address: str) -> None:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        self.conn = http.client.HTTPSConnection(
            "127.0.0.1", port, source_address=(address, 0), context=context, timeout=30
        )
        self.cookies: dict[str, str] = {}

    def send(self, method: str, path: str, body: str | None = None) -> tuple[int, str]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:  # a form posted by a browser, over HTTPS as nginx tells gunicorn
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Origin"] = "https://127.0.0.1"
            headers["Referer"] = "https://127.0.0.1/admin/login/"
        self.conn.request(method, path, body=body, headers=headers)
        response = self.conn.getresponse()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response.status, response.read().decode()

    def login(self, username: str, password: str) -> int:
        if "csrftoken" not in self.cookies:
            self.send("GET", "/admin/login/")
        page = self.send("GET", "/admin/login/")[1]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None, page
        form = {"csrfmiddlewaretoken": token.group(1), "username": username, "password": password}
        return self.send("POST", "/admin/login/?next=/admin/", urlencode(form))[0]


def test_an_attacker_behind_nginx_locks_out_its_own_address_not_the_operators(
    tmp_path: Path, served: tuple[int, Path], nginx: int
) -> None:
    # Addresses of this run alone: rate buckets outlive a test's transaction.
    net = f"127.{secrets.randbelow(200) + 20}.{secrets.randbelow(250) + 1}"
    attacker, operator = Browser(nginx, f"{net}.66"), Browser(nginx, f"{net}.2")
    for _ in range(FAILURES_PER_ADDRESS):
        assert attacker.login(f"nobody-{secrets.token_hex(4)}", "guess") == 200
    assert attacker.login(f"nobody-{secrets.token_hex(4)}", "guess") == 429
    username, password = (tmp_path / "var" / "admin-password").read_text().split()
    assert operator.login(username, password) == 302
    assert operator.send("GET", "/admin/")[0] == 200
    # gunicorn's access log names each client, not nginx's 127.0.0.1.
    lines = served[1].read_text(errors="replace").splitlines()
    posts = [line for line in lines if '"POST /admin/login/' in line]
    assert sum(line.startswith(f"{net}.66 ") for line in posts) == FAILURES_PER_ADDRESS + 1
    assert sum(line.startswith(f"{net}.2 ") for line in posts) == 1, posts
