"""split_batches (seed_node/reading.py): one batch when the files fit, found without
encoding them; cut as before when they do not."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

import seed_node.reading as reading
from seed_node.reading import json_length_bound, split_batches
from seed_node.reporting import reportable
from usenet.limits import MAX_ARTICLE, MAX_DATE, MAX_SEGMENT_BYTES, MAX_TOTAL

# Every kind of character JSON spells longer than itself: quotes, backslashes,
# control characters, the BMP beyond ASCII, and beyond the BMP (12 characters).
TEXT = st.text(st.sampled_from('a"\\\x01\x7f\u00e9\u4e2d\U0001f600 '), min_size=1, max_size=30)
SEGMENT = st.builds(
    lambda part, article, local, size: [part, article, f"<{local}@x>", size],
    st.integers(1, MAX_TOTAL),
    st.sampled_from([0, 7, MAX_ARTICLE]),
    st.text(st.sampled_from('a"\\\x01\u00e9\U0001f600'), min_size=1, max_size=20),
    st.sampled_from([0, 5, MAX_SEGMENT_BYTES]),
)
FILE = st.builds(
    lambda subject, poster, date, segments: {
        "subject": subject,
        "poster": poster,
        "date": date,
        "total": MAX_TOTAL,
        "segments": segments,
    },
    TEXT,
    TEXT,
    st.sampled_from([None, 0, 1_700_000_000, MAX_DATE]),
    st.lists(SEGMENT, min_size=1, max_size=4),
)


def encoded_size(items):
    return sum(len(json.dumps(item, separators=(",", ":"))) + 1 for item in items)


@given(st.lists(FILE, max_size=5))
def test_the_bound_is_never_under_the_encoded_length(files):
    files, _ = reportable(files)
    assert json_length_bound(files) >= encoded_size(files)


def test_the_bound_is_the_length_of_the_longest_file_of_its_text_lengths():
    longest = "\U0001f600" * 3  # each character "\\ud83d\\ude00" in JSON
    segment = [MAX_TOTAL, MAX_ARTICLE, f"<{longest}@{longest}>", MAX_SEGMENT_BYTES]
    item = {"subject": longest, "poster": longest, "date": MAX_DATE, "total": MAX_TOTAL,
            "segments": [segment, segment]}  # fmt: skip
    # Over only by what is ASCII in the message-ids ("<", "@", ">": 1 character, not
    # 12) and the comma counted after the last segment.
    assert json_length_bound([item]) == encoded_size([item]) + 2 * 3 * 11 + 1


def test_a_file_of_another_shape_is_measured_by_encoding_it():
    item = {
        "subject": "a",
        "poster": "b",
        "date": 1.5,
        "total": 1,
        "segments": [[1, 1, "<a@b>", 1]],
    }
    assert json_length_bound([item]) > reading.MAX_BATCH_BYTES
    assert json_length_bound([{**item, "date": 1, "fragment": True}]) > reading.MAX_BATCH_BYTES


def test_files_that_fit_go_in_one_batch_and_others_are_cut(monkeypatch):
    files = [
        {"subject": f"s{n}", "poster": "p", "date": 0, "total": 2, "segments": [[1, n, "<a@b>", 9]]}
        for n in range(1, 40)
    ]
    assert split_batches(files, files[:3]) == [(files, files[:3])]
    limit = 1000
    monkeypatch.setattr(reading, "MAX_BATCH_BYTES", limit)
    batches = split_batches(files, files[:3])
    assert len(batches) > 1
    assert [item for some, _ in batches for item in some] == files
    assert [item for _, some in batches for item in some] == files[:3]
    assert all(reading._BATCH_OVERHEAD + encoded_size(a + b) <= limit for a, b in batches)
