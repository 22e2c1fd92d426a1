"""No regular expression in the project backtracks on what strangers write.

Python's ``re`` backtracks: one crafted subject, poster, name or header can
cost seconds. So every pattern in the project's packages (all of them, not
only those that read Usenet text: a pattern moves between modules more easily
than a test notices) runs under RE2 (``usenet/linear.py``) or is written
without a regex, unless it is listed in ALLOWED below with the reason it
cannot backtrack far, or the reason its text is the project's or the
operator's own. The scan reads the source: every ``re.compile``,
``re.search``, ``re.sub``, ... call, under any name ``re`` is imported as. A new
pattern fails this test until it is RE2 or argued for here; a changed one
must be argued for again (entries name the pattern's exact text).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "root_packages"
]
RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}  # fmt: skip

ONE_CLASS = "one character class and nothing after it: each character is looked at once"

ALLOWED: dict[tuple[str, str], str] = {
    # --- text from Usenet, nodes and API clients: linear, and why ---
    ("usenet/limits.py", r"<[^<>\s@]+@[^<>\s]+>\Z"): (
        "message-ids, matched at the start only; each repeat is followed by a character it"
        " cannot match ('@' after the first, '>' after the second), so a failed attempt"
        " gives back its run one character at a time and each step fails at once: linear"
    ),
    (
        "usenet/overview.py",
        r"\s*(?:[A-Za-z]+,?\s*)?([0-9]{1,2})[\s-]+([A-Za-z]{3})[A-Za-z]*\.?[\s-]+([0-9]{2,4})\s+"
        r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?(?:\.[0-9]+)?\s*"
        r"(?:([+-])([0-9]{2}):?([0-9]{2})|([A-Za-z]+))?",
    ): (
        "Date headers, matched at the start only; every repeat is followed by a token none"
        " of its characters can match (letters by a comma, space or digit; digits by a"
        " separator, colon or letter; separators by letters or digits), so each run is"
        " split one way and given back once; nothing after the time can fail: linear"
    ),
    ("usenet/rules.py", r"[(\[]([0-9]{1,6})/([0-9]{1,6})[)\]]"): (
        "the usual segment counter, matched at one position with bounded repeats only:"
        " at most 6 x 6 ways over at most 15 characters, whatever the subject"
    ),
    ("indexer/catalog/nzb.py", "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"): (
        f"characters XML cannot hold, in names and posters: {ONE_CLASS}"
    ),
    ("indexer/catalog/nzb.py", r"[^A-Za-z0-9._+\-\[\]() ]+"): (
        f"unsafe characters in an NZB's file name: {ONE_CLASS}"
    ),
    ("newznab/feed.py", "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"): (
        f"characters XML cannot hold, in release names: {ONE_CLASS}"
    ),
    ("newznab/selectors.py", r"[^\W_]+"): (f"the words of a search query: {ONE_CLASS}"),
    ("leases/snapshots.py", r"[^A-Za-z0-9._+-]"): (
        f"unsafe characters in a group name, for a file name: {ONE_CLASS}"
    ),
    ("newznab/api.py", r"[0-9][0-9]/[0-9][0-9]"): (
        "an episode date from a client, matched whole (fullmatch): fixed length, no repeat"
    ),
    # --- the project's own text, or the operator's ---
    ("indexer/sql/__init__.py", r"^--\s*name:\s*(\w+)\s*$"): "the project's own .sql files",
    ("indexer/sql/__init__.py", r"%%|%\((\w+)\)s"): "the project's own SQL, once at start",
    ("coordinator/environment.py", r"^\$(?:DATA_DIR|\{DATA_DIR\})(?=/|$)"): (
        "the operator's environment (settings)"
    ),
    (
        "coordinator/environment.py",
        r"\$(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\})",
    ): "the operator's environment (settings)",
    ("coordinator/environment.py", r"\[([^\]]+)\]\([^)]*\)"): (
        "the meanings in coordinator/settings.toml, the project's own text"
    ),
}


def re_calls(source: str) -> list[str | bytes | None]:
    """The pattern of each ``re`` call in `source`: its text, or None when it is not a literal.

    ``from re import search`` and the like are reported as None too: the
    pattern they are called with cannot be told from the call.
    """
    tree = ast.parse(source)
    names: set[str] = set()  # what ``re`` is called in this module
    found: list[str | bytes | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "re"}
        elif isinstance(node, ast.ImportFrom) and node.module == "re":
            found += [None for a in node.names if a.name in RE_FUNCTIONS]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
            and node.func.attr in RE_FUNCTIONS
        ):
            found.append(_pattern(node))
    return found


def _pattern(call: ast.Call) -> str | bytes | None:
    args = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "pattern")]
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str | bytes):
        return args[0].value
    return None


def project_patterns() -> dict[tuple[str, str | bytes | None], int]:
    """Every ``re`` pattern in the project's packages, by (file, pattern), with its count."""
    found: dict[tuple[str, str | bytes | None], int] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for pattern in re_calls(path.read_text()):
                key = (path.relative_to(ROOT).as_posix(), pattern)
                found[key] = found.get(key, 0) + 1
    return found


def test_every_backtracking_pattern_is_argued_for():
    unlisted = [
        f"{path}: {'a pattern that is not a literal' if p is None else repr(p)}"
        for path, p in project_patterns()
        if (path, p) not in ALLOWED
    ]
    assert not unlisted, (
        "These run under Python's re, which backtracks: compile them with"
        " usenet.linear.compile_linear (RE2), read the text without a regex, or add"
        " them to ALLOWED with why they cannot backtrack far:\n" + "\n".join(unlisted)
    )


def test_every_allowed_pattern_is_still_in_the_source():
    found = project_patterns()
    assert [key for key in ALLOWED if key not in found] == []


def test_the_scan_finds_re_under_any_name():
    source = (
        "import re\nimport re as regex\nfrom re import search\n"
        "A = re.compile(r'(a+)+$')\nB = regex.sub('x+y', '', text)\nC = re.match(pattern, s)\n"
        "D = re.compile(pattern=r'p')\nE = compile_linear(r'(a+)+$')\n"
    )
    assert sorted(re_calls(source), key=repr) == sorted(
        [None, "(a+)+$", "x+y", None, "p"], key=repr
    )


def test_the_scan_reads_the_packages_of_the_project():
    assert {"usenet", "indexer", "seed_node", "newznab"} <= set(PACKAGES)
    assert ("indexer/catalog/nzb.py", r"[^A-Za-z0-9._+\-\[\]() ]+") in project_patterns()
