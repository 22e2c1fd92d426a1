from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seed_node.aggregate import Window
from tests.support.overview_lines import over_line
from usenet.overview import parse_over_line
from usenet.rules import RuleSet

GROUP = "alt.binaries.test"
RULES = RuleSet.default()


def window(**options) -> Window:
    return Window(RULES, GROUP, **options)


def file_lines(name: str, total: int, first_article: int, **fields) -> list[bytes]:
    return [
        over_line(first_article + part - 1, f'"{name}" yEnc ({part}/{total})', **fields)
        for part in range(1, total + 1)
    ]


def test_a_file_with_all_its_parts_comes_out_complete_in_the_protocol_shape():
    w = window()
    lines = [
        over_line(100, '[01/12] - "name.part01.rar" yEnc (2/2)', message_id="<b@h>", size=5),
        over_line(
            99,
            '[01/12] - "name.part01.rar" yEnc (1/2)',
            message_id="<a@h>",
            date="Tue, 14 Nov 2023 22:13:25 +0000",
        ),
    ]
    w.add_lines(lines)
    assert w.take_complete() == [
        {
            "subject": '[01/12] - "name.part01.rar" yEnc (1/2)',
            "poster": "someone <a@b.c>",
            "date": 1700000000,
            "total": 2,
            "segments": [[1, 99, "<a@h>", 739811], [2, 100, "<b@h>", 5]],
        }
    ]
    assert len(w) == 0
    assert w.take_complete() == []


def test_the_date_is_the_earliest_segments():
    w = window()
    w.add_line(over_line(1, '"x" yEnc (1/2)', date="Tue, 14 Nov 2023 22:13:30 +0000"))
    w.add_line(over_line(2, '"x" yEnc (2/2)', date="Tue, 14 Nov 2023 22:13:20 +0000"))
    [complete] = w.take_complete()
    assert complete["date"] == 1700000000


def test_interleaved_files_complete_separately():
    w = window()
    a, b = file_lines("a.rar", 3, 10), file_lines("b.rar", 2, 20)
    w.add_lines([a[0], b[0], a[1], b[1], a[2]])
    names = sorted(f["subject"] for f in w.take_complete())
    assert names == ['"a.rar" yEnc (1/3)', '"b.rar" yEnc (1/2)']


def test_the_same_subject_from_two_posters_is_two_files():
    w = window()
    w.add_lines(file_lines("a.rar", 2, 1, poster="one <1@x>"))
    w.add_line(over_line(9, '"a.rar" yEnc (1/2)', poster="two <2@x>"))
    assert len(w.take_complete()) == 1
    assert len(w) == 1


def test_non_binary_and_malformed_lines_are_counted_not_stored():
    w = window()
    w.add_line(over_line(1, "Re: discussion"))
    w.add_line(b"2\tbroken")
    w.add_line(b"not a number\ts\tp\td\t<m@h>\t\t1\t1")
    w.add_line(over_line(3, '"x" yEnc (1/1)'))
    # A subject too long to store: dropped before the rules read it, and counted.
    w.add_line(over_line(4, "-" * 5000 + '"y" yEnc (1/1)'))
    assert len(w.take_complete()) == 1
    assert w.counters() == {
        "headers": 5,
        "malformed": 3,
        "non_binary": 1,
        "excluded": 0,
        "binary": 1,
        "duplicates": 0,
        "conflicts": 0,
        "evicted": 0,
    }


def test_excluded_posters_are_counted_not_stored():
    w = Window(RuleSet(version=2, poster_exclude=("spam",)), GROUP)
    w.add_line(over_line(1, '"x" yEnc (1/1)', poster="spam <s@x>"))
    assert (w.excluded, w.binary, len(w), w.take_complete()) == (1, 0, 0, [])


def test_a_part_seen_twice_with_the_same_message_id_is_a_duplicate():
    w = window()
    w.add_line(over_line(1, '"x" yEnc (1/2)', message_id="<a@h>"))
    w.add_line(over_line(1, '"x" yEnc (1/2)', message_id="<a@h>"))
    assert (w.duplicates, w.conflicts) == (1, 0)


def test_a_part_seen_twice_with_another_message_id_is_a_conflict_and_the_first_wins():
    w = window()
    w.add_line(over_line(5, '"x" yEnc (1/2)', message_id="<first@h>"))
    w.add_line(over_line(6, '"x" yEnc (1/2)', message_id="<second@h>"))
    w.add_line(over_line(7, '"x" yEnc (2/2)', message_id="<two@h>"))
    assert (w.duplicates, w.conflicts) == (0, 1)
    [complete] = w.take_complete()
    assert complete["segments"][0] == [1, 5, "<first@h>", 739811]


def test_quiet_incomplete_files_leave_as_fragments():
    w = window()
    w.add_lines(file_lines("old.rar", 5, 100)[:2])  # articles 100, 101
    w.add_lines(file_lines("new.rar", 5, 200)[:2])
    w.add_line(over_line(300, '"done" yEnc (1/1)'))
    fragments = w.take_fragments_before(150)
    assert [f["subject"] for f in fragments] == ['"old.rar" yEnc (1/5)']
    assert [s[0] for s in fragments[0]["segments"]] == [1, 2]
    assert w.take_fragments_before(150) == []
    assert len(w.take_complete()) == 1  # complete files are not fragments
    assert [f["subject"] for f in w.drain()] == ['"new.rar" yEnc (1/5)']
    assert len(w) == 0


def test_a_full_window_evicts_its_oldest_files_as_fragments():
    w = window(max_open=4)
    for n in range(10):
        w.add_line(over_line(n + 1, f'"f{n}.rar" yEnc (1/9)'))
    assert len(w) <= 4
    fragments = w.take_fragments_before(0)
    assert w.evicted == len(fragments) == 10 - len(w)
    evicted = {f["subject"] for f in fragments}
    assert evicted == {f'"f{n}.rar" yEnc (1/9)' for n in range(len(fragments))}


def test_a_file_split_across_two_ranges_comes_out_complete():
    w = window()
    lines = file_lines("straddle.rar", 6, 4998)  # articles 4998..5003
    first_range = [line for line in lines if parse_over_line(line).article <= 4999]
    second_range = [line for line in lines if parse_over_line(line).article >= 5000]
    w.add_lines(first_range)
    assert w.take_complete() == []
    assert w.take_fragments_before(4000) == []  # still recent: it stays open
    w.add_lines(second_range)
    [complete] = w.take_complete()
    assert [s[1] for s in complete["segments"]] == list(range(4998, 5004))


def test_a_snapshot_round_trips_and_the_restored_window_goes_on():
    w = window(max_open=50)
    w.add_lines(file_lines("a.rar", 4, 1)[:3])
    w.add_lines(file_lines("b.rar", 2, 10, poster="Jos\u00e9 <j@x>")[:1])
    w.add_line(over_line(20, "chatter"))
    w.add_line(over_line(21, '"c" yEnc (1/1)'))  # complete, not taken yet
    snapshot = io.BytesIO()
    w.serialize(snapshot)
    assert not snapshot.closed

    snapshot.seek(0)
    restored = Window.restore(snapshot, RULES)
    assert restored.counters() == w.counters()
    assert (restored.group, restored.max_open, len(restored)) == (GROUP, 50, 3)
    assert restored.take_complete() == w.take_complete()
    restored.add_line(file_lines("a.rar", 4, 1)[3])
    [a] = restored.take_complete()
    assert [s[0] for s in a["segments"]] == [1, 2, 3, 4]
    assert restored.drain() == [f for f in w.drain() if f["subject"].startswith('"b.rar"')]


def test_a_snapshot_is_gzipped_json_lines():
    import gzip

    w = window()
    w.add_lines(file_lines("a.rar", 3, 1)[:2])
    snapshot = io.BytesIO()
    w.serialize(snapshot)
    lines = gzip.decompress(snapshot.getvalue()).splitlines()
    header, stored = (json.loads(line) for line in lines)
    assert header["format"] == 1 and header["group"] == GROUP
    assert stored["segments"] == [[1, 1, "<part1@host>", 739811], [2, 2, "<part2@host>", 739811]]


def test_evicted_fragments_survive_a_snapshot():
    w = window(max_open=1)
    w.add_line(over_line(1, '"a" yEnc (1/2)'))
    w.add_line(over_line(2, '"b" yEnc (1/2)'))
    snapshot = io.BytesIO()
    w.serialize(snapshot)
    snapshot.seek(0)
    restored = Window.restore(snapshot, RULES)
    assert restored.take_fragments_before(0) == w.take_fragments_before(0) != []


# --- any order, same files --------------------------------------------------------


def _release_lines() -> list[bytes]:
    lines = []
    article = 1000
    for index, total in enumerate((3, 1, 5, 2), start=1):
        for part in range(1, total + 1):
            subject = f'[{index}/4] - "r.part{index}.rar" yEnc ({part}/{total})'
            lines.append(
                over_line(article, subject, date=f"14 Nov 2023 22:{index:02d}:{part:02d} GMT")
            )
            article += 1
    lines.append(over_line(article, '"partial.rar" yEnc (1/3)'))  # never completes
    lines.append(over_line(article + 1, "Re: thanks"))
    lines.append(b"junk")
    # The same part twice: once repeated exactly, once as a conflicting repost.
    lines.append(lines[0])
    lines.append(over_line(article + 2, '[1/4] - "r.part1.rar" yEnc (2/3)', message_id="<re@h>"))
    return lines


def _complete_files(lines: list[bytes]) -> list[dict]:
    w = window()
    w.add_lines(lines)
    return sorted(w.take_complete(), key=lambda f: f["subject"])


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.permutations(_release_lines()))
def test_any_order_of_the_same_lines_gives_the_same_complete_files(lines):
    assert _complete_files(lines) == _complete_files(_release_lines())
    assert len(_complete_files(lines)) == 4
