"""A small filesystem of its own (tmpfs) to fill up: what a full disk does to uploads.

Mounting needs root (CI runs as root); elsewhere the tests that need one skip,
saying why. The mount is always taken down again, even when the test fails.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

NEED_ROOT = "a small disk is a tmpfs mount, which needs root (CI runs the suite as root)"


@contextmanager
def small_disk(directory: Path, size: str) -> Iterator[Path]:
    """`directory`, made and mounted as a tmpfs of `size` (e.g. "64k") until the block ends."""
    if os.geteuid() != 0:
        pytest.skip(NEED_ROOT)
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(directory)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    try:
        yield directory
    finally:
        subprocess.run(
            ["umount", "-l", str(directory)], check=True, capture_output=True, timeout=30
        )


def fill(directory: Path, name: str = "filler") -> Path:
    """Write to a file until the filesystem is full (again: it appends); returns it.

    Remove it to free the space. A file removed meanwhile (a failed upload's
    part, a snapshot replaced) frees space again: call it again to take that too.
    """
    filler = directory / name
    chunk = b"\0" * 4096
    with suppress(OSError), filler.open("ab", buffering=0) as out:
        while True:
            out.write(chunk)
    return filler
