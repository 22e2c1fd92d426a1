"""Release stems: read in linear time, and cut as the suffix pattern they replace cut them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.identity import release_stem
from tests.support.cost import cpu_cost

# The pattern release_stem replaced: the reference for what a stem is. Under
# re it backtracked quadratically on "x.rar.rar....rar.mkv" (7 ms at 960
# characters); here it only reads the short names hypothesis makes. Its \d is
# written [0-9]: a number is ASCII digits only, in names as everywhere else
# (docs/security.md, "Numbers from clients").
OLD_SUFFIX = re.compile(
    r"(?i)(?:\.(?:part[0-9]{1,4}|vol[0-9]{1,5}[+-][0-9]{1,5}|r[0-9]{2,3}|[0-9]{3}|rar|par2|par|7z|zip"
    r"|nfo|sfv|srr|nzb|jpg|png|txt))+$"
)


def old_stem(name: str) -> str:
    return OLD_SUFFIX.sub("", name) or name


# Suffixes, near misses and characters where case folding is tricky: the
# Turkish dotted I and dotless i, the long s, the Kelvin sign, ligatures,
# other scripts' digits.
TOKENS = st.sampled_from(
    [
        "rar", "RAR", "Rar", "part01", "PART1234", "part12345", "part", "vol03+04", "VOL1-2",
        "vol123456+1", "vol1+", "vol+1", "vol1+2+3", "r00", "R001", "r0", "r0000", "001",
        "0001", "01", "par2", "par", "PAR3", "7z", "7Z", "zip", "Z\u0130P", "z\u0131p", "nfo",
        "\u017ffv", "sfv", "srr", "nzb", "jpg", "png", "txt", "mkv", "", "x",
        "\u0660\u0661\u0662", "r\u0660\u0660", "part\u0661", "\u212aar", "\ufb06", "\ufb01le",
        "\u00df", "rar ", " rar",
    ]
)  # fmt: skip
# No line break: a subject read from an overview line has none, and `$` also
# matched before a final newline, a quirk of re the new reading does not keep.
TEXT = st.text(st.characters(exclude_characters="\n"), max_size=8)
NAMES = st.lists(st.one_of(TOKENS, TEXT), max_size=10).map(".".join)


@pytest.mark.slow
@given(st.one_of(NAMES, st.text(st.characters(exclude_characters="\n"), max_size=40)))
def test_a_stem_is_what_the_old_suffix_pattern_left(name):
    assert release_stem(name) == old_stem(name)


@pytest.mark.parametrize("unit", [".rar", ".part01.rar.r00.7z.001.vol03+04.par2.nfo"])
def test_a_long_run_of_suffixes_costs_no_more_than_reading_the_name(unit):
    # Both names are about 4,000 characters. The first is all suffixes, so any
    # reading must pass every character: a linear baseline. The second ends in
    # ".mkv", where the old pattern tried every dot as a start and read on to
    # the end from each: about 1,000 times the baseline. A linear reading
    # costs at most about the baseline; the bound of 20 leaves it wide room
    # and cannot be met by a quadratic one. CPU time, least of five repeats
    # (tests/support/cost.py): other work on the machine does not move it.
    count = 4000 // len(unit)
    baseline = "x" + unit * count
    hostile = "x" + unit * count + ".mkv"
    assert release_stem(baseline) == "x"
    assert release_stem(hostile) == hostile
    ratio = cpu_cost(release_stem, hostile, calls=5) / cpu_cost(release_stem, baseline, calls=5)
    assert ratio < 20
