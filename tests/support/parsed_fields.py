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
import functools
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import usenet
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


def load_module(name: str, source: str) -> ModuleType:
    """`source` (the text of a release_names.py) run as the module usenet.`name`,
    interpreted: its relative imports find usenet's modules."""
    spec = importlib.util.spec_from_loader(f"{usenet.__name__}.{name}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(Path(usenet.__file__).parent / f"{name}.py")
    sys.modules[spec.name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


@functools.cache
def interpreted() -> ModuleType:
    """usenet/release_names.py run by the interpreter, whether or not the package's
    module is the compiled one (setup.py): what the two give is compared, and what
    the parser does is counted with sys.setprofile, which sees no compiled call."""
    source = Path(usenet.__file__).parent / "release_names.py"
    return load_module("_release_names_interpreted", source.read_text())
