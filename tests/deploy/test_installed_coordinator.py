"""`pip install .` deploys the coordinator: a wheel, a fresh virtualenv, `seed-coordinator`.

The wheel is built from a copy of the files the distribution is made of, installed
into a new virtualenv with its dependencies, and run from a directory outside
the checkout: the entry point works, templates, SQL and static files come from
the installed packages, and data (the secret key, static files) lands in ./var
under the current directory, never in site-packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What the distribution is made of: the packages pyproject.toml's find includes.
PACKAGES = tuple(
    pattern.rstrip("*")
    for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
)


def clean_environment() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "DATA_DIR", "SECRET_KEY"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("coordinator-host")
    checkout = base / "checkout"
    # Not the parser compiled in place (make install): the wheel compiles its own.
    ignore = shutil.ignore_patterns(
        "__pycache__", "*.pyc", "build", "*.egg-info", "*.so", "*.source-sha256"
    )
    for package in PACKAGES:
        shutil.copytree(ROOT / package, checkout / package, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, checkout / name)
    env = clean_environment()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", base / "dist", checkout],
        check=True, timeout=600, env=env, cwd=base,
    )  # fmt: skip
    (wheel,) = (base / "dist").glob("usenet_seed_coordinator-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", wheel],
        check=True, timeout=900, env=env, cwd=base,
    )  # fmt: skip
    return venv


def coordinator(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(exist_ok=True)
    return subprocess.run(
        [venv / "bin" / "seed-coordinator", *args],
        capture_output=True, text=True, timeout=300, env=clean_environment(), cwd=cwd,
    )  # fmt: skip


def test_seed_coordinator_check_runs_outside_the_checkout(installed: Path) -> None:
    site = installed / "site"
    done = coordinator(installed, site, "check")
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout
    assert (site / "var" / "secret-key").is_file()  # data under the current directory
    assert not list(installed.glob("lib/python*/site-packages/var"))


def test_templates_and_sql_come_from_the_installed_packages(installed: Path) -> None:
    probe = (
        "import coordinator, core.sql\n"
        "from django.template.loader import get_template\n"
        "for name in ('admin/dashboard.html', 'api/docs.html', 'admin/indexer/issue_token.html',\n"
        "             'admin/newznab/issue_key.html'):\n"
        "    print(get_template(name).origin.name)\n"
        "print(coordinator.__file__)\n"
        "core.sql.queries['server_setting']\n"
    )
    done = coordinator(installed, installed / "site", "shell", "-c", probe)
    assert done.returncode == 0, done.stderr
    locations = [line for line in done.stdout.splitlines() if line.startswith("/")]
    assert len(locations) == 5, done.stdout
    for location in locations:
        assert Path(location).is_relative_to(installed), location


def test_collectstatic_gathers_the_admin_and_the_api_docs_into_var(installed: Path) -> None:
    site = installed / "site"
    done = coordinator(installed, site, "collectstatic", "--noinput", "-v", "0")
    assert done.returncode == 0, done.stderr
    static = site / "var" / "static"
    assert (static / "admin" / "css" / "base.css").is_file()
    assert (
        static / "drf_spectacular_sidecar" / "swagger-ui-dist" / "swagger-ui-bundle.js"
    ).is_file()


def test_the_installed_release_name_parser_is_compiled(installed: Path) -> None:
    # setup.py compiles it with mypyc into the wheel, with the digest of its source.
    probe = "import usenet.release_names as r; print(r.COMPILED, r.__file__)"
    done = subprocess.run(
        [installed / "bin" / "python", "-c", probe],
        capture_output=True, text=True, timeout=60, env=clean_environment(), cwd=installed,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    compiled, location = done.stdout.split()
    assert compiled == "True", done.stdout
    assert Path(location).is_relative_to(installed) and location.endswith(".so"), location
    assert not done.stderr  # no warning: the wheel's extension was built from its source
