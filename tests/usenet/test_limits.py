"""The agent and the coordinator judge a segment by one rule (usenet/limits.py)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.validation import validate_file
from core.errors import Invalid
from usenet.limits import MAX_SEGMENT_BYTES, storable_segment


def coordinator_accepts(segment: list[Any], total: int) -> bool:
    item = {"subject": "a (1/5)", "poster": "p", "date": 0, "total": total, "segments": [segment]}
    try:
        validate_file(item, "files[0]")
    except Invalid:
        return False
    return True


@pytest.mark.parametrize(
    "segment",
    [
        [1, 5, "<a@b>", 10],
        [5, 5, "<a@b>", 0],
        [1, 0, "<a@b>", MAX_SEGMENT_BYTES],
        [1, 5, "<a@b>", MAX_SEGMENT_BYTES + 1],
        [1, 5, "<a@b>", -1],
        [0, 5, "<a@b>", 10],
        [6, 5, "<a@b>", 10],
        [True, 5, "<a@b>", 10],
        [1, -1, "<a@b>", 10],
        [1, 2**63, "<a@b>", 10],
        [1, "5", "<a@b>", 10],
        [1, 5, "<a@b>", 1.5],
        [1, 5, "no-brackets", 10],
        [1, 5, "<a\x00b@c>", 10],
        [1, 5, "<a\ud800@b>", 10],
        [1, 5, "<ä@b>", 10],
        [1, 5, "<" + "a" * 250 + "@b>", 10],
        [1, 5, None, 10],
    ],
)
def test_a_segment_is_stored_exactly_when_the_agent_would_report_it(segment: list[Any]) -> None:
    assert storable_segment(*segment, 5) is coordinator_accepts(segment, 5)


def test_an_oversized_segment_is_neither_reported_nor_accepted() -> None:
    assert not storable_segment(1, 5, "<a@b>", 2**31, 5)
    assert not coordinator_accepts([1, 5, "<a@b>", 2**31], 5)
