"""Does usenet.release_names still read every name as a reference parser does?

A rewrite for speed must not change one field. This script parses names with
the working tree's `usenet.release_names` and with a reference version of the
same module taken from git (`git show REF:usenet/release_names.py`, loaded
as a module of the `usenet` package), and reports every name whose fields
differ. The names:

- every name of both corpora (tests/usenet/data/release_names.json and
  release_names_holdout.json);
- every string literal of tests/usenet/test_release_names.py;
- `--generated N` names (default 100,000) from a seeded generator
  (`generated_names`) that splices real tokens of the corpora with the
  separators, brackets, dashes, digits and case changes names carry.

Run: ``.venv/bin/python bench/names_equivalence.py [--ref main]
[--generated 100000] [--speed 20]`` (exit status 1 on any difference;
`--speed N` also times both parsers over the corpora, alternating in one
process on CPU time, and prints the ratio). The reference always runs
interpreted; the working tree's parser is the compiled one where `make
install` built it (setup.py), so `--ref worktree` compares the compiled
parser with its own source interpreted, and times the two.

`--write-expected` writes tests/usenet/data/release_names_expected.json from
the working tree's parser: the corpora, the test strings and 1,500 generated
names (another seed). tests/usenet/test_release_names_expected.py holds the
parser to that file.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.parsed_fields import EXPECTED, fields, load_module  # noqa: E402
from usenet.release_names import COMPILED, parse_release_name  # noqa: E402

DATA = ROOT / "tests" / "usenet" / "data"
CORPORA = (DATA / "release_names.json", DATA / "release_names_holdout.json")
TEST_FILE = ROOT / "tests" / "usenet" / "test_release_names.py"
SEPARATORS = (".", " ", "_", "-", " - ", ".", ".", " ")


def reference(ref: str) -> ModuleType:
    """usenet/release_names.py as of git revision `ref` (`worktree`: the working tree's),
    run interpreted as the module usenet._reference_names."""
    if ref == "worktree":
        source = (ROOT / "usenet" / "release_names.py").read_text()
    else:
        source = subprocess.run(
            ["git", "show", f"{ref}:usenet/release_names.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return load_module("_reference_names", source)


def corpus_names() -> list[str]:
    names: list[str] = []
    for path in CORPORA:
        names.extend(row["name"] for row in json.loads(path.read_text())["names"])
    return names


def strings_of_tests() -> list[str]:
    tree = ast.parse(TEST_FILE.read_text())
    found = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    return sorted(found)


def generated_names(count: int, seed: int = 25) -> Iterator[str]:
    """`count` names made of real names' tokens: spliced, shuffled, mutated."""
    rng = random.Random(seed)
    names = corpus_names()
    pieces = sorted(
        {p for n in names for p in n.replace("_", ".").replace(" ", ".").split(".") if p}
    )
    digits = "0123456789"

    def mutate(text: str) -> str:
        choice = rng.randrange(8)
        if choice == 0:  # digits moved
            return "".join(rng.choice(digits) if c in digits else c for c in text)
        if choice == 1:  # case
            return text.upper() if rng.random() < 0.5 else text.lower()
        if choice == 2:  # a token dropped or doubled
            parts = text.split(".")
            at = rng.randrange(len(parts))
            if rng.random() < 0.5 and len(parts) > 1:
                del parts[at]
            else:
                parts.insert(at, parts[at])
            return ".".join(parts)
        if choice == 3:  # a bracketed tag at either end
            tag = f"[{rng.choice(pieces)}]"
            return f"{tag} {text}" if rng.random() < 0.5 else f"{text} {tag}"
        if choice == 4:  # a -GROUP or an extension
            return text + rng.choice(
                ("-GRP", ".mkv", "-x264", "-", " [eztv]", ".nzb", "-Obfuscated")
            )
        if choice == 5:  # separators changed
            return text.replace(".", rng.choice(SEPARATORS))
        return text

    for _ in range(count):
        shape = rng.randrange(4)
        if shape == 0:
            name = mutate(rng.choice(names))
        elif shape == 1:  # the head of one name, the tail of another
            first, second = rng.choice(names), rng.choice(names)
            name = first[: rng.randrange(len(first) + 1)] + second[rng.randrange(len(second) + 1) :]
        elif shape == 2:  # real tokens spliced
            parts = [rng.choice(pieces) for _ in range(rng.randrange(1, 14))]
            name = rng.choice(SEPARATORS).join(parts)
        else:
            name = mutate(mutate(rng.choice(names)))
        yield name


def compare(
    names: list[str], new: Callable[[str], Any], old: Callable[[str], Any]
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    differences = []
    for name in names:
        got, want = fields(new(name)), fields(old(name))
        if got != want:
            differences.append((name, got, want))
    return differences


def expected_names(generated: int = 1_500) -> list[str]:
    """The names tests/usenet/data/release_names_expected.json holds, in its order."""
    seen: dict[str, None] = {}
    for name in [*corpus_names(), *strings_of_tests(), *generated_names(generated, seed=2025)]:
        seen.setdefault(name, None)
    return list(seen)


def write_expected() -> None:
    """The file from the working tree's parser: a change meant to change results writes it."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    rows = [[name, fields(parse_release_name(name))] for name in expected_names()]
    body = {
        "about": (
            "Every field (those not at their default) usenet.release_names.parse_release_name"
            " gives each name: the corpora's names, the string literals of"
            " tests/usenet/test_release_names.py and 1,500 generated names"
            " (bench/names_equivalence.py --write-expected). Rewrite it deliberately when a"
            " change to the parser means to change a result."
        ),
        "written_on": f"{commit} and the working tree's changes to it",
        "names": rows,
    }
    # One name a line, so a deliberate change reads as a diff of the names it changes.
    head = json.dumps({k: v for k, v in body.items() if k != "names"}, indent=1)
    lines = ",\n".join(json.dumps(row, separators=(",", ":")) for row in rows)
    EXPECTED.write_text(f'{head[:-2]},\n "names": [\n{lines}\n]}}\n')
    print(
        f"{len(rows)} names written to {EXPECTED.relative_to(ROOT)} (working tree on {commit[:12]})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref",
        default="main",
        help="git revision of the reference parser (worktree: the working tree's, interpreted)",
    )
    parser.add_argument("--generated", type=int, default=100_000, help="generated names")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--show", type=int, default=20, help="differences printed")
    parser.add_argument(
        "--speed",
        type=int,
        default=0,
        metavar="N",
        help="also time both parsers over the corpora, alternating, best of N passes (CPU time)",
    )
    parser.add_argument(
        "--write-expected",
        action="store_true",
        help=f"write {EXPECTED.name} from the working tree's parser",
    )
    args = parser.parse_args(argv)
    if args.write_expected:
        write_expected()
        return 0
    old = reference(args.ref).parse_release_name
    print(
        f"new: the working tree's parser, {'compiled' if COMPILED else 'interpreted'};"
        f" reference: {args.ref}'s, interpreted"
    )
    sets = {
        "corpora": corpus_names(),
        "test strings": strings_of_tests(),
        "generated": list(generated_names(args.generated, args.seed)),
    }
    failed = 0
    for label, names in sets.items():
        differences = compare(names, parse_release_name, old)
        failed += len(differences)
        print(f"{label:<13} {len(names):>7} names  {len(differences):>5} differ")
        for name, got, want in differences[: args.show]:
            print(f"  {name!r}")
            for key in sorted(set(got) | set(want)):
                if got.get(key) != want.get(key):
                    print(f"    {key}: {got.get(key)!r} (reference {want.get(key)!r})")
    if args.speed:
        speed(sets["corpora"], parse_release_name, old, args.speed)
    return 1 if failed else 0


def speed(
    names: list[str], new: Callable[[str], Any], old: Callable[[str], Any], passes: int
) -> None:
    """Names per second of each parser on this process's CPU time, best of `passes`
    passes each, the two alternating so the machine's load falls on both alike."""
    best = {"new": float("inf"), "reference": float("inf")}
    for _ in range(passes):
        for label, parse in (("new", new), ("reference", old)):
            start = time.process_time()
            for name in names:
                parse(name)
            best[label] = min(best[label], time.process_time() - start)
    rates = {label: len(names) / seconds for label, seconds in best.items()}
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"speed, {len(names)} names, best of {passes} (CPU time, load {load}):"
        f" new {rates['new']:,.0f}/s, reference {rates['reference']:,.0f}/s,"
        f" new / reference {rates['new'] / rates['reference']:.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
