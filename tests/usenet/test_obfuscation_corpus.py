"""usenet.obfuscation on real names: the parser corpora's release names stay named, and
the real digests the corpora were read at (commit ids) read as obfuscated."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from usenet.obfuscation import is_obfuscated

DATA = Path(__file__).parent / "data"
CORPORA = ("release_names.json", "release_names_holdout.json")


def _corpus(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("corpus", CORPORA)
def test_real_release_names_with_a_titled_word_are_not_obfuscated(corpus: str) -> None:
    rows = _corpus(corpus)["names"]
    # A name whose title alone holds a word (the corpus states the title).
    titled = [row["name"] for row in rows if not is_obfuscated(row.get("title") or "")]
    assert len(titled) > 600  # the test reads hundreds of real names, not a few
    assert [name for name in titled if is_obfuscated(name)] == []


@pytest.mark.parametrize("corpus", CORPORA)
def test_only_names_without_any_word_are_flagged(corpus: str) -> None:
    # "1x04", "S07E23.mkv": a real name with no title at all is flagged (its files
    # may say more); CRC tags ("[59B3F2EA]") and "-Obfuscated" group suffixes are not.
    rows = _corpus(corpus)["names"]
    flagged = [row for row in rows if is_obfuscated(row["name"])]
    assert len(flagged) < len(rows) // 50
    assert all(is_obfuscated(row.get("title") or "") for row in flagged), flagged


def test_real_digests_read_as_obfuscated_names() -> None:
    digests = {
        source[key]
        for corpus in CORPORA
        for source in _corpus(corpus)["sources"]
        for key in ("commit", "last_changed_in")
        if source.get(key)
    }
    assert len(digests) >= 5
    for digest in digests:
        assert is_obfuscated(digest), digest
        assert is_obfuscated(f"{digest}.mkv")
        assert is_obfuscated(f"{digest[:20]}.part01.rar")


def _random_letters(seed: int, count: int) -> list[str]:
    """Letters-only names of 8 to 32 letters: lower-case, upper-case and mixed, in turn."""
    rng = random.Random(seed)
    alphabets = (string.ascii_lowercase, string.ascii_uppercase, string.ascii_letters)
    return [
        "".join(rng.choice(alphabets[n % 3]) for _ in range(rng.randint(8, 32)))
        for n in range(count)
    ]


def test_random_letter_names_read_as_obfuscated() -> None:
    names = _random_letters(26, 3000)
    named = [name for name in names if not is_obfuscated(name)]
    assert len(named) <= len(names) // 100, named[:20]
    assert [name for name in names if not is_obfuscated(f"{name}.part01.rar")] == named


@pytest.mark.parametrize("name", ["xkqzvbnmwp", "QwErTyUiOpAsDfG", "hjdkslqpwoeiruty.part01.rar"])
def test_letters_without_a_word_are_obfuscated(name: str) -> None:
    assert is_obfuscated(name)


@pytest.mark.parametrize(
    "name", ["Up.2009.1080p", "Up.2009", "It.1080p.WEB", "Us.S01E02", "Up.2009.1080p.mkv"]
)
def test_a_short_title_beside_a_year_or_a_tag_is_a_real_name(name: str) -> None:
    assert not is_obfuscated(name)


@pytest.mark.parametrize("name", ["S07E23.mkv", "1x04", "2009.1080p", "a8f7d6e5c4b3.2009"])
def test_tags_with_no_title_stay_obfuscated(name: str) -> None:
    assert is_obfuscated(name)
