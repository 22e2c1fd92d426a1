"""An upload is stored only if it is a snapshot of its lane: the format, the group,
the rule set, and files of binary posts at the lane's articles (usenet/snapshots.py).

Anything else is a 400 that names the fault; the old snapshot stays, served as
it was, and no `.part` is left. The check runs while the body streams, so a
chunked upload is refused the same way.
"""

from __future__ import annotations

import gzip
import json
from datetime import timedelta

import pytest
from django.db.models.functions import Now

from core.errors import Invalid
from leases.models import GroupLane
from tests.leases.test_snapshots import RANGE_START, get, held_lane, put, snap, store
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lease_lane, next_range
from tests.support.snapshots import file_entry, gzipped, header, lines_of, window_snapshot

pytestmark = pytest.mark.django_db(transaction=True)

GROUP = "alt.binaries.checked"
INSIDE = RANGE_START + 10  # an article of the lane (its range is 1,000..9,999)


def body(*files, **head):
    return window_snapshot(GROUP, files, **head)


def raw(*lines: bytes) -> bytes:
    return gzip.compress(b"".join(lines))


HEAD = json.dumps(header(GROUP)).encode() + b"\n"

REFUSED = {
    "not gzip": (b"these bytes are no snapshot", "not a readable gzip stream"),
    "gzip cut short": (body(file_entry(INSIDE))[:-12], "ends inside a gzip member"),
    "gzip then garbage": (body() + b"garbage", "not a readable gzip stream"),
    "no header": (raw(b"[1, 2]\n"), "line 1: it has no header line"),
    "another format": (body(format=2), "its format 2 is not 1"),
    "another group": (body(group="alt.binaries.other"), "is of 'alt.binaries.other'"),
    "an unknown rule set": (body(rules_version=7), "rule set version 7 was never published"),
    "a line that is not JSON": (raw(HEAD, b"{nope\n"), "line 2: a line is not JSON"),
    # Nested past the JSON parser's recursion limit: a 400, never a 500.
    "a line nested too deep": (raw(HEAD, b"[" * 100_000 + b"\n"), "line 2: a line is not JSON"),
    "a malformed file": (body(file_entry(INSIDE, segments="x")), "missing or out-of-range"),
    "an article before the lane": (
        body(file_entry(RANGE_START - 1)),
        "has article 999, outside the lane's articles 1000..9999",
    ),
    "a fragment after the lane": (
        body(file_entry(INSIDE), file_entry(50_000, name="b.rar", fragment=True)),
        "line 3: the file '\"b.rar\" yEnc (1/3)' has article 50000, outside",
    ),
    "a post that is not binary": (
        body(file_entry(INSIDE, subject="hello there")),
        "'hello there' is not a binary post under rule set 1",
    ),
    "a total that is not its subject's": (
        body(file_entry(INSIDE, total=5, subject='"a.rar" yEnc (1/3)')),
        "has 3 parts, not its total 5",
    ),
    "more open files than its max_open": (
        body(*(file_entry(INSIDE, name=f"f{n}.rar") for n in range(3)), max_open=2),
        "line 4: it holds more than 2 open files",
    ),
    "more fragments than its max_open": (
        body(*(file_entry(INSIDE, name=f"f{n}.rar", fragment=True) for n in range(3)), max_open=2),
        "line 4: it holds more than 2 fragments",
    ),
    "a line over 16 MiB": (
        raw(HEAD, b'"' + b"x" * (17 << 20) + b'"\n'),
        "a line is over 16777216 bytes",
    ),
    "a line of too many values": (
        raw(HEAD, b"[" + b"0," * 600_000 + b"0]\n"),
        "line 2: a line holds over 501516 JSON values",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_body_that_is_not_a_snapshot_of_the_lane_is_a_400_and_keeps_the_old_one(
    node_client, snapshot_dir, case
):
    node, lease = held_lane(node_client, name=GROUP)
    good = snap(lease, 1, size=5_000)
    assert put(node, lease, good, next_id=1200).status_code == 204
    bad, cause = REFUSED[case]
    response = put(node, lease, bad, next_id=1300)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid"
    detail = response.json()["detail"]
    assert detail.startswith("The snapshot cannot be stored: ")
    assert cause in detail
    assert "the lane keeps its last snapshot" in detail
    served = get(node, lease)
    assert served["X-Snapshot-Next"] == "1200"
    assert b"".join(served.streaming_content) == good
    row = GroupLane.objects.get(group_id=lease["group"]["id"], lane="history")
    assert (row.snapshot_next, row.snapshot_size) == (1200, len(good))
    assert not list(snapshot_dir.glob("*.part"))


@pytest.mark.parametrize("fragment", [False, True])
def test_the_coordinator_caps_open_files_and_fragments_whatever_the_header_claims(
    node_client, snapshot_dir, settings, fragment
):
    node, lease = held_lane(node_client, name=GROUP)
    settings.SNAPSHOT_MAX_OPEN = 2
    files = [file_entry(INSIDE, name=f"f{n}.rar", fragment=fragment) for n in range(3)]
    response = put(node, lease, body(*files, max_open=10**9), next_id=1300)
    assert response.status_code == 400
    kind = "fragments" if fragment else "open files"
    assert f"line 4: it holds more than 2 {kind}" in response.json()["detail"]
    assert put(node, lease, body(*files[:2], max_open=10**9), next_id=1300).status_code == 204


@pytest.mark.slow
def test_a_chunked_upload_is_checked_as_it_streams(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name=GROUP)
    stored = body(file_entry(INSIDE), file_entry(INSIDE + 5, name="b.rar", parts=(2, 3)))
    # Cut anywhere, even inside a line or the gzip header, the body reads the same.
    assert store(node, lease, [stored[:7], stored[7:40], stored[40:]], 1500) == len(stored)
    foreign = body(file_entry(INSIDE), file_entry(RANGE_START - 500, name="c.rar"))
    with pytest.raises(Invalid, match=r"line 3: .* has article 500, outside"):
        store(node, lease, [foreign[:30], foreign[30:]], 1600)
    assert b"".join(get(node, lease).streaming_content) == stored
    assert not list(snapshot_dir.glob("*.part"))


@pytest.mark.slow
def test_concatenated_gzip_members_read_as_one_snapshot(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name=GROUP)
    lines = list(lines_of(header(GROUP), [file_entry(INSIDE), file_entry(INSIDE, name="b.rar")]))
    stored = gzipped(lines[:2]) + gzipped(lines[2:])
    assert put(node, lease, stored, next_id=1700).status_code == 204


def test_only_articles_the_lane_has_handed_out_fit_on_both_ends(node_client, snapshot_dir):
    # The lane's ranges run 1,000..29,999, but a range lease read the first and
    # the lane's `next` has handed out only the second: a file ahead of the
    # window (it would win against the real post later, the lower article
    # wins) or behind it is no window's. It used to be the lane's whole span.
    group = GroupFactory(name=GROUP)
    SeedRangeFactory(group=group, start_id=1_000, end_id=9_999, status="done", next_id=10_000)
    SeedRangeFactory(group=group, start_id=10_000, end_id=19_999)
    SeedRangeFactory(group=group, start_id=20_000, end_id=29_999)
    node = node_client()
    lease = lease_lane(node)["lease"]
    assert next_range(node, lease)["start"] == 10_000
    for article in (9_999, 20_000):
        response = put(node, lease, body(file_entry(article)), next_id=10_500)
        assert response.status_code == 400, article
        assert (
            f"article {article}, outside the lane's articles 10000..19999"
            in (response.json()["detail"])
        )
    assert put(node, lease, body(file_entry(19_999)), next_id=10_500).status_code == 204
    # The next holder is told the same span, and drops what lies outside it.
    GroupLane.objects.filter(group=group).update(heartbeat_at=Now() - timedelta(days=1))
    taker = node_client()
    offer = lease_lane(taker)["lease"]
    assert (offer["snapshot"]["first"], offer["snapshot"]["last"]) == (10_000, 19_999)


def test_a_lane_that_has_handed_nothing_out_takes_only_an_empty_window(node_client, snapshot_dir):
    group = GroupFactory(name=GROUP)
    SeedRangeFactory(group=group, start_id=1_000, end_id=9_999)
    node = node_client()
    lease = lease_lane(node)["lease"]
    response = put(node, lease, body(file_entry(INSIDE)), next_id=1_000)
    assert response.status_code == 400
    assert "outside the lane's articles 1..0" in response.json()["detail"]
    assert put(node, lease, body(), next_id=1_000).status_code == 204
