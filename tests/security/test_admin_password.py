"""The generated admin password goes to var/admin-password (0600) only, never to
standard output: under the systemd unit that is the journal, and the password
stays valid."""

from __future__ import annotations

import io
import stat

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from core.management.commands.serve import Command as Serve

pytestmark = pytest.mark.django_db


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR


def saved_login(var_dir):
    path = var_dir / "admin-password"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    username, password = path.read_text(encoding="utf-8").split()
    return path, username, password


def test_serve_prints_the_admins_name_and_password_file_never_the_password(var_dir):
    out = io.StringIO()
    serve = Serve(stdout=out)
    serve.prepare_database()
    path, username, password = saved_login(var_dir)
    printed = out.getvalue()
    assert password not in printed
    assert f"user {username!r}" in printed and f"cat {path}" in printed
    assert get_user_model().objects.get(username=username).check_password(password)


def test_ensure_admin_prints_the_name_and_file_never_the_password(var_dir):
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    path, _username, password = saved_login(var_dir)
    assert password not in out.getvalue() and str(path) in out.getvalue()
    again = io.StringIO()
    call_command("ensure_admin", stdout=again)  # it exists now: named, the file pointed at
    assert "Admin login: user 'admin'" in again.getvalue() and str(path) in again.getvalue()


def test_an_older_password_file_is_replaced_whole_and_stays_private(var_dir):
    var_dir.mkdir()
    (var_dir / "admin-password").write_text("admin old-password-of-a-dropped-database\n")
    (var_dir / "admin-password").chmod(0o644)
    call_command("ensure_admin", stdout=io.StringIO())
    _path, _username, password = saved_login(var_dir)
    assert password != "old-password-of-a-dropped-database"
