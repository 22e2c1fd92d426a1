"""No regular expression in the project backtracks on what strangers write.

Python's ``re`` backtracks: one crafted subject, poster, name or header can
cost seconds. So every pattern in the project's packages (all of them, not
only those that read Usenet text: a pattern moves between modules more easily
than a test notices) runs under RE2 (``usenet/linear.py``) or is written
without a regex, unless it is listed in ALLOWED below with the reason it
cannot backtrack far, or the reason its text is the project's or the
operator's own. The scan reads the source: every ``re.compile``,
``re.search``, ``re.sub``, ... call, under any name ``re`` (or the third-party
``regex``) is imported as, and every other way to reach them (a function
passed by reference, a star import, ``importlib``), which it reports as a
pattern it cannot read: such code must say its pattern in a call. A new
pattern fails this test until it is RE2 or argued for here; a changed one
must be argued for again (entries name the pattern's exact text).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "root_packages"
]
RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}  # fmt: skip
# Modules that run patterns with a backtracking engine.
BACKTRACKING = {"re", "regex", "sre_compile"}
# What may be read from them without compiling a pattern: escaping, flags, types.
HARMLESS = {
    "escape", "error", "Pattern", "Match", "RegexFlag", "NOFLAG", "purge",
    "ASCII", "A", "IGNORECASE", "I", "LOCALE", "L", "MULTILINE", "M",
    "DOTALL", "S", "UNICODE", "U", "VERBOSE", "X",
}  # fmt: skip

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
    (
        "usenet/overview.py",
        r"[A-Za-z]{3}, ([0-9]{2}) ([A-Za-z]{3}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) "
        r"([+-])([0-9]{2})([0-9]{2})",
    ): (
        "Date headers of the usual form, matched at the start only; every repeat has a fixed"
        " count, so the pattern reads at most 31 characters one way: constant time"
    ),
    ("usenet/rules.py", r"[(\[]([0-9]{1,6})/([0-9]{1,6})[)\]]"): (
        "the usual segment counter, matched at one position with bounded repeats only:"
        " at most 6 x 6 ways over at most 15 characters, whatever the subject"
    ),
    ("catalog/nzb.py", "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"): (
        f"characters XML cannot hold, in names and posters: {ONE_CLASS}"
    ),
    ("catalog/nzb.py", r"[^A-Za-z0-9._+\-\[\]() ]+"): (
        f"unsafe characters in an NZB's file name: {ONE_CLASS}"
    ),
    ("newznab/feed.py", "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"): (
        f"characters XML cannot hold, in release names: {ONE_CLASS}"
    ),
    ("newznab/selectors.py", r"[^\W_]+"): (f"the words of a search query: {ONE_CLASS}"),
    ("leases/snapshots.py", r"[^A-Za-z0-9._+-]"): (
        f"unsafe characters in a group name, for a file name: {ONE_CLASS}"
    ),
    # --- the project's own text, or the operator's ---
    ("core/sql/__init__.py", r"^--\s*name:\s*(\w+)\s*$"): "the project's own .sql files",
    ("core/sql/__init__.py", r"%%|%\((\w+)\)s"): "the project's own SQL, once at start",
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
    """The pattern of each backtracking-engine call in `source`: its text, or None
    when it is not a literal or cannot be told from the source.

    Engines are the modules of BACKTRACKING (``re`` and the third-party
    ``regex``), under any name they are imported as. None is reported for
    every way to reach one whose pattern the scan cannot read: a function
    passed by reference (``map(re.compile, texts)``, ``partial(re.sub, ...)``),
    the module itself handed on (``getattr(re, "compile")``), ``from re import
    search`` or ``*``, and ``importlib.import_module`` or ``__import__`` of an
    engine or of a name that is not a literal.
    """
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    names: set[str] = set()  # what the engines are called in this module
    found: list[str | bytes | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name in BACKTRACKING}
        elif isinstance(node, ast.ImportFrom) and node.module in BACKTRACKING:
            found += [None for a in node.names if a.name not in HARMLESS]
        elif isinstance(node, ast.Call) and _imports_dynamically(node):
            found.append(None)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            found += _use_of_engine(node, parents)
    return found


def _use_of_engine(name: ast.Name, parents: dict[ast.AST, ast.AST]) -> list[str | bytes | None]:
    """What one mention of an engine's module reports: nothing for a harmless
    attribute (``re.escape``, a flag, ``re.Pattern``), the pattern of a direct
    call, None for anything else."""
    attribute = parents.get(name)
    if not isinstance(attribute, ast.Attribute) or attribute.value is not name:
        return [None]  # the module itself handed on
    if attribute.attr in HARMLESS:
        return []
    call = parents.get(attribute)
    if attribute.attr in RE_FUNCTIONS and isinstance(call, ast.Call) and call.func is attribute:
        return [_pattern(call)]
    return [None]  # passed by reference, or a way in the scan does not know


def _imports_dynamically(call: ast.Call) -> bool:
    """``importlib.import_module(...)`` or ``__import__(...)`` of an engine, or of a
    name that is not a literal (it could be one)."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name not in ("import_module", "__import__") or not call.args:
        return False
    target = call.args[0]
    if not (isinstance(target, ast.Constant) and isinstance(target.value, str)):
        return True
    return target.value.partition(".")[0] in BACKTRACKING


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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_scan_reads_the_packages_of_the_project():
    assert {"usenet", "indexer", "seed_node", "newznab"} <= set(PACKAGES)
    assert ("catalog/nzb.py", r"[^A-Za-z0-9._+\-\[\]() ]+") in project_patterns()


@pytest.mark.parametrize(
    "source",
    [
        # the third-party `regex` module backtracks as `re` does
        "import regex\nA = regex.compile(r'(a+)+$')\n",
        "import regex as rx\nA = rx.search(r'(a+)+$', text)\n",
        # a pattern built at run time, compiled without a call the scan can read
        "import re\nRULES = list(map(re.compile, rule_texts))\n",
        "import re\nfrom functools import partial\nstem = partial(re.sub, r'(\\.\\w+)+$', '')\n",
        "import re\ncompile_it = getattr(re, 'compile')\n",
        "import re\nSCANNER = re.Scanner([(r'(a+)+$', None)])\n",
        # a star import brings compile() in under its bare name
        "from re import *\nA = compile(r'(a+)+$')\n",
        "from regex import compile\nA = compile(r'(a+)+$')\n",
        # an engine reached without an import statement
        "import importlib\nr = importlib.import_module('re')\nA = r.compile(r'(a+)+$')\n",
        "from importlib import import_module\nr = import_module('regex')\n",
        "r = __import__('re')\nA = r.compile(r'(a+)+$')\n",
        "import importlib\nr = importlib.import_module(name)\n",
    ],
)
def test_the_scan_sees_every_way_a_backtracking_pattern_is_compiled(source):
    assert None in re_calls(source) or "(a+)+$" in re_calls(source), "the scan reports nothing"


def test_the_scan_lets_harmless_uses_of_re_pass():
    source = (
        "import re\nimport importlib\nX = re.escape(name)\nF = re.IGNORECASE | re.M\n"
        "def f(p: re.Pattern[str]) -> re.Match[str] | None: ...\n"
        "json = importlib.import_module('json')\n"
    )
    assert re_calls(source) == []
