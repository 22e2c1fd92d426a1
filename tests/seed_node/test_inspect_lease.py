"""What an inspecting worker accepts of a lease, how much it fetches, and whom it waits on."""

from __future__ import annotations

from typing import Any

import pytest

from inspection import nfo, yenc
from seed_node.assembly import open_source
from seed_node.cli import build_parser
from seed_node.inspecting import BadLease, InspectLease, Wanted
from seed_node.ranges import sooner
from seed_node.sources import NewsServerSource

ARTICLES = [
    {"role": "par2", "message_ids": ["<a1@x>"], "bytes": 4120, "name": "q8w7e6.par2"},
    {"role": "nfo", "message_ids": ["<n1@x>", "<n2@x>"], "bytes": 9000, "name": "zz.nfo"},
    {"role": "archive", "message_ids": ["<r1@x>"], "bytes": 768000, "name": "b1.part01.rar"},
]


def lease(**changes: Any) -> dict[str, Any]:
    return {"id": 41, "epoch": 2, "release": 9001, "group": "a.b.c", "articles": ARTICLES} | changes


def test_the_contracts_example_lease_is_read_whole() -> None:
    read = InspectLease.from_json(lease())
    assert (read.id, read.epoch, read.release, read.group, read.path) == (
        41, 2, 9001, "a.b.c", "/inspections/41",
    )  # fmt: skip
    assert [(w.role, w.message_ids, w.bytes) for w in read.articles] == [
        ("par2", ("<a1@x>",), 4120),
        ("nfo", ("<n1@x>", "<n2@x>"), 9000),
        ("archive", ("<r1@x>",), 768000),
    ]


@pytest.mark.parametrize(
    ("changes", "sentence", "releasable"),
    [
        ({"id": "41"}, "no whole-number id and epoch", False),
        ({"epoch": None}, "no whole-number id and epoch", False),
        ({"group": 5}, "has no release or group", True),
        ({"articles": []}, "names 1 to 3 articles", True),
        ({"articles": ARTICLES + ARTICLES[:1]}, "names 1 to 3 articles", True),
        ({"articles": [ARTICLES[0], ARTICLES[0]]}, "names a role twice", True),
        ({"articles": [{**ARTICLES[0], "role": "sample"}]}, "'sample' is unknown", True),
        ({"articles": [{**ARTICLES[2], "message_ids": ["<a@x>", "<b@x>"]}]}, "1 to 1", True),
        (
            {"articles": [{**ARTICLES[1], "message_ids": [f"<{n}@x>" for n in range(65)]}]},
            "1 to 64",
            True,
        ),
        ({"articles": [{**ARTICLES[1], "message_ids": [7]}]}, "1 to 64 message-ids", True),
        ({"articles": ["par2"]}, "not an object", True),
    ],
)
def test_a_lease_it_cannot_read_is_refused_with_what_can_be_released(
    changes: dict[str, Any], sentence: str, releasable: bool
) -> None:
    with pytest.raises(BadLease, match=sentence) as refused:
        InspectLease.from_json(lease(**changes))
    held = refused.value.lease
    assert (held is not None) == releasable
    if held is not None:
        assert (held.id, held.epoch) == (41, 2)


def test_fetches_are_bounded_by_the_leases_bytes() -> None:
    assert Wanted("archive", ("<r@x>",), 768_000, "r").fetch_cap() == 768_000 + 64 * 1024
    assert Wanted("archive", ("<r@x>",), 0, "r").fetch_cap() == yenc.MAX_BODY  # unknown size
    assert Wanted("archive", ("<r@x>",), 1 << 40, "r").fetch_cap() == yenc.MAX_BODY
    assert Wanted("nfo", ("<n@x>",), 9000, "n").nfo_cap() == 9000
    assert Wanted("nfo", ("<n@x>",), 10 << 20, "n").nfo_cap() == nfo.MAX_NFO


NONE = {"lease": None, "retry_after": None, "paused": None}


@pytest.mark.parametrize(
    ("ranges", "inspections", "waited_on"),
    [
        ({**NONE, "retry_after": 30}, {**NONE, "retry_after": 5}, "inspections"),
        ({**NONE, "retry_after": 5}, {**NONE, "retry_after": 30}, "ranges"),
        ({**NONE, "paused": "disk"}, {**NONE, "retry_after": 60}, "inspections"),
        ({**NONE, "retry_after": 60}, {**NONE, "paused": "disk"}, "ranges"),
        (NONE, {**NONE, "retry_after": 10}, "inspections"),
        (NONE, NONE, "ranges"),
    ],
)
def test_with_neither_handed_out_it_waits_on_the_sooner_answer(
    ranges: dict[str, Any], inspections: dict[str, Any], waited_on: str
) -> None:
    chosen = sooner(ranges, inspections)
    assert chosen is (ranges if waited_on == "ranges" else inspections)


@pytest.mark.parametrize(("mode", "compressed"), [("inspect", False), ("ranges", True)])
def test_inspecting_reads_bodies_without_compress(mode: str, compressed: bool) -> None:
    """yEnc does not compress: COMPRESS DEFLATE would only make the server deflate bodies."""
    args = build_parser().parse_args(
        ["--mode", mode, "--news-server", "nntp://news.example.invalid/?compression=1"]
    )
    source, _described = open_source(args, coordinator=None)  # type: ignore[arg-type]
    assert isinstance(source, NewsServerSource)
    assert source.pool.config.compression is compressed
