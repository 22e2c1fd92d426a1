"""Review 3: what the coordinator's streaming check (usenet.snapshots.SnapshotCheck)
lets through, measured against what it promises (bounded memory) and against
what the next holder (Window.restore) accepts. Each test fails on dead99b."""

from __future__ import annotations

import io
import json
import tracemalloc
import zlib

import pytest

from seed_node.aggregate import Window
from tests.support.snapshots import GZIP, file_entry, header, window_snapshot
from usenet.rules import RuleSet
from usenet.snapshots import SnapshotCheck, SnapshotError

GROUP = "alt.binaries.test"
RULES = RuleSet.default()
LANE = (1_000, 9_999)


def check(body: bytes, chunk: int = 1 << 20) -> None:
    checker = SnapshotCheck(GROUP, *LANE, lambda version: RULES)
    for i in range(0, len(body), chunk):
        checker.feed(body[i : i + chunk])
    checker.end()


def test_the_check_refuses_what_the_next_holder_refuses_fragments_past_max_open():
    # Issue 12(a): a snapshot the coordinator stores must not be one the next
    # holder refuses (and resets). The agent refuses more fragments than its
    # max_open; the coordinator counts open files only, fragments not at all.
    fragments = [file_entry(1_500 + n, name=f"f{n}.rar", fragment=True) for n in range(3)]
    body = window_snapshot(GROUP, fragments, max_open=2)
    with pytest.raises(SnapshotError, match="more than 2 fragments"):
        Window.restore(io.BytesIO(body), RULES, max_open=2, articles=LANE)
    with pytest.raises(SnapshotError):  # fails: the check accepts it (a 204)
        check(body)


def test_one_line_within_the_line_bound_does_not_cost_many_times_its_size():
    # "A snapshot is read in bounded memory whatever it holds": the bound is a
    # 32 MiB line, but json.loads of "[[],[],...]" builds ~24 bytes of objects
    # per byte of line (a 32 MiB line: ~770 MB), from a body gzip shrinks to KiB.
    line = b"[" + b"[]," * ((4 << 20) // 3) + b"[]]\n"
    packer = zlib.compressobj(9, zlib.DEFLATED, GZIP)
    head = json.dumps(header(GROUP)).encode() + b"\n"
    body = packer.compress(head) + packer.compress(line) + packer.flush()
    assert len(body) < 64 << 10  # what the node sends
    tracemalloc.start()
    try:
        with pytest.raises(SnapshotError):
            check(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(line), f"peak {peak >> 20} MiB for a {len(line) >> 20} MiB line"
