from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from usenet.groups import group_name_problem
from usenet.linear import compile_linear
from usenet.rules import ParsedSubject, RuleSet, file_key, last_default_counter

RULES = RuleSet.default()
PINNED = "dccc7779d7fa4778257dd499730de274"


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        (
            '[01/12] - "name.part01.rar" yEnc (1/37)',
            ParsedSubject(1, 37, "name.part01.rar", 1, 12, '[01/12] - "name.part01.rar"'),
        ),
        (
            "name.vol00+01.par2 (1/3)",
            ParsedSubject(1, 3, "name.vol00+01.par2", None, None, "name.vol00+01.par2"),
        ),
        ('"file.nfo" yEnc (1/1)', ParsedSubject(1, 1, "file.nfo", None, None, '"file.nfo"')),
        (
            '[3/8] - "a (1999).part3.rar" yEnc (12/40)',
            ParsedSubject(12, 40, "a (1999).part3.rar", 3, 8, '[3/8] - "a (1999).part3.rar"'),
        ),
        ('(1/2) "x" [1/5]', ParsedSubject(1, 5, "x", 1, 2, '(1/2) "x"')),
        (
            "My Album - File 2 of 9 - track02.flac 45.1 MB yEnc (07/61) 739811 bytes",
            ParsedSubject(7, 61, "track02.flac", 2, 9, "My Album - File 2 of 9 - track02.flac"),
        ),
        (
            "Backup 03 of 10 backup.7z.003 (2/50)",
            ParsedSubject(2, 50, "backup.7z.003", 3, 10, "Backup 03 of 10 backup.7z.003"),
        ),
    ],
)
def test_subjects_of_binary_posts(subject, expected):
    assert RULES.parse_subject(subject) == expected
    assert RULES.is_binary(subject)


@pytest.mark.parametrize(
    "subject",
    [
        "Re: where is part 2?",
        "",
        "Movie (1999) [1080p]",  # a year in brackets is no counter
        "name.rar (0/37)",  # parts start at 1
        "name.rar (38/37)",
        "name.rar (1/0)",
    ],
)
def test_posts_without_a_valid_segment_counter_are_not_binary(subject):
    assert RULES.parse_subject(subject) is None
    assert not RULES.is_binary(subject)


def test_the_segment_counter_is_the_last_counter():
    parsed = RULES.parse_subject('"a (1/3).rar" yEnc (2/5)')
    assert parsed is not None
    assert (parsed.part, parsed.total) == (2, 5)


def test_every_segment_of_a_file_has_the_same_key_subject():
    subjects = [f'[01/12] - "name.part01.rar" yEnc ({part}/37)' for part in range(1, 38)]
    subjects.append('[01/12] - "name.part01.rar" yEnc (05/37)')  # zero-padded counter
    keys = {RULES.parse_subject(subject).key_subject for subject in subjects}
    assert keys == {'[01/12] - "name.part01.rar"'}


def test_files_of_one_release_have_different_key_subjects():
    subjects = [f'[{n:02d}/12] - "name.part{n:02d}.rar" yEnc (1/37)' for n in range(1, 13)]
    keys = {RULES.parse_subject(subject).key_subject for subject in subjects}
    assert len(keys) == 12


def test_a_per_segment_size_hint_does_not_split_a_file():
    first = RULES.parse_subject('"name.rar" yEnc (1/3) 739811 bytes')
    last = RULES.parse_subject('"name.rar" yEnc (3/3) 12004 bytes')
    assert first.key_subject == last.key_subject == '"name.rar"'


def test_total_bounds_come_from_the_rules():
    rules = RuleSet(version=2, min_total=2, max_total=10)
    assert rules.parse_subject("x.rar (1/1)") is None
    assert rules.parse_subject("x.rar (1/11)") is None
    assert rules.parse_subject("x.rar (1/10)") is not None


def test_excluded_posters_match_the_patterns():
    rules = RuleSet(version=2, poster_exclude=(r"(?i)spam@",))
    assert rules.excludes_poster("Spammer <SPAM@example.com>")
    assert not rules.excludes_poster("someone <a@b.c>")
    assert not RULES.excludes_poster("Spammer <SPAM@example.com>")


def test_the_dict_form_round_trips_through_json():
    rules = RuleSet(version=3, poster_exclude=("bot@",), max_total=5000)
    data = json.loads(json.dumps(rules.to_dict()))
    assert data["version"] == 3
    restored = RuleSet.from_dict(data)
    assert restored == rules
    assert restored.parse_subject("x.rar (1/2)") == rules.parse_subject("x.rar (1/2)")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"segment_counter": "(unclosed"}, "segment_counter pattern"),
        ({"segment_counter": r"\((\d+)/(\d+)\)"}, "part, total"),
        ({"poster_exclude": [r"(?<!x)bot"]}, "lookahead and lookbehind are not supported"),
        ({"strip": [r"(a)\1"]}, "backreferences are not supported"),
        ({"file_counters": [r"\[(?P<index>\d+)/(\d+)\]"]}, "lacks count"),
        ({"strip": ["[a-"]}, "strip pattern"),
        ({"filename": [r'"([^"]+)"']}, "named groups name"),
        ({"poster_exclude": ["*bot"]}, "poster_exclude pattern"),
        ({"strip": "yenc"}, "list of regular expressions"),
        ({"min_total": 0}, "min_total"),
        ({"max_total": "big"}, "integers"),
        ({"version": 0}, "positive integer"),
        ({"colour": "blue"}, "does not know: colour"),
    ],
)
def test_bad_rule_dicts_are_refused_with_a_sentence(change, message):
    data = RULES.to_dict() | change
    with pytest.raises(ValueError, match=message):
        RuleSet.from_dict(data)


def test_a_rule_dict_missing_a_field_is_refused():
    data = RULES.to_dict()
    del data["strip"]
    with pytest.raises(ValueError, match="lacks the fields: strip"):
        RuleSet.from_dict(data)


def test_file_key_is_the_documented_blake2b():
    from hashlib import blake2b

    expected = blake2b(digest_size=16, person=b"usenet-file-v1")
    for text in ("alt.binaries.test", "someone <a@b.c>", '"x.rar"'):
        expected.update(len(text.encode()).to_bytes(4, "big") + text.encode())
    expected.update((37).to_bytes(8, "big"))
    key = file_key("alt.binaries.test", "someone <a@b.c>", '"x.rar"', 37)
    assert key == expected.digest()
    assert len(key) == 16


def test_file_key_separates_its_fields():
    assert file_key("g", "ab", "c", 1) != file_key("g", "a", "bc", 1)
    assert file_key("g", "p", "s", 1) != file_key("g", "p", "s", 2)
    assert file_key("g", "p", "s", 1) != file_key("h", "p", "s", 1)


def test_identify_gives_one_key_for_every_segment_of_a_file():
    keys = {
        RULES.identify("alt.binaries.test", "p <p@x>", f'"x.rar" yEnc ({part}/9)')
        for part in range(1, 10)
    }
    assert len(keys) == 1
    assert RULES.identify("alt.binaries.test", "p <p@x>", "no counter") is None


def test_a_pinned_key_guards_against_silent_identity_changes():
    # The coordinator stores these keys; a change here orphans every catalog file.
    key = RULES.identify(
        "alt.binaries.test", "someone <a@b.c>", '[01/12] - "name.part01.rar" yEnc (1/37)'
    )
    assert key.hex() == PINNED


def finishes_within(seconds: float, code: str) -> bool:
    """Whether `code` runs to its end within `seconds` in a fresh interpreter.

    A subprocess, because a backtracking match holds the GIL: no thread could
    time it out, and a killed process stops burning the core at once.
    """
    root = Path(__file__).resolve().parents[2]
    try:
        subprocess.run([sys.executable, "-c", code], cwd=root, check=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_an_exponential_poster_pattern_runs_in_linear_time():
    # Under a backtracking engine (a+)+$ takes seconds on 22 characters and
    # centuries on 10,000; in linear time it is instant.
    code = (
        "from usenet.rules import RuleSet\n"
        "rules = RuleSet(version=2, poster_exclude=('(a+)+$',))\n"
        "assert not rules.excludes_poster('a' * 10_000 + '!')\n"
        "assert rules.excludes_poster('a' * 10_000)\n"
    )
    assert finishes_within(30, code)


@pytest.mark.parametrize("run", ["-", " ", "|", ":", ","])
def test_a_long_run_of_separators_is_read_in_linear_time(run):
    # The default strip and file-name patterns backtracked quadratically on such a
    # run that does not reach the end of the subject: 8,000 characters took 6 s, and
    # 100,000 take minutes.
    code = (
        "from usenet.rules import RuleSet\n"
        "rules = RuleSet.default()\n"
        f"subject = 'a' + {run!r} * 100_000 + 'b.rar (1/2)'\n"
        "parsed = rules.parse_subject(subject)\n"
        "assert parsed is not None and parsed.total == 2\n"
    )
    assert finishes_within(30, code)


def test_the_default_file_name_pattern_needs_a_letter_before_a_numbered_extension():
    assert RULES.parse_subject('"a.7z.001" yEnc (1/2)').name == "a.7z.001"
    assert RULES.parse_subject("big.mkv.001 yEnc (1/2)").name == "big.mkv.001"
    assert RULES.parse_subject("part 1.500 MB yEnc (1/2)").name == "part"
    assert RULES.parse_subject("x name.part01.rar. (1/2)").name == "x name.part01.rar."
    assert RULES.parse_subject("x name.part01.rar - (1/2)").name == "name.part01.rar"


def by_re2(subject):
    """The default counter's split by its pattern under RE2 (the path operators' counters take)."""
    segment = RULES._segment_re
    match = segment.match(subject, segment.numbers(("_head", "part", "total", "_tail")))
    if match is None:
        return None
    return match[0], int(match[1]), int(match[2]), match[3]


@pytest.mark.slow
@given(st.text(alphabet="([)]/ \t\n0123456789aé", max_size=40))
@settings(max_examples=3000, deadline=None)
def test_the_default_counter_read_by_hand_agrees_with_its_pattern(subject):
    assert last_default_counter(subject) == by_re2(subject)


@pytest.mark.parametrize(
    "subject",
    [
        "x (1/2)",
        "x [ 01 / 12 ] y",
        "(1/2) x (3/4) y",
        "x (1234567/2)",
        "x (1/2] y",
        "(1/2)(",
        "x(\t1 /\n2\f)",
    ],
)
def test_the_default_counter_read_by_hand_on_known_subjects(subject):
    assert last_default_counter(subject) == by_re2(subject)


@pytest.mark.slow
@pytest.mark.parametrize("run", ["(", "[", "( ", "(1/", "(1 / 2", "[99999/"])
def test_a_long_run_of_counter_fragments_is_read_in_linear_time(run):
    code = (
        "from usenet.rules import last_default_counter\n"
        f"assert last_default_counter({run!r} * 200_000 + 'x') is None\n"
    )
    assert finishes_within(30, code)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("alt.binaries.x\r\nQUIT", "control character"),
        ("alt.binaries.x\x00", "control character"),
        ("alt binaries", "space"),
        ("alt.*", "RFC 3977 keeps"),
        ("alt,x", "RFC 3977 keeps"),
        ("", "non-empty"),
        ("a" * 256, "at most 255"),
    ],
)
def test_group_names_outside_rfc_3977_are_refused_with_a_reason(name, problem):
    assert problem in group_name_problem(name)


@pytest.mark.parametrize(
    "name", ["alt.binaries.multimedia", "de.alt.dateien", "fr.rec.café", "a+b"]
)
def test_rfc_3977_group_names_pass(name):
    assert group_name_problem(name) is None


@pytest.mark.slow
@given(
    st.sampled_from(["x*", "a|b", "é+", r"\s+", "^-+", "-+$", "ab*", "(?i)A"]),
    st.text(alphabet="ab x-éÉ", max_size=30),  # no newline: RE2's $ is the very end
)
@settings(max_examples=2000, deadline=None)
def test_a_linear_pattern_replaces_as_re_does(pattern, text):
    assert compile_linear(pattern).sub(" ", text) == re.sub(pattern, " ", text)


@pytest.mark.slow
@given(st.text(alphabet="ab x-é", max_size=30))
@settings(max_examples=500, deadline=None)
def test_a_linear_pattern_finds_groups_as_re_does(text):
    pattern = r"(?P<a>a+)(?P<sp> )?(?P<e>é*)"
    linear = compile_linear(pattern)
    found = linear.search(text, linear.numbers(("a", "sp", "e")))
    match = re.search(pattern, text)
    assert found == (None if match is None else [g or "" for g in match.groups()])
