"""Release names read right, and how fast: usenet.release_names on a corpus of real names.

The corpus is tests/usenet/data/release_names.json: names from Sonarr's and
Radarr's parser test fixtures, with what those tools read from them (issue
25, "Measure"; bench/corpus/extract.py builds it). Scoring is
tests/support/name_corpus.py, the same code the goal tests use.

Prints, per source fixture: rows, then the share read right of category
(exact newznab id), top level (TV/Movies/other), episode (season, episodes,
absolute numbers, air date), year, resolution and tvsearch (a Sonarr-style
search by cleaned title, season and episode finds the name); each over the
rows whose fixture states it. Beside it, in the same run, the baseline: the category
rules every release gets today (DEFAULT_CATEGORY_RULES). Then speed on one
core (names per second on the process's CPU time, best of --repeat passes:
parse, by the module as installed, compiled by `make install` (setup.py),
and by its source interpreted, the two alternating; parse plus category,
beside the old rules), and
linearity: the time to parse names of 100 characters to 100 KB built from real names,
as a ratio against a normal name (a bounded parser cuts them: the ratio
stays near 1; an unbounded but linear one grows with the length, never faster).

Then the same tables for the held-out corpus,
tests/usenet/data/release_names_holdout.json: names from other parsers' tests
(guessit, parse-torrent-name; bench/corpus/extract_holdout.py builds it),
which the parser was not tuned on: how well its rules generalise.

Run: ``.venv/bin/python bench/bench_names.py [--repeat 20] [--json]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.name_corpus import (
    HOLDOUT,
    MEASURES,
    Score,
    category_decider,
    load,
    old_category,
    score,
    score_old_rules,
)
from tests.support.parsed_fields import interpreted
from usenet.release_names import COMPILED, parse_release_name

SIZES = (100, 1_000, 10_000, 100_000)
HEADERS = {
    "category": "cat",
    "top_level": "top",
    "episode": "S/E",
    "year": "year",
    "resolution": "res",
    "tvsearch": "tvsearch",
}


def _cell(right: int, counted: int) -> str:
    return f"{100 * right / counted:5.1f}% ({right}/{counted})" if counted else "-"


def print_table(title: str, result: Score, measures: tuple[str, ...]) -> None:
    print(f"\n{title}  [category by {result.decided_by}]")
    width = max(len(g.label) for g in [*result.groups, result.total])
    head = "".join(f"  {HEADERS[m]:>20}" for m in measures)
    print(f"{'source':<{width}}  {'rows':>5}{head}")
    for tally in [*result.groups, result.total]:
        cells = "".join(f"  {_cell(tally.right[m], tally.counted[m]):>20}" for m in measures)
        print(f"{tally.label:<{width}}  {tally.rows:>5}{cells}")


def rate(names: list[str], work: Callable[[str], object], repeat: int) -> float:
    """Names per second of `work` over `names`, best of `repeat` passes, on this
    process's CPU time (the machine is shared: time other processes take is not counted)."""
    return rates(names, {"work": work}, repeat)["work"]


def rates(
    names: list[str], works: dict[str, Callable[[str], object]], repeat: int
) -> dict[str, float]:
    """rate() of several works, their passes alternating so the machine's load falls on
    each alike."""
    best = dict.fromkeys(works, float("inf"))
    for _ in range(repeat):
        for label, work in works.items():
            start = time.process_time()
            for name in names:
                work(name)
            best[label] = min(best[label], time.process_time() - start)
    return {label: len(names) / seconds for label, seconds in best.items()}


def long_names(names: list[str], size: int, rng: random.Random) -> dict[str, str]:
    """Names of `size` characters made of real names, several shapes a poster could send."""

    def fill(piece: Callable[[], str], sep: str) -> str:
        parts, length = [], 0
        while length < size:
            part = piece()
            parts.append(part)
            length += len(part) + len(sep)
        return sep.join(parts)[:size]

    def mutated() -> str:
        # A real name with its digits moved, so no two pieces are alike.
        name = rng.choice(names)
        return "".join(rng.choice("0123456789") if c in "0123456789" else c for c in name)

    no_separators = "".join(c for c in rng.choice(names) if c.isalnum()) or "x"
    return {
        "names joined by dots": fill(mutated, "."),
        "names in brackets": fill(lambda: f"[{mutated()}]", " "),
        "one token": fill(lambda: no_separators, ""),
        "SxxEyy tokens": fill(lambda: f"S{rng.randrange(100):02}E{rng.randrange(100):02}", "."),
        "digits": fill(lambda: str(rng.randrange(10**9)), ""),
    }


def parse_seconds(name: str, repeat: int) -> float:
    """Best CPU time of one parse of `name` (each timing long enough to read)."""
    loops = 1
    while True:
        start = time.process_time()
        for _ in range(loops):
            parse_release_name(name)
        if time.process_time() - start > 0.01 or loops >= 1 << 16:
            break
        loops *= 4
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(loops):
            parse_release_name(name)
        best = min(best, time.process_time() - start)
    return best / loops


def linearity(names: list[str], repeat: int, sizes: tuple[int, ...]) -> dict[str, Any]:
    """Time to parse long names, as a ratio against the corpus' median-length name."""
    rng = random.Random(25)
    normal = sorted(names, key=len)[len(names) // 2]
    base = parse_seconds(normal, repeat)
    out: dict[str, Any] = {"normal_length": len(normal), "normal_seconds": base, "sizes": []}
    for size in sizes:
        shapes = {
            shape: parse_seconds(name, max(1, repeat // 4))
            for shape, name in long_names(names, size, rng).items()
        }
        worst = max(shapes, key=lambda s: shapes[s])
        out["sizes"].append(
            {
                "size": size,
                "worst_shape": worst,
                "seconds": shapes[worst],
                "ratio": shapes[worst] / base,
                "length_ratio": size / len(normal),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="timed passes; the best counts")
    parser.add_argument("--max-size", type=int, default=SIZES[-1], help="longest name built")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)

    names = [row["name"] for row in load()["names"]]
    new, old = score(), score_old_rules()
    held, held_old = score(corpus=HOLDOUT), score_old_rules(corpus=HOLDOUT)
    decided_by, decide = category_decider()

    def full(name: str) -> int:
        return decide(name, parse_release_name(name))

    # The module is compiled where `make install` built it (setup.py); its source, interpreted,
    # is timed beside it, the passes alternating.
    parsers = rates(
        names,
        {"module": parse_release_name, "interpreted": interpreted().parse_release_name},
        args.repeat,
    )
    speed = {
        "names": len(names),
        "compiled": COMPILED,
        "parse_per_second": parsers["module"],
        "interpreted_parse_per_second": parsers["interpreted"],
        "parse_and_category_per_second": rate(names, full, args.repeat),
        "old_rules_per_second": rate(names, old_category, args.repeat),
    }
    speed["new_vs_old"] = speed["parse_and_category_per_second"] / speed["old_rules_per_second"]
    linear = linearity(names, args.repeat, tuple(s for s in SIZES if s <= args.max_size))

    if args.json:
        json.dump(
            {
                "new": new.as_json(),
                "old": old.as_json(),
                "holdout": held.as_json(),
                "holdout_old": held_old.as_json(),
                "speed": speed,
                "linearity": linear,
            },
            sys.stdout,
            indent=1,
        )
        print()
        return 0

    print(f"{len(names)} names (tests/usenet/data/release_names.json)")
    print_table("usenet.release_names", new, MEASURES)
    print_table("baseline: the old category rules", old, ("category", "top_level"))
    print("\nold vs new, totals:")
    for measure in ("category", "top_level"):
        before, after = old.total.share(measure), new.total.share(measure)
        if before is not None and after is not None:
            print(f"  {measure:<10} {100 * before:5.1f}% -> {100 * after:5.1f}%")
    print(f"\n{len(load(HOLDOUT)['names'])} held-out names (tests/usenet/data/{HOLDOUT.name}):")
    print("other parsers' test names, which the parser was not tuned on")
    print_table("usenet.release_names, held out", held, MEASURES)
    print_table("baseline: the old category rules, held out", held_old, ("category", "top_level"))
    print(f"\nspeed on one core (CPU time), best of {args.repeat} passes over {len(names)} names,")
    print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}:")
    module = "compiled" if COMPILED else "interpreted"
    print(f"  parse_release_name, {module:<11} {speed['parse_per_second']:>9,.0f} names/s")
    print(f"  its source, interpreted      {speed['interpreted_parse_per_second']:>11,.0f} names/s")
    print(f"  parse + category ({decided_by.split()[0]})")
    print(
        f"                               {speed['parse_and_category_per_second']:>11,.0f} names/s"
    )
    print(f"  old rules (regex categorize) {speed['old_rules_per_second']:>11,.0f} names/s")
    print(f"  new / old                    {speed['new_vs_old']:>11.2f}x")
    normal = linear["normal_length"]
    print(f"\nlinearity: parse time of a long name / a normal name ({normal} chars,")
    print(f"  {linear['normal_seconds'] * 1e6:.1f} us); worst of several shapes per size:")
    for item in linear["sizes"]:
        print(
            f"  {item['size']:>7,} chars  {item['seconds'] * 1e6:>9.1f} us"
            f"  ratio {item['ratio']:>8.1f}  (length ratio {item['length_ratio']:,.0f})"
            f"  [{item['worst_shape']}]"
        )
    ratios = [i["ratio"] for i in linear["sizes"]]
    if len(ratios) > 1:
        steps = [b / a for a, b in itertools.pairwise(ratios)]
        print(f"  growth per 10x length: {', '.join(f'{s:.1f}x' for s in steps)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
