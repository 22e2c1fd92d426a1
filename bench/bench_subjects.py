"""Cost of reading hostile subjects: pathological runs of growing length beside a plain one.

A run of ``-``, space, ``|``, ``:`` or ``,`` that does not reach the end of the
subject made the old default patterns backtrack quadratically. Each subject is
read under the default rule set (RE2, usenet/linear.py) with the shape cache
cleared, so every call parses; the ratios are against a plain subject measured
in the same run, and must grow linearly with the length (x2 per doubling).
``--old`` also times the pre-RE2 default patterns under Python's ``re``, for
comparison (they grow x4 per doubling). ``--pipeline N`` times the agent's
parse + aggregate loop (bench_aggregate) on N generated lines under RE2 and
under the old patterns, interleaved in this one process so that a busy machine
weighs on both alike. docs/performance.md, "Subject rules in linear time".

Run: ``.venv/bin/python bench/bench_subjects.py [--old] [--pipeline 200000]``
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_aggregate import GROUP, generate_lines

from seed_node.aggregate import Window
from usenet.rules import RuleSet, SegmentCounter, SubjectShape

PLAIN = '[01/12] - "name.part01.rar" yEnc (1/37)'
RUNS = ["-", " ", "|", ":", ","]
LENGTHS = [1000, 2000, 4000, 8000]

# The default patterns before RE2, as Python's re ran them (migration 0009 names them).
_OLD_SEGMENT = re.compile(
    r"(?P<_head>.*)(?:[(\[]\s*(?P<part>\d{1,6})\s*/\s*(?P<total>\d{1,6})\s*[)\]])(?P<_tail>.*)",
    re.DOTALL,
)
_OLD_COUNTERS = [
    re.compile(r"\[\s*(?P<index>\d{1,5})\s*/\s*(?P<count>\d{1,5})\s*\]"),
    re.compile(r"\(\s*(?P<index>\d{1,5})\s*/\s*(?P<count>\d{1,5})\s*\)"),
    re.compile(r"(?i)\bfile\s+(?P<index>\d{1,5})\s+of\s+(?P<count>\d{1,5})\b"),
    re.compile(r"(?i)\b(?P<index>\d{1,5})\s+of\s+(?P<count>\d{1,5})\b"),
]
_OLD_STRIP = [
    re.compile(r"(?i)\byenc\b"),
    re.compile(r"(?i)\b\d+(?:[.,]\d+)?\s*(?:[kmgt]i?b|bytes)\b"),
    re.compile(r"^[\s\-|:,]+|[\s\-|:,]+$"),
]
_OLD_FILENAME = [
    re.compile(r'"(?P<name>[^"]+)"'),
    re.compile(
        r"(?<![\w.])(?P<name>(?=[\w.+~-]*[A-Za-z])\w[\w.+~-]*\.(?:[A-Za-z][A-Za-z0-9]{1,4}|\d{3}))"
        r"(?![\w.])"
    ),
]


def old_parse(subject: str) -> object:
    """What RuleSet.parse_subject did with the old defaults (no cache)."""
    match = _OLD_SEGMENT.match(subject)
    if match is None:
        return None
    rest = f"{match['_head']} {match['_tail']}" if match["_tail"] else match["_head"]
    for pattern in _OLD_COUNTERS:
        if pattern.search(rest):
            break
    key = rest
    for pattern in _OLD_STRIP:
        key = pattern.sub(" ", key)
    for pattern in _OLD_FILENAME:
        if pattern.search(rest):
            break
    return " ".join(key.split())


class OldRules:
    """The old default patterns under re, shaped as the Window calls a RuleSet."""

    version = 1

    def __init__(self) -> None:
        self._shapes: dict[str, SubjectShape] = {}

    def split_segment_counter(self, subject: str) -> SegmentCounter | None:
        match = _OLD_SEGMENT.match(subject)
        if match is None:
            return None
        head, part, total, tail = match.group("_head", "part", "total", "_tail")
        if not 1 <= int(part) <= int(total) <= 100_000:
            return None
        return SegmentCounter(head, int(part), int(total), tail)

    def excludes_poster(self, poster: str) -> bool:
        return False

    def shape(self, head: str, tail: str) -> SubjectShape:
        rest = f"{head} {tail}" if tail else head
        shape = self._shapes.get(rest)
        if shape is None:
            key = old_parse(f"{rest} (1/1)")
            shape = self._shapes[rest] = SubjectShape(str(key), "", None, None)
        return shape


def pipeline(lines: list[bytes], rules: object) -> float:
    """Lines per second through Window.add_lines + take_complete under `rules`."""
    window = Window(rules, GROUP)  # type: ignore[arg-type]
    start = time.perf_counter()
    for offset in range(0, len(lines), 10_000):
        window.add_lines(lines[offset : offset + 10_000])
        window.take_complete()
    return len(lines) / (time.perf_counter() - start)


def compare_pipelines(count: int, repeat: int = 3) -> None:
    lines = generate_lines(count)
    new, old = [], []
    for _ in range(repeat):
        new.append(pipeline(lines, RuleSet.default()))
        old.append(pipeline(lines, OldRules()))
    print(f"\nagent parse + aggregate, {count:,} generated lines, best of {repeat} interleaved:")
    print(f"  old patterns under re:  {max(old):>10,.0f} lines/s")
    print(f"  default rules under RE2:{max(new):>10,.0f} lines/s  ({max(new) / max(old):.2f}x)")


def new_parse(rules: RuleSet) -> Callable[[str], object]:
    def parse(subject: str) -> object:
        rules._shapes.clear()  # every call parses, as for a subject never seen
        return rules.parse_subject(subject)

    return parse


def per_call(parse: Callable[[str], object], subject: str, budget: float = 0.2) -> float:
    """Seconds per call: the best of a few timed loops of at least `budget` seconds."""
    best = float("inf")
    for _ in range(3):
        calls, start = 0, time.perf_counter()
        while True:
            parse(subject)
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget / 3:
                break
        best = min(best, elapsed / calls)
    return best


def table(name: str, parse: Callable[[str], object], lengths: list[int]) -> None:
    plain = per_call(parse, PLAIN)
    print(f"\n{name}: plain subject ({len(PLAIN)} chars) {plain * 1e6:,.1f} us")
    print(f"{'run':>5} " + " ".join(f"{n:>16,}" for n in lengths) + "   (x plain)")
    for run in RUNS:
        cells = []
        for length in lengths:
            seconds = per_call(parse, f"a{run * length}b.rar (1/2)")
            cells.append(f"{seconds * 1e3:8.3f}ms {seconds / plain:5.0f}x")
        print(f"{run!r:>5} " + " ".join(f"{cell:>16}" for cell in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", action="store_true", help="also time the old re patterns")
    parser.add_argument("--old-max", type=int, default=4000, help="longest run for --old")
    parser.add_argument("--pipeline", type=int, default=0, help="lines for the pipeline test")
    args = parser.parse_args()
    if args.pipeline:
        compare_pipelines(args.pipeline)
    table("default rules under RE2", new_parse(RuleSet.default()), LENGTHS)
    if args.old:
        lengths = [n for n in LENGTHS if n <= args.old_max]
        table("old default patterns under re (backtracking)", old_parse, lengths)


if __name__ == "__main__":
    main()
