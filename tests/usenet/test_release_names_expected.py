"""parse_release_name gives every name of tests/usenet/data/release_names_expected.json the
fields that file states: the corpora's names, the string literals of test_release_names.py
and generated names. A change made for speed must change no field; a change meant to
change results rewrites the file (bench/names_equivalence.py --write-expected) and shows
as its diff. bench/names_equivalence.py compares with a git revision's parser over
100,000 more generated names."""

from __future__ import annotations

from tests.support.name_corpus import HOLDOUT, load
from tests.support.parsed_fields import fields, load_expected
from usenet.release_names import parse_release_name


def test_the_file_covers_both_corpora():
    held = {name for name, _ in load_expected()}
    for corpus in (load(), load(HOLDOUT)):
        assert {row["name"] for row in corpus["names"]} <= held


def test_every_name_reads_as_the_file_says():
    differences = [
        (name, got, want)
        for name, want in load_expected()
        if (got := fields(parse_release_name(name))) != want
    ]
    assert not differences, f"{len(differences)} names differ; the first: {differences[:3]}"
