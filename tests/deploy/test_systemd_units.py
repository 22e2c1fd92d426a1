"""The systemd units in deploy/systemd/ pass `systemd-analyze verify` with nothing to say.

verify refuses a unit whose ExecStart is not executable on this machine, so each
unit is checked as a copy whose program paths point at stand-ins in a temporary
directory; everything else is verified as written. systemd reads `#` only at the
start of a line: a comment after a value becomes part of it (the old unit in
docs/seed-node.md had one after EnvironmentFile=), which verify does not report,
so that is checked here too. docs/seed-node.md shows the node's unit file verbatim.
"""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from core.management.commands.serve import open_files_needed, open_files_problem

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
ANALYZE = shutil.which("systemd-analyze")
WEB_THREADS_DEFAULT = tomllib.loads((ROOT / "coordinator" / "settings.toml").read_text())["web"][
    "WEB_THREADS"
]["default"]


def test_the_coordinator_and_the_node_have_units() -> None:
    assert {unit.name for unit in UNITS} >= {
        "seed-coordinator.service",
        "seed-coordinator-maintain.service",
        "seed-node.service",
    }


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_no_setting_carries_a_comment_after_its_value(unit: Path) -> None:
    for number, line in enumerate(unit.read_text().splitlines(), 1):
        if "=" in line and not line.lstrip().startswith(("#", ";")):
            assert "#" not in line, f"{unit.name}:{number}: {line}"


@pytest.mark.skipif(
    ANALYZE is None,
    reason="systemd-analyze is missing: apt-get install systemd (.ci/install-systemd)",
)
@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_analyze_verify_accepts(unit: Path, tmp_path: Path) -> None:
    text = unit.read_text()
    for program in set(re.findall(r"^ExecStart=(\S+)", text, re.MULTILINE)):
        stand_in = tmp_path / "bin" / Path(program).name
        stand_in.parent.mkdir(exist_ok=True)
        stand_in.write_text("#!/bin/sh\n")
        stand_in.chmod(0o755)
        text = text.replace(program, str(stand_in))
    copy = tmp_path / unit.name
    copy.write_text(text)
    done = subprocess.run(
        [ANALYZE, "verify", "--man=no", str(copy)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr  # an unknown key is only a message


def test_docs_show_the_node_unit_as_it_is_in_the_repository() -> None:
    unit = (ROOT / "deploy" / "systemd" / "seed-node.service").read_text()
    assert unit.strip() in (ROOT / "docs" / "seed-node.md").read_text()


def test_the_coordinator_unit_leaves_a_worker_the_files_it_may_need() -> None:
    # systemd's default soft limit, 1,024 files, is under one worker's 1,000
    # connections plus its threads' sessions: accept() ran out (EMFILE).
    unit = (ROOT / "deploy" / "systemd" / "seed-coordinator.service").read_text()
    (limit,) = re.findall(r"^LimitNOFILE=(\d+)$", unit, re.MULTILINE)
    assert int(limit) >= open_files_needed(threads=WEB_THREADS_DEFAULT)


def test_serve_warns_under_an_open_file_limit_a_worker_may_pass(monkeypatch) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (1024, hard))
    problem = open_files_problem(threads=8)
    assert problem is not None
    assert "open-file limit is 1024, under the 1080 a worker may need" in problem
    assert "LimitNOFILE=" in problem
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (4096, hard))
    assert open_files_problem(threads=8) is None
