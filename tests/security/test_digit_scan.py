"""No source tests digits with str.isdigit(), isdecimal() or isnumeric(): each is
true for "²" (which int() refuses: a 500) and for Arabic-Indic digits (which int()
reads as a number). Numbers are read by usenet/numbers.py alone
(docs/security.md, "Numbers from clients")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# The virtualenv, the embedded database, git, and the copies a wheel's build leaves.
NOT_OURS = {".venv", "var", ".git", "build"}
UNICODE_DIGIT_TESTS = {"isdigit", "isdecimal", "isnumeric"}
THE_PARSER = ROOT / "usenet" / "numbers.py"


def unicode_digit_tests(source: str) -> list[int]:
    """Lines calling str.isdigit/isdecimal/isnumeric: true for "²" (int() refuses it)
    and Arabic-Indic digits (int() reads them); such a test guards nothing."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in UNICODE_DIGIT_TESTS
    ]


def test_the_scan_finds_a_digit_test_guarding_int():
    assert unicode_digit_tests("if text.isdigit():\n    n = int(text)\n") == [1]
    assert unicode_digit_tests("ok = all(p.isdecimal() for p in parts) or s.isnumeric()") == [1, 1]


@pytest.mark.slow
def test_no_source_tests_digits_outside_the_parser():
    files = [p for p in ROOT.rglob("*.py") if NOT_OURS.isdisjoint(p.relative_to(ROOT).parts)]
    assert len(files) > 300  # every package of the tree, its tests and benches
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        if path != THE_PARSER
        for line in unicode_digit_tests(path.read_text())
    ]
    assert found == [], "read numbers with usenet.numbers (whole_number, ascii_digits)"
