"""A ParsedName as plain data, and the file of every field the parser gives a set of names.

tests/usenet/data/release_names_expected.json holds, for the corpora's names,
the string literals of tests/usenet/test_release_names.py and generated
names, each field `usenet.release_names.parse_release_name` gives that is not
at its default (bench/names_equivalence.py --write-expected writes it from the
working tree's parser). tests/usenet/test_release_names_expected.py holds the
parser to it, so a change made for speed changes no result, and a change
meant to change results shows as a diff of that file.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any

from usenet.release_names import ParsedName

EXPECTED = Path(__file__).resolve().parents[1] / "usenet" / "data" / "release_names_expected.json"
DEFAULTS = {f.name: f.default for f in dataclasses.fields(ParsedName)}


def fields(parsed: Any) -> dict[str, Any]:
    """The fields that differ from their default, as JSON writes them (dates as ISO text)."""
    out = {}
    for name, default in DEFAULTS.items():
        value = getattr(parsed, name)
        if value != default:
            if isinstance(value, datetime.date):
                value = value.isoformat()
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
    return out


def load_expected() -> list[tuple[str, dict[str, Any]]]:
    return [(name, want) for name, want in json.loads(EXPECTED.read_text())["names"]]
