"""usenet.obfuscation on real names: the parser corpora's release names stay named, and
the real digests the corpora were read at (commit ids) read as obfuscated."""

from __future__ import annotations

import json
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
