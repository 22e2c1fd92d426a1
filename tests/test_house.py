"""The shape of the house (docs/architecture.md): no two modules import each
other, no top-level package holds more than a fifth of the source lines, and
the tests build the project's models through their factories.

import-linter keeps the layers (`make lint`); these rules it cannot say.
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp
from django.apps import apps
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
MAX_SHARE = 0.20  # of the source lines, for any one top-level package


def packages() -> list[str]:
    """The top-level packages of the repository, tests aside."""
    return sorted(
        path.parent.name for path in ROOT.glob("*/__init__.py") if path.parent.name != "tests"
    )


def source_lines(package: str) -> int:
    """Lines of Python and SQL in `package`, its migrations aside."""
    files = [
        file
        for pattern in ("*.py", "*.sql")
        for file in (ROOT / package).rglob(pattern)
        if "migrations" not in file.relative_to(ROOT).parts
    ]
    return sum(len(file.read_text(encoding="utf-8").splitlines()) for file in files)


def line_shares() -> dict[str, float]:
    lines = {package: source_lines(package) for package in packages()}
    total = sum(lines.values())
    return {package: count / total for package, count in lines.items()}


def modules_importing_each_other(roots: list[str]) -> set[tuple[str, str]]:
    graph = grimp.build_graph(*roots, cache_dir=None)
    return {
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if module < imported and module in graph.find_modules_directly_imported_by(imported)
    }


def test_no_two_modules_import_each_other():
    assert modules_importing_each_other(packages()) == set()


def test_two_modules_importing_each_other_are_found(tmp_path, monkeypatch):
    (tmp_path / "knot").mkdir()
    (tmp_path / "knot" / "__init__.py").write_text("")
    (tmp_path / "knot" / "cli.py").write_text("from knot import processes\n")
    (tmp_path / "knot" / "processes.py").write_text("def run():\n    from knot import cli\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert modules_importing_each_other(["knot"]) == {("knot.cli", "knot.processes")}


def test_no_top_level_package_holds_over_a_fifth_of_the_source_lines():
    shares = line_shares()
    assert {"core", "catalog", "indexer", "seed_node"} <= shares.keys()
    assert {p: round(s, 3) for p, s in shares.items() if s > MAX_SHARE} == {}


def models_built_by_hand() -> set[str]:
    """`Model.objects.create(` (or get_or_create) of this project's models in the tests."""
    ours = {
        model.__name__
        for model in apps.get_models()
        if model._meta.app_label in {"indexer", "catalog", "seeding", "leases", "newznab"}
    }
    call = re.compile(r"(?<![\w.])(\w+)\.objects\.(?:create|get_or_create)\(")
    found = set()
    for file in (ROOT / "tests").rglob("*.py"):
        # A line that is a string is a subprocess's code, run without the factories.
        code = [line for line in file.read_text().splitlines() if line.strip()[:1] not in "\"'"]
        found |= {f"{file.relative_to(ROOT)}: {name}" for name in call.findall("\n".join(code))}
    return {entry for entry in found if entry.rsplit(": ", 1)[1] in ours}


def test_the_tests_build_the_models_through_their_factories():
    # tests/support/factories.py has one for each model a test builds.
    assert models_built_by_hand() == set()


def test_no_property_test_has_a_wall_clock_deadline():
    """Hypothesis fails an example that takes over 200 ms by default: a timed assertion
    that a loaded machine trips (tests/conftest.py loads a profile without one)."""
    assert settings.default.deadline is None
