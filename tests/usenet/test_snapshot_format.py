"""The snapshot format both sides read (usenet/snapshots.py): what belongs to a lane.

The next holder drops a restored file that does not belong to the lane (it
would report it under its own name); the coordinator refuses an upload holding
one. Both ask the same predicate, and a window's own snapshot always passes.
"""

from __future__ import annotations

import io
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seed_node.aggregate import Window
from tests.support.overview_lines import over_line
from tests.support.snapshots import file_entry, window_snapshot
from usenet.rules import RuleSet
from usenet.snapshots import GzipLines, SnapshotCheck, SnapshotError

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
    window.take_complete()  # evicted fragments stay: the format carries them too
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
    with pytest.raises(SnapshotError, match="a line is over 33554432 bytes"):
        for _ in lines.feed(wrapped):
            pass
    assert len(lines._pending) <= (32 << 20) + (1 << 20)
