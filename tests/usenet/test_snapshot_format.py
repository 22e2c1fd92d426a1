"""The snapshot format both sides read (usenet/snapshots.py): what belongs to a lane.

The next holder drops a restored file that does not belong to the lane (it
would report it under its own name); the coordinator refuses an upload holding
one. Both ask the same predicate, and a window's own snapshot always passes.
"""

from __future__ import annotations

import io
import json
import tracemalloc
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seed_node.aggregate import Window
from tests.support.overview_lines import over_line
from tests.support.snapshots import GZIP, file_entry, header, window_snapshot
from usenet.rules import RuleSet
from usenet.snapshots import (
    MAX_SNAPSHOT_LINE,
    GzipLines,
    SnapshotCheck,
    SnapshotError,
)

GROUP = "alt.binaries.test"
RULES = RuleSet(version=4, poster_exclude=("spammer",))
LANE = (1_000, 9_999)

GOOD_OPEN = file_entry(1_500, name="good.rar", parts=(1, 2))
GOOD_FRAGMENT = file_entry(1_600, name="part.rar", fragment=True)
FOREIGN = {
    "an article before the lane": file_entry(999, name="early.rar"),
    "a fragment after the lane": file_entry(20_000, name="late.rar", fragment=True),
    "a post that is not binary": file_entry(1_500, subject="just talk"),
    "a fragment that is not binary": file_entry(1_500, subject="more talk", fragment=True),
    "a total that is not its subject's": file_entry(
        1_500, name="odd.rar", total=9, subject='"odd.rar" yEnc (1/3)'
    ),
    "an excluded poster's fragment": file_entry(
        1_500, name="spam.rar", poster="spammer <s@x>", fragment=True
    ),
}


def snapshot_with(*files) -> bytes:
    return window_snapshot(GROUP, files, rules_version=RULES.version)


def restore(body: bytes) -> Window:
    return Window.restore(io.BytesIO(body), RULES, articles=LANE)


@pytest.mark.parametrize("case", sorted(FOREIGN))
def test_a_restored_file_that_is_not_the_lanes_is_dropped_and_the_rest_kept(case):
    window = restore(snapshot_with(GOOD_OPEN, FOREIGN[case], GOOD_FRAGMENT))
    assert (window.dropped, len(window)) == (1, 1)
    assert window.drop_reason is not None
    [fragment, still_open] = window.drain()  # the evicted fragment first, then the open file
    assert fragment == {k: v for k, v in GOOD_FRAGMENT.items() if k != "fragment"}
    assert still_open["segments"] == GOOD_OPEN["segments"]


@pytest.mark.parametrize("case", sorted(FOREIGN))
def test_the_coordinator_refuses_the_same_files(case):
    check = SnapshotCheck(GROUP, *LANE, rules_of={RULES.version: RULES}.__getitem__)
    with pytest.raises(SnapshotError, match=r"line 3: .* does not belong to the lane"):
        check.feed(snapshot_with(GOOD_OPEN, FOREIGN[case], GOOD_FRAGMENT))
        check.end()


def test_without_bounds_from_the_lease_no_article_is_foreign():
    window = Window.restore(io.BytesIO(snapshot_with(FOREIGN["a fragment after the lane"])), RULES)
    assert window.dropped == 0


subjects = st.sampled_from(
    ['"a.rar" yEnc (1/3)', '"a.rar" yEnc (2/3)', '"b" (1/2)', "chatter", '"c" yEnc (1/1)']
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1_000, 9_999), subjects, st.sampled_from(["p <p@x>", "spammer"])),
        max_size=40,
    ),
    st.integers(1, 5),
)
def test_a_windows_own_snapshot_always_passes_the_coordinators_check(posts, max_open):
    window = Window(RULES, GROUP, max_open=max_open)
    for article, subject, poster in posts:
        window.add_line(over_line(article, subject, poster=poster))
    # As the worker does: its snapshot follows a report, which takes the complete
    # files and the evicted fragments out (restored fragments are tested above).
    window.take_complete()
    window.take_fragments_before(0)
    spool = io.BytesIO()
    window.serialize(spool)
    check = SnapshotCheck(GROUP, *LANE, rules_of={RULES.version: RULES}.__getitem__)
    body = spool.getvalue()
    for start in range(0, len(body), 37):  # any cut of the stream reads the same
        check.feed(body[start : start + 37])
    check.end()
    assert restore(body).dropped == 0


@pytest.mark.slow
def test_a_gzip_bomb_is_stopped_at_the_first_long_line_in_bounded_memory():
    bomb = zlib.compress(b"x" * (200 << 20), 9)  # ~200 KB that inflate to 200 MB, one line
    lines = GzipLines()
    wrapped = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bomb[2:-4]  # as a gzip member
    with pytest.raises(SnapshotError, match=f"a line is over {MAX_SNAPSHOT_LINE} bytes"):
        for _ in lines.feed(wrapped):
            pass
    assert len(lines._pending) <= MAX_SNAPSHOT_LINE + (1 << 20)


def test_a_small_body_cannot_decompress_to_more_than_the_ratio_allows():
    # Short lines pass the line bound: 1 MiB of gzip would become ~1 GB of
    # lines, hours of checking in the coordinator. The ratio stops it early.
    packer = zlib.compressobj(9, zlib.DEFLATED, GZIP)
    block = b"{}\n" * (1 << 20)
    body = b"".join(packer.compress(block) for _ in range(100)) + packer.flush()
    assert len(body) < 1 << 20  # 300 MiB of lines
    lines = GzipLines()
    with pytest.raises(SnapshotError, match="over 256 times its compressed size"):
        for start in range(0, len(body), 1 << 12):
            for _ in lines.feed(body[start : start + (1 << 12)]):
                pass
    assert lines._total < (300 << 20) // 4  # stopped early, not at the end of the stream


def checked(body: bytes, chunk: int = 1 << 20, **bound: int) -> None:
    check = SnapshotCheck(GROUP, *LANE, {RULES.version: RULES}.__getitem__, **bound)
    for start in range(0, len(body), chunk):
        check.feed(body[start : start + chunk])
    check.end()


def test_the_coordinator_refuses_the_fragments_the_next_holder_refuses():
    # A snapshot the coordinator stores must not be one the next holder refuses
    # (and resets): both count with FileCount, fragments as well as open files.
    fragments = [file_entry(1_500 + n, name=f"f{n}.rar", fragment=True) for n in range(3)]
    body = window_snapshot(GROUP, fragments, max_open=2, rules_version=RULES.version)
    with pytest.raises(SnapshotError, match="more than 2 fragments"):
        Window.restore(io.BytesIO(body), RULES, max_open=2, articles=LANE)
    with pytest.raises(SnapshotError, match="line 4: it holds more than 2 fragments"):
        checked(body)


@pytest.mark.parametrize("fragment", [False, True])
def test_the_coordinators_own_bound_caps_what_a_header_claims(fragment):
    # The header's max_open is the sender's word: the coordinator's bound
    # (SNAPSHOT_MAX_OPEN) caps it, as a node's --max-open does on restore.
    files = [file_entry(1_500, name=f"f{n}.rar", fragment=fragment) for n in range(4)]
    body = window_snapshot(GROUP, files, max_open=10**9, rules_version=RULES.version)
    kind = "fragments" if fragment else "open files"
    with pytest.raises(SnapshotError, match=f"line 5: it holds more than 3 {kind}"):
        checked(body, max_open=3)
    with pytest.raises(SnapshotError, match=f"it holds more than 3 {kind}"):
        Window.restore(io.BytesIO(body), RULES, max_open=3, articles=LANE)
    checked(body, max_open=4)
    assert Window.restore(io.BytesIO(body), RULES, max_open=4, articles=LANE).dropped == 0


def test_one_line_within_the_line_bound_does_not_cost_many_times_its_size():
    # json.loads of "[[],[],...]" builds ~24 bytes of objects per byte of line
    # (a 32 MiB line cost ~770 MB), from a body gzip shrinks to KiB: the values
    # are counted before the line is parsed.
    line = b"[" + b"[]," * ((4 << 20) // 3) + b"[]]\n"
    packer = zlib.compressobj(9, zlib.DEFLATED, GZIP)
    head = json.dumps(header(GROUP, rules_version=RULES.version)).encode() + b"\n"
    body = packer.compress(head) + packer.compress(line) + packer.flush()
    assert len(body) < 64 << 10  # what the node sends
    tracemalloc.start()
    try:
        with pytest.raises(SnapshotError, match="line 2: a line holds over 501516 JSON values"):
            checked(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(line), f"peak {peak >> 20} MiB for a {len(line) >> 20} MiB line"


def test_a_file_of_the_most_segments_fits_the_line_bounds():
    # The bounds are derived from what one file may hold: 100,000 segments with
    # message-ids as long as real ones, a subject and a poster at their limits.
    total = 100_000
    entry = file_entry(1_000, name="n" * 960, total=total, parts=range(1, total + 1))
    entry["poster"] = "p" * 500
    entry["segments"] = [
        [
            part,
            1_000 + part % 9_000,
            f"<{part:012d}.abcdefghijklmnopqrstuv@ngPost.example>",
            750_000,
        ]
        for part in range(1, total + 1)
    ]
    line = json.dumps(entry, separators=(",", ":")).encode()
    assert len(line) < MAX_SNAPSHOT_LINE
    checked(window_snapshot(GROUP, [entry], level=1, rules_version=RULES.version))
