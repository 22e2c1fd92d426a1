"""Helpers several benchmarks share: their sizes' options, SQL on Django's connection,
groups to load, a logged-in staff client, py-spy's recording and its summary."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOAD_GROUPS = (
    "INSERT INTO news_group (name, active, priority, created_at)"
    " SELECT %(prefix)s || g, true, 100, now() FROM generate_series(1, %(count)s) AS g"
)


def sql(statement: str, params: Any = None) -> Any:
    """One statement on Django's connection; its rows when it returns any."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def load_groups(prefix: str, count: int) -> None:
    """`count` active groups of priority 100, named `prefix` followed by 1..count."""
    sql(LOAD_GROUPS, {"prefix": prefix, "count": count})


def size_parser(doc: str, **sizes: int) -> argparse.ArgumentParser:
    """A bench's options: the first line of its docstring as description, then one
    integer option a size (`range_size=10_000` is --range-size, 10,000 by default)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in sizes.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    return parser


def staff_client() -> Any:
    """A Django test client logged in as the bench's superuser (created on first use)."""
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    return client


def py_spy(output: Path, pid: int, *options: str) -> subprocess.Popen[bytes]:
    """py-spy recording `pid` into `output` as raw (collapsed) stacks, not stopping the
    process; `options` as py-spy's (--rate, --duration, --subprocesses, --idle …).
    It writes what it sampled when its duration ends or on SIGINT."""
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        raise SystemExit("profiling needs py-spy: .venv/bin/pip install py-spy")
    command = [spy, "record", "--format", "raw", "--nonblocking", "--output", str(output)]
    return subprocess.Popen(
        [*command, "--pid", str(pid), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def flame_summary(
    raw: str, select: Callable[[list[str]], bool] = lambda _frames: True, top: int = 20
) -> str:
    """From py-spy's raw stacks: the functions by the share of the selected samples
    they are on the stack of (inclusive; those on nearly every sample, the wrapping
    all of them share, left out), and by the share where they are the innermost
    (self), as Markdown tables. A frame's line number is dropped (a function counts
    once however many of its lines were sampled). `select` keeps a sample by its
    frames, outermost first (e.g. threads serving a request). Recorded without
    --idle, py-spy leaves out a thread the kernel has asleep (psycopg blocked on
    PostgreSQL's answer, a read from the news server): a share is of the time
    threads were running or runnable. Read the shares beside CPU figures."""
    from usenet.numbers import ascii_digits

    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not ascii_digits(count):
            continue
        # --subprocesses puts a process frame (its pid and whole command line) first
        frames = [function(f) for f in stack.split(";") if not f.startswith("process ")]
        if not select(frames):
            continue
        n = int(count)
        total += n
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
    if not total:
        return "(no samples selected)"
    lines = [f"{total:,} samples", "", "| inclusive | function |", "|---:|---|"]
    below = [(f, n) for f, n in inclusive.most_common() if n < 0.97 * total]
    lines += [f"| {n / total:5.1%} | `{f}` |" for f, n in below[:top]]
    lines += ["", "| self | function |", "|---:|---|"]
    lines += [f"| {n / total:5.1%} | `{f}` |" for f, n in own.most_common(top)]
    return "\n".join(lines)


def function(frame: str) -> str:
    """A py-spy frame without its line: `name (path:line)` becomes `name (path)`."""
    from usenet.numbers import ascii_digits

    name, _, place = frame.partition(" (")
    where, colon, line = place.rstrip(")").rpartition(":")
    return f"{name} ({where})" if colon and ascii_digits(line) else frame
