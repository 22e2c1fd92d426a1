"""`.env.example` names every environment variable the settings read, and nothing else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def variables_read_by_settings() -> set[str]:
    """NAME of every env("NAME") / env.int("NAME", ...) call in coordinator/settings.py."""
    names = set()
    tree = ast.parse((ROOT / "coordinator" / "settings.py").read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.value if isinstance(func, ast.Attribute) else func
        if isinstance(called, ast.Name) and called.id == "env":
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
    return names


def variables_in_env_example() -> set[str]:
    text = (ROOT / ".env.example").read_text()
    return set(re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", text, re.MULTILINE))


def test_env_example_lists_every_setting_read_from_the_environment() -> None:
    read = variables_read_by_settings()
    assert len(read) > 50  # the walk found the settings
    assert read - variables_in_env_example() == set()


def test_env_example_lists_nothing_the_coordinator_does_not_read() -> None:
    extra = variables_in_env_example() - variables_read_by_settings()
    assert extra == {"PROMETHEUS_MULTIPROC_DIR"}  # read by prometheus_client and serve
