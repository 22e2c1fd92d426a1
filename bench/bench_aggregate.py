"""Throughput of the node agent's hot path: parse_over_line + Window.add + take_complete.

Real-shaped generated overview lines, timed on one core beside a bare
``line.split(b"\t")`` (docs/performance.md, "Parse and aggregate").

Run: ``.venv/bin/python bench/bench_aggregate.py [--lines 1000000]``
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
from email.utils import formatdate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seed_node.aggregate import Window
from usenet.rules import RuleSet

GROUP = "alt.binaries.test"
BATCH = 10_000  # lines between take_complete calls, about a batch's worth
POSTERS = [
    "Anonymous <anonymous@example.com>",
    "poster <poster@powerpost.local>",
    "Yenc@power-post.org (Yenc-PP-GUI)",
    "ngPost <ngpost@ngPost.com>",
    "Bob <bob@example.net>",
    "JBinUp.local <JBinUp.local@JBinUp.local>",
    "Uploader <up@nyuu.invalid>",
    "d3f7a1 <d3f7a1@c0ffee.example>",
]
WORDS = "Some Linux Distro Archive Backup Photos Music Album Concert Live Remastered".split()


def release_files(rng: random.Random) -> list[tuple[str, int]]:
    """(subject template, segment count) for the files of one release."""
    stem = ".".join(rng.sample(WORDS, 3)) + f".{rng.randint(1990, 2024)}-{rng.choice('ABCDEFG')}"
    if rng.random() < 0.3:
        stem = "".join(rng.choices(string.ascii_lowercase + string.digits, k=24))  # obfuscated
    volumes = rng.randint(5, 30)
    names = [f"{stem}.part{n:02d}.rar" for n in range(1, volumes + 1)]
    names += [f"{stem}.par2"] + [f"{stem}.vol{n:02d}+{n + 1:02d}.par2" for n in range(0, 6, 2)]
    count = len(names)
    styles = [
        lambda i, name: f'[{i:02d}/{count:02d}] - "{name}" yEnc ({{part}}/{{total}})',
        lambda i, name: f'{stem} [{i}/{count}] - "{name}" yEnc ({{part}}/{{total}}) 1.52 GB',
        lambda i, name: f'({i}/{count}) "{name}" - 1.52 GB - yEnc [{{part}}/{{total}}]',
        lambda i, name: f"{name} ({{part}}/{{total}})",
    ]
    style = rng.choice(styles)
    return [(style(i, name), rng.randint(20, 100)) for i, name in enumerate(names, 1)]


def generate_lines(count: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    uploads: list[list[tuple[str, str, int, int]]] = []  # per uploader: pending posts
    lines: list[bytes] = []
    article = 1_000_000
    clock = 1_700_000_000.0
    while len(lines) < count:
        while len(uploads) < 8:
            poster = rng.choice(POSTERS)
            posts = []
            for template, total in release_files(rng):
                parts = list(range(1, total + 1))
                if rng.random() < 0.1:  # some clients post connections out of order
                    rng.shuffle(parts)
                posts.extend((template, poster, part, total) for part in parts)
            uploads.append(posts)
        clock += rng.random() * 0.2
        date = formatdate(int(clock), usegmt=False)
        if rng.random() < 0.03:
            subject, poster = f"Re: {' '.join(rng.sample(WORDS, 4))}?", rng.choice(POSTERS)
            size = rng.randint(800, 4000)
        else:
            upload = rng.choice(uploads)
            template, poster, part, total = upload.pop(0)
            if not upload:
                uploads.remove(upload)
            subject = template.format(part=part, total=total)
            size = rng.randint(730_000, 800_000) if part < total else rng.randint(1000, 730_000)
        token = "".join(rng.choices(string.ascii_letters + string.digits, k=22))
        message_id = f"<{token}@{rng.choice(('ngPost.com', 'powerpost.local', 'nyuu'))}>"
        if rng.random() < 0.0005:
            lines.append(f"{article}\tbroken line without fields".encode())
        else:
            lines.append(
                f"{article}\t{subject}\t{poster}\t{date}\t{message_id}\t\t{size}\t{size // 128}"
                f"\tXref: news.example.com {GROUP}:{article}\r\n".encode()
            )
        article += 1
    return lines


def bench_baseline(lines: list[bytes]) -> float:
    start = time.perf_counter()
    for line in lines:
        line.split(b"\t")
    return time.perf_counter() - start


def bench_window(lines: list[bytes]) -> tuple[float, Window, int, int]:
    window = Window(RuleSet.default(), GROUP)
    complete = fragments = 0
    start = time.perf_counter()
    for offset in range(0, len(lines), BATCH):
        batch = lines[offset : offset + BATCH]
        window.add_lines(batch)
        complete += len(window.take_complete())
        # A file quiet for 50,000 articles has left this window, as a real node would judge.
        first = int(batch[0].split(b"\t", 1)[0])
        fragments += len(window.take_fragments_before(first - 50_000))
    complete += len(window.take_complete())
    fragments += len(window.drain())
    return time.perf_counter() - start, window, complete, fragments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()

    lines = generate_lines(args.lines)
    size = sum(map(len, lines))
    print(f"{len(lines):,} overview lines, {size / len(lines):.0f} bytes each on average")
    baseline = min(bench_baseline(lines) for _ in range(args.repeat))
    runs = [bench_window(lines) for _ in range(args.repeat)]
    elapsed, window, complete, fragments = min(runs, key=lambda run: run[0])
    counters = window.counters()
    print(f"files: {complete:,} complete, {fragments:,} fragments; counters: {counters}")
    baseline_rate = len(lines) / baseline
    rate = len(lines) / elapsed
    print(f"baseline  split(b'\\t') only:         {baseline_rate:12,.0f} lines/s")
    print(f"end to end parse + add + take:      {rate:12,.0f} lines/s")
    print(f"ratio end to end / baseline:        {rate / baseline_rate:12.3f}")


if __name__ == "__main__":
    main()
