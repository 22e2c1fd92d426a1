"""`.env.example` names every variable of coordinator/settings.toml, once, and nothing else."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from coordinator import environment

ROOT = Path(__file__).resolve().parents[2]


def test_env_example_is_written_from_the_catalog() -> None:
    written = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert written == environment.env_example(environment.load()), "run `make settings-doc`"


def test_env_example_names_every_variable_once() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    named = Counter(re.findall(r"^# ([A-Z][A-Z0-9_]*)=", text, re.MULTILINE))
    assert set(named) == set(environment.load())
    assert max(named.values()) == 1
    assert len(named) > 60
