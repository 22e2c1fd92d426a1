"""inspect_article: a fetched article body in, a bounded JSON-able result out, errors per part."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile

from inspection import (
    MAX_REPORTED_FILES,
    MAX_REPORTED_NAME,
    FoundFile,
    InspectResult,
    inspect_article,
)

from .conftest import UNICODE_NAME, Par2Fixture, rar, yenc_body


def test_a_par2_article_reports_the_real_file_names(par2_set: Par2Fixture) -> None:
    body = yenc_body(par2_set.index, "a8f7d6e5c4b3.par2")
    result = inspect_article("par2", body)
    assert result.errors == []
    assert result.format == "par2"
    assert result.yenc and result.yenc["name"] == "a8f7d6e5c4b3.par2"
    assert {f.name: f.size for f in result.files} == {n: len(c) for n, c in par2_set.files.items()}
    assert json.loads(json.dumps(result.to_json()))["files"][0]["md5"]


def test_the_first_article_of_a_rar_volume_reports_names_and_flags() -> None:
    data = rar("rar5-vols.part1.first8k.rar")
    result = inspect_article("archive", yenc_body(data, "b1c2d3.part01.rar", part=(1, 1, 102400)))
    assert (result.format, result.volume, [f.name for f in result.files]) == (
        "rar5", True, ["vols/bigfile.txt"],
    )  # fmt: skip
    assert result.errors == []


def test_a_passworded_archive_is_flagged(seven_zip_archives: dict[str, bytes]) -> None:
    result = inspect_article("archive", yenc_body(seven_zip_archives["headers.7z"]))
    assert (result.format, result.headers_encrypted, result.passworded) == ("7z", True, True)
    result = inspect_article("archive", yenc_body(rar("rar3-comment-psw.rar")))
    assert result.passworded and all(f.encrypted for f in result.files)


def test_an_nfo_posted_in_yenc_or_as_plain_text_gives_its_ids() -> None:
    text = b"Some.Movie.2001.1080p.BluRay.x264-GRP\r\nhttps://www.imdb.com/title/tt0111161/\r\n"
    for body in (yenc_body(text, "x.nfo"), text):
        result = inspect_article("nfo", body)
        assert (result.imdb_ids, result.release_names) == (
            ["tt0111161"],
            ["Some.Movie.2001.1080p.BluRay.x264-GRP"],
        )
        assert result.errors == []


def test_errors_are_reported_per_part() -> None:
    body = yenc_body(b"abc")
    result = inspect_article("par2", body[: body.rfind(b"crc32=")] + b"crc32=1\r\n")
    assert [e["part"] for e in result.errors] == ["yenc"]
    result = inspect_article("par2", yenc_body(b"not par2 at all"))
    assert [e["part"] for e in result.errors] == ["par2"]
    result = inspect_article("archive", yenc_body(b"Rar!\x1a\x07\x00" + b"\0" * 7 + b"x" * 30))
    assert [e["part"] for e in result.errors] == ["archive"] and result.format == "rar4"


def test_an_unknown_role_is_an_error_in_the_result() -> None:
    result = inspect_article("sample", b"")
    assert result.errors and "is not one of" in result.errors[0]["error"]


def test_the_files_reported_are_capped() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for n in range(MAX_REPORTED_FILES + 5):
            archive.writestr(f"{n}.txt", b"")
    result = inspect_article("archive", yenc_body(buffer.getvalue()))
    assert len(result.files) == MAX_REPORTED_FILES and result.files_truncated


def test_names_are_cut_at_the_bound_the_coordinator_accepts() -> None:
    # The coordinator refuses a longer name (catalog.inspection reads the same
    # constant), and its body cap is sized for names of at most this length.
    long = "\u00e9" * (MAX_REPORTED_NAME + 40) + ".mkv"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(long, b"")
    result = inspect_article("archive", yenc_body(buffer.getvalue(), long))
    assert result.yenc is not None and result.yenc["name"] == long[:MAX_REPORTED_NAME]
    assert [f.name for f in result.files] == [long[:MAX_REPORTED_NAME]]


def test_a_unicode_name_survives_json(seven_zip_archives: dict[str, bytes]) -> None:
    result = inspect_article("archive", yenc_body(seven_zip_archives["plain.zip"]))
    reported = json.loads(json.dumps(result.to_json()))
    assert UNICODE_NAME in [found["name"] for found in reported["files"]]


def test_to_json_is_every_field_as_plain_json_and_a_copy() -> None:
    """to_json is written out field by field (asdict's deep copy cost a node a quarter of
    its report work): it must still carry every field, equal to asdict's, and share no
    list or dict with the result."""
    result = InspectResult(
        role="archive",
        format="rar5",
        yenc={"name": "a.rar", "size": 10, "part": 1, "crc_checked": True},
        files=[FoundFile("a.mkv", 5, True, 4, "0" * 32, "1" * 32)],
        files_truncated=True,
        imdb_ids=["tt0111161"],
        tvdb_ids=["81189"],
        release_names=["Some.Movie.2024-GRP"],
        volume=True,
        solid=False,
        headers_encrypted=False,
        passworded=True,
        archive_size=99,
        complete=False,
        notes=["a note"],
        errors=[{"part": "rar", "error": "bad"}],
    )
    shown = result.to_json()
    assert shown == dataclasses.asdict(result)
    assert set(shown) == {f.name for f in dataclasses.fields(InspectResult)}
    assert set(shown["files"][0]) == {f.name for f in dataclasses.fields(FoundFile)}
    before = json.dumps(shown)
    result.files[0].name = "b.mkv"
    assert result.yenc is not None
    result.yenc["name"] = "b.rar"
    result.notes.append("another")
    result.errors[0]["error"] = "changed"
    assert json.dumps(shown) == before
