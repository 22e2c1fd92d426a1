"""Applying a node's inspection to a release (catalog/inspection.py, issue 26).

The reports are built the way the agent builds them: `inspection.InspectResult`
and its `to_json()`. The naming rules are tested one by one, in their order
(docs/inspection.md, "Which name wins").
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from lxml import etree

from catalog.inspection import (
    Applied,
    CatalogFileSize,
    apply_inspection,
    choose_name,
    match_files,
    validate_report,
)
from catalog.models import Release
from catalog.nzb import render_nzb
from catalog.selectors import release_nzb_stream
from catalog.services import store_files
from core.errors import Invalid, NotFound
from inspection import FoundFile, InspectResult
from tests.support.factories import GroupFactory
from tests.support.reports import DTD, report

REAL = "The.Movie.Name.2020.1080p.BluRay.x264-GRP"
VOLUME = 1_000_000


def par2_result(*files: tuple[str, int], yenc_name: str = "b1c2d3.par2") -> dict[str, Any]:
    result = InspectResult(role="par2", format="par2", complete=True)
    result.yenc = {"name": yenc_name, "size": 4120, "part": None, "total": None,
                   "begin": None, "end": None, "crc_checked": True}  # fmt: skip
    for name, size in files:
        result.add_file(FoundFile(name=name, size=size, md5="0" * 32, hash16k="1" * 32))
    return result.to_json()


def nfo_result(*names: str, imdb: tuple[str, ...] = (), tvdb: tuple[str, ...] = ()) -> dict:
    result = InspectResult(role="nfo", format="nfo")
    result.release_names = list(names)
    result.imdb_ids = list(imdb)
    result.tvdb_ids = list(tvdb)
    result.notes.append("read as cp437")
    return result.to_json()


def archive_result(
    *files: tuple[str, int],
    encrypted: bool = False,
    headers_encrypted: bool = False,
    passworded: bool = False,
    yenc: tuple[str, int] | None = None,
) -> dict[str, Any]:
    result = InspectResult(role="archive", format="rar5", volume=True, solid=False)
    result.headers_encrypted = headers_encrypted
    result.passworded = passworded
    if yenc is not None:
        result.yenc = {"name": yenc[0], "size": yenc[1], "part": 1, "total": 3,
                       "begin": 1, "end": 716800, "crc_checked": True}  # fmt: skip
    for name, size in files:
        result.add_file(FoundFile(name=name, size=size, encrypted=encrypted, packed_size=size))
    return result.to_json()


def payload(*results: dict[str, Any], missing: list[dict[str, str]] | None = None) -> dict:
    return {"epoch": 2, "results": list(results), "missing": missing or []}


MOVIE_SET = (
    (f"{REAL}.part01.rar", VOLUME),
    (f"{REAL}.part02.rar", VOLUME),
    (f"{REAL}.part03.rar", 123_456),
    (f"{REAL}.nfo", 2_000),
)


# --- validate_report ------------------------------------------------------------------


def test_a_report_as_the_agent_builds_it_is_accepted_whole():
    checked = validate_report(
        payload(
            par2_result(*MOVIE_SET),
            nfo_result(REAL, imdb=("tt0111161",), tvdb=("81189",)),
            archive_result(("movie.mkv", 2_100_000), yenc=("b1c2d3.part01.rar", VOLUME)),
            missing=[],
        )
    )
    assert [r.role for r in checked.results] == ["par2", "nfo", "archive"]
    par2 = checked.result("par2")
    assert par2 is not None and [f.name for f in par2.files][:2] == [
        f"{REAL}.part01.rar",
        f"{REAL}.part02.rar",
    ]
    nfo = checked.result("nfo")
    assert nfo is not None and (nfo.imdb_ids, nfo.tvdb_ids) == (("tt0111161",), (81189,))
    archive = checked.result("archive")
    assert archive is not None
    assert (archive.yenc_name, archive.yenc_size) == ("b1c2d3.part01.rar", VOLUME)


def broken(path: list[Any], value: Any) -> dict[str, Any]:
    """A valid report with the value at `path` replaced."""
    body = copy.deepcopy(
        payload(
            par2_result(*MOVIE_SET),
            nfo_result(REAL, imdb=("tt0111161",)),
            archive_result(("movie.mkv", 2_100_000)),
        )
    )
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        (["results", 0, "role"], "sample", "results[0].role must be one of par2, nfo, archive"),
        (["results", 2, "format"], "ace", "results[2].format must be null or one of rar4"),
        (["results", 0, "format"], "rar5", "results[0].format must be null or one of par2"),
        (["results", 0, "files"], [{"name": "x", "size": 1}] * 1001, "at most 1000"),
        (["results", 0, "files", 0, "name"], "n" * 256, "at most 255"),
        (["results", 0, "files", 0, "name"], None, "results[0].files[0].name is required"),
        (["results", 0, "files", 0, "size"], -1, "results[0].files[0].size must be a whole"),
        (["results", 0, "files", 0, "size"], True, "results[0].files[0].size must be a whole"),
        (["results", 0, "files", 0, "size"], 1.5, "results[0].files[0].size must be a whole"),
        (["results", 0, "files", 0, "size"], 2**64, "results[0].files[0].size must be a whole"),
        (["results", 0, "files", 0, "md5"], "XYZ", "results[0].files[0].md5 must be 32"),
        (["results", 1, "imdb_ids"], ["tt12"], "results[1].imdb_ids[0] must be an IMDb id"),
        (["results", 1, "imdb_ids"], ["tt0111161"] * 17, "at most 16"),
        (
            ["results", 1, "tvdb_ids"],
            ["\uff18\uff11\uff11\uff18\uff19"],
            "must be a TVDB series id",
        ),
        (["results", 1, "tvdb_ids"], ["9999999999"], "must be a TVDB series id"),
        (["results", 1, "release_names"], [REAL] * 9, "at most 8"),
        (["results", 1, "release_names"], ["a\x00b"], "NUL"),
        (["results", 2, "passworded"], "yes", "results[2].passworded must be true, false"),
        (["results", 2, "errors"], [{"part": "rar"}], "results[2].errors[0].error is required"),
        (["results", 2, "yenc"], [], "results[2].yenc must be a JSON object"),
        (["results"], [{"role": "par2"}] * 4, "results has 4 entries; at most 3"),
        (["results"], "all", "results must be a list"),
        (["missing"], [{"role": "nfo", "message_id": "<a@b>"}], "missing[0].error is required"),
        (["missing"], [{"role": "x", "message_id": "<a@b>", "error": "e"}], "missing[0].role"),
        # Text PostgreSQL cannot store: JSON's "\ud800" is a lone surrogate.
        (["results", 1, "release_names"], ["Some.\ud800.Name-GRP"], "release_names[0] is not"),
        (["results", 1, "notes"], ["read as \udfff"], "results[1].notes[0] is not valid Unicode"),
        (["results", 0, "files", 0, "name"], "x\ud800.rar", "files[0].name is not valid Unicode"),
        (["results", 0, "yenc", "name"], "\ud83d", "results[0].yenc.name is not valid Unicode"),
        (
            ["missing"],
            [{"role": "nfo", "message_id": "<a@b>", "error": "430 \udc80"}],
            "missing[0].error is not valid Unicode",
        ),
        # The agent's own sentences hold no invisible character.
        (["results", 1, "notes"], ["read as \u202ecp437"], "notes[0] holds the invisible"),
        (
            ["results", 2, "errors"],
            [{"part": "rar", "error": "bad\u2028header"}],
            "results[2].errors[0].error holds the invisible character U+2028",
        ),
    ],
)
def test_what_is_out_of_bounds_is_refused_naming_the_field(path, value, says):
    with pytest.raises(Invalid) as refused:
        validate_report(broken(path, value))
    assert says in refused.value.detail


def test_one_result_per_role():
    twice = payload(nfo_result(REAL), nfo_result(REAL))
    with pytest.raises(Invalid, match="names the nfo more than once"):
        validate_report(twice)


def test_an_empty_report_is_refused():
    with pytest.raises(Invalid, match="names no result and no missing article"):
        validate_report({"epoch": 2, "results": [], "missing": []})


def test_a_report_that_is_not_an_object_is_refused():
    with pytest.raises(Invalid, match="the report must be a JSON object"):
        validate_report([1, 2])


# --- which name wins, rule by rule ------------------------------------------------------------


def chosen(*results: dict[str, Any], missing: list[dict[str, str]] | None = None):
    return choose_name(validate_report(payload(*results, missing=missing)))


def test_rule_1_the_nfo_s_release_name_wins_when_it_parses_as_a_release():
    choice = chosen(
        par2_result(("Other.Name.2019.720p.WEB.x264-XYZ.mkv", 5 * VOLUME)),
        nfo_result(REAL),
        archive_result(("inner.file.2018.mkv", 5 * VOLUME)),
    )
    assert (choice.name, choice.rule) == (REAL, "nfo")
    assert REAL in choice.why


def test_rule_1_an_nfo_name_with_no_kind_gives_way_to_the_par2():
    choice = chosen(par2_result(*MOVIE_SET), nfo_result("Random.Words.Together-GRP"))
    assert (choice.name, choice.rule) == (REAL, "par2")
    assert {
        "source": "nfo",
        "name": "Random.Words.Together-GRP",
        "refused": "no title and kind",
    } in (choice.refused)


def test_rule_1_an_obfuscated_nfo_name_never_wins():
    choice = chosen(par2_result(*MOVIE_SET), nfo_result("a8f7d6e5c4b3.x1y2z3.k9j8h7-q9w8e7"))
    assert choice.rule == "par2"
    assert choice.refused[0]["refused"] == "obfuscated itself"


@pytest.mark.parametrize(
    "volumes",
    [
        (".part01.rar", ".part02.rar", ".part03.rar"),
        (".rar", ".r00", ".r01"),
        (".7z.001", ".7z.002", ".7z.003"),
        (".mkv",),
    ],
)
def test_rule_2_the_par2_names_common_stem_of_the_main_files(volumes):
    files = [(REAL + suffix, VOLUME) for suffix in volumes]
    files += [(f"{REAL}.vol03+04.par2", 40_000), (f"{REAL}.nfo", 2_000), ("Sample.mkv", 90_000)]
    choice = chosen(par2_result(*files))
    assert (choice.name, choice.rule) == (REAL, "par2")


def test_rule_2_the_largest_set_wins_over_a_sample_with_another_stem():
    choice = chosen(
        par2_result(
            ("movie-sample.mkv", 50 * VOLUME),  # larger than any one volume
            *((f"{REAL}.part{n:02d}.rar", VOLUME) for n in range(1, 60)),
        )
    )
    assert choice.name == REAL


def test_rule_2_obfuscated_par2_names_give_way_to_the_archive():
    choice = chosen(
        par2_result(("x9y8z7.part01.rar", VOLUME), ("x9y8z7.part02.rar", VOLUME)),
        archive_result((f"{REAL}.mkv", 2 * VOLUME), ("sample.mkv", 1000)),
    )
    assert (choice.name, choice.rule) == (REAL, "archive")
    assert choice.refused[0] == {"source": "par2", "name": "x9y8z7", "refused": "obfuscated itself"}


def test_rule_3_the_archive_s_largest_inner_file():
    choice = chosen(archive_result(("Extras/Featurette.mkv", VOLUME), (f"{REAL}.mkv", 3 * VOLUME)))
    assert (choice.name, choice.rule) == (REAL, "archive")


def test_rule_3_an_obfuscated_inner_file_is_named_by_its_folder():
    choice = chosen(archive_result((f"{REAL}/a1b2c3d4e5.mkv", 3 * VOLUME)))
    assert (choice.name, choice.rule) == (REAL, "archive")


def test_rule_4_nothing_named_it_keeps_the_posted_name_and_says_why():
    choice = chosen(
        archive_result(headers_encrypted=True),
        missing=[{"role": "par2", "message_id": "<a1@x>", "error": "430 no such article"}],
    )
    assert (choice.name, choice.rule) == (None, "posted")
    assert "the par2 could not be fetched (430 no such article)" in choice.why
    assert "no nfo was read" in choice.why
    assert "the archive's headers are encrypted" in choice.why


def test_rule_4_obfuscated_names_everywhere_are_refused_and_named_in_why():
    choice = chosen(par2_result(("q1w2e3r4.mkv", VOLUME)), archive_result(("z9x8c7.mkv", VOLUME)))
    assert choice.name is None
    assert "every name found was refused ('q1w2e3r4': obfuscated itself)" in choice.why


# --- matching files to FileDescs ---------------------------------------------------------


def sized(name: str, real: int, index: int, segments: int = 2) -> CatalogFileSize:
    """A catalog file of a file of `real` bytes: yEnc's ~2 % and headers on top."""
    return CatalogFileSize(name, index, int(real * 1.02) + 600 * segments, segments)


def test_files_match_by_yenc_size_then_size_order_with_equal_sizes_in_posting_order():
    report_ = validate_report(
        payload(
            par2_result(*MOVIE_SET),
            archive_result(yenc=("zzz3.bin", 123_456)),  # the last volume, by its exact size
        )
    )
    files = [
        sized("b1c2d3.par2", 4_000, 1),
        sized("zzz2.bin", VOLUME, 3),  # posted second: part02
        sized("zzz1.bin", VOLUME, 2),  # posted first: part01
        sized("zzz3.bin", 123_456, 4),
        sized("zzz4.bin", 2_000, 5, segments=1),
    ]
    # Equal volumes encode to slightly different bytes: their order decides, not the bytes.
    files[1] = CatalogFileSize("zzz2.bin", 3, files[2].bytes - 10, 2)
    names, how = match_files(report_, files)
    assert names == {
        "zzz1.bin": f"{REAL}.part01.rar",
        "zzz2.bin": f"{REAL}.part02.rar",
        "zzz3.bin": f"{REAL}.part03.rar",
        "zzz4.bin": f"{REAL}.nfo",
    }
    assert how == "1 by their yEnc size, 3 by size order"


def test_files_that_fit_no_filedesc_are_left_out_before_the_order():
    """Every name random, par2 ones too: the par2 index and a volume fit no FileDesc."""
    report_ = validate_report(payload(par2_result(*MOVIE_SET, yenc_name="k1.bin")))
    files = [
        sized("k1.bin", 4_000, 1, segments=1),  # the par2 index (its yEnc name)
        sized("k2.bin", 300_000, 2),  # a par2 volume: between the nfo and part03
        sized("k3.bin", VOLUME, 3),
        sized("k4.bin", VOLUME, 4),
        sized("k5.bin", 123_456, 5),
        sized("k6.bin", 2_000, 6, segments=1),
    ]
    names, _ = match_files(report_, files)
    assert names == {
        "k3.bin": f"{REAL}.part01.rar",
        "k4.bin": f"{REAL}.part02.rar",
        "k5.bin": f"{REAL}.part03.rar",
        "k6.bin": f"{REAL}.nfo",
    }


def test_no_order_match_when_the_counts_differ_or_a_size_does_not_fit():
    report_ = validate_report(payload(par2_result(*MOVIE_SET)))
    three = [sized("a.bin", VOLUME, 1), sized("b.bin", VOLUME, 2), sized("c.bin", 123_456, 3)]
    assert match_files(report_, three)[0] == {}
    # Each fits some FileDesc, but a third volume-sized file leaves part03 none that fits.
    mismatched = [*three[:2], sized("c.bin", VOLUME, 3), sized("d.bin", 2_000, 4, segments=1)]
    names, how = match_files(report_, mismatched)
    assert names == {}
    assert "the sizes do not fit" in how


# --- apply_inspection ----------------------------------------------------------------------


@pytest.fixture
def obfuscated(db) -> Release:
    """An obfuscated post of four files: par2, two volumes and an nfo, under one stem."""
    group = GroupFactory()
    store_files(
        group.id,
        None,
        [],
        [
            report("b1c2d3.par2", (1,), 1, index=1, count=4, size=4_000),
            report("b1c2d3.part01.rar", (1, 2), 2, index=2, count=4, size=VOLUME // 2),
            report("b1c2d3.part02.rar", (1, 2), 2, index=3, count=4, size=VOLUME // 2 - 200),
            report("b1c2d3.nfo", (1,), 1, index=4, count=4, size=2_100),
        ],
    )
    return Release.objects.get()


def applied(release: Release, *results: dict[str, Any], **kwargs: Any) -> Applied:
    with transaction.atomic():
        return apply_inspection(release.id, validate_report(payload(*results, **kwargs)))


def movie_par2() -> dict[str, Any]:
    return par2_result(
        (f"{REAL}.part01.rar", VOLUME - 2_000),
        (f"{REAL}.part02.rar", VOLUME - 2_000),
        (f"{REAL}.nfo", 2_000),
    )


def test_an_obfuscated_release_is_renamed_reparsed_and_recategorised(obfuscated):
    assert (obfuscated.name, obfuscated.category) == ("b1c2d3", 8010)
    result = applied(obfuscated, movie_par2(), nfo_result(REAL, imdb=("tt0111161",)))
    assert result == Applied(
        release_id=obfuscated.id,
        name=REAL,
        category=2040,
        renamed=True,
        passworded=False,
        encrypted=False,
        why=f"Named by the nfo's release name {REAL!r}.",
        rule="nfo",
    )
    release = Release.objects.get()
    assert (release.name, release.posted_name) == (REAL, "b1c2d3")
    assert (release.kind, release.title_key, release.year) == ("movie", "movie name", 2020)
    assert (release.resolution, release.release_group) == (1080, "GRP")
    assert (release.imdb_id, release.tvdb_id) == ("tt0111161", None)
    assert release.inspected_at is not None
    assert release.inspection["rule"] == "nfo"
    assert [r["role"] for r in release.inspection["results"]] == ["par2", "nfo"]
    assert release.real_names == {
        "b1c2d3.part01.rar": f"{REAL}.part01.rar",
        "b1c2d3.part02.rar": f"{REAL}.part02.rar",
        "b1c2d3.nfo": f"{REAL}.nfo",
    }


def test_reinspection_never_loses_the_posted_name(obfuscated):
    applied(obfuscated, movie_par2())
    other = "Another.Movie.2021.720p.WEB.x264-ABC"
    again = applied(obfuscated, nfo_result(other, tvdb=("81189",)))
    release = Release.objects.get()
    assert (again.renamed, release.name, release.posted_name) == (True, other, "b1c2d3")
    assert release.tvdb_id == 81189


def test_a_reinspection_that_finds_nothing_keeps_the_name_found_before(obfuscated):
    applied(obfuscated, movie_par2(), nfo_result(REAL, imdb=("tt0111161",)))
    kept = applied(
        obfuscated,
        missing=[{"role": "par2", "message_id": "<a1@x>", "error": "430 no such article"}],
    )
    release = Release.objects.get()
    assert (kept.renamed, kept.name, release.posted_name) == (False, REAL, "b1c2d3")
    assert kept.why.startswith(f"Kept the name found before ({REAL!r}): ")
    assert release.imdb_id == "tt0111161"  # an id not found again stays
    assert release.real_names  # the mapping found before stays


def test_a_release_nothing_names_keeps_its_posted_name_and_says_why(obfuscated):
    kept = applied(obfuscated, archive_result(headers_encrypted=True))
    release = Release.objects.get()
    assert (kept.renamed, release.name, release.posted_name) == (False, "b1c2d3", None)
    assert kept.why.startswith("Kept its posted name: ")
    assert (release.passworded, release.encrypted) == (True, True)
    assert (release.inspection["rule"], release.inspection["why"]) == ("posted", kept.why)


NAMED = "Some.Show.S01E02.1080p.WEB.h264-GRP"


@pytest.fixture
def named(db) -> Release:
    """A release posted under its real (scene) name: two volumes."""
    group = GroupFactory()
    store_files(
        group.id,
        None,
        [],
        [
            report(f"{NAMED}.part01.rar", (1, 2), 2, index=1, count=2, size=VOLUME // 2),
            report(f"{NAMED}.part02.rar", (1, 2), 2, index=2, count=2, size=VOLUME // 2),
        ],
    )
    return Release.objects.get()


def test_a_real_posted_name_is_kept_and_the_candidate_named_in_why(named):
    # INSPECT_RELEASES=all or "inspect again" on a release with a real name: a par2
    # stem (here another release's) does not replace what the poster named it.
    assert named.name == NAMED
    kept = applied(named, movie_par2())
    release = Release.objects.get()
    assert (kept.renamed, kept.rule, release.name, release.posted_name) == (
        False, "posted", NAMED, None,
    )  # fmt: skip
    assert kept.why == (f"Kept its posted name, which is not obfuscated; the par2 named {REAL!r}.")
    assert release.inspection["rule"] == "posted" and release.inspection["why"] == kept.why


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"encrypted": True}, (True, False)),
        ({"passworded": True}, (True, False)),
        ({"headers_encrypted": True}, (True, True)),
        ({}, (False, False)),
    ],
)
def test_passworded_and_encrypted_from_the_archive(obfuscated, flags, expected):
    result = applied(obfuscated, archive_result((f"{REAL}.mkv", 3 * VOLUME), **flags))
    release = Release.objects.get()
    assert (result.passworded, result.encrypted) == expected
    assert (release.passworded, release.encrypted) == expected


def unread_archive() -> dict[str, Any]:
    """An archive whose first volume the parser could not read (a CRC error)."""
    result = InspectResult(role="archive", format="rar5")
    result.errors.append({"part": "archive", "error": "A RAR5 header at byte 8 fails its CRC."})
    return result.to_json()


@pytest.mark.parametrize(
    "again",
    [
        {"missing": [{"role": "archive", "message_id": "<r1@x>", "error": "430 no such article"}]},
        {"results": [unread_archive()]},
        {"results": [nfo_result(REAL)]},  # no archive asked for this time
    ],
    ids=["archive-expired", "archive-unreadable", "no-archive"],
)
def test_a_reinspection_that_reads_no_archive_keeps_the_flags(obfuscated, again):
    applied(obfuscated, archive_result((f"{REAL}.mkv", 3 * VOLUME), headers_encrypted=True))
    kept = applied(obfuscated, *again.get("results", ()), missing=again.get("missing"))
    release = Release.objects.get()
    assert (kept.passworded, kept.encrypted) == (True, True)
    assert (release.passworded, release.encrypted) == (True, True)


def test_a_reinspection_that_reads_an_open_archive_clears_the_flags(obfuscated):
    applied(obfuscated, archive_result((f"{REAL}.mkv", 3 * VOLUME), passworded=True))
    cleared = applied(obfuscated, archive_result((f"{REAL}.mkv", 3 * VOLUME)))
    assert (cleared.passworded, cleared.encrypted) == (False, False)
    assert Release.objects.get().passworded is False


def test_an_unknown_release_is_not_found(db):
    with pytest.raises(NotFound, match="Release 999999 does not exist"):
        applied(Release(id=999_999), nfo_result(REAL))


def test_the_release_row_is_locked_for_the_caller_s_transaction(obfuscated):
    with transaction.atomic():
        apply_inspection(obfuscated.id, validate_report(payload(nfo_result(REAL))))
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                " WHERE c.relname = 'catalog_release' AND l.mode = 'RowShareLock'"
                " AND l.pid = pg_backend_pid()"
            )
            assert cursor.fetchone()[0] == 1


# --- the NZB --------------------------------------------------------------------------------

NZB = "{http://www.newzbin.com/DTD/2003/nzb}"


def test_the_nzb_carries_the_real_names_in_its_head_and_keeps_the_subjects(obfuscated):
    posted = release_nzb_stream(obfuscated.id)[0]
    subjects = [f.get("subject") for f in etree.fromstring(b"".join(posted)).iter(f"{NZB}file")]
    applied(obfuscated, movie_par2(), nfo_result(REAL))
    chunks, name = release_nzb_stream(obfuscated.id)
    doc = etree.fromstring(b"".join(chunks))
    assert DTD.validate(doc), DTD.error_log
    assert name == REAL
    metas = [(m.get("type"), m.text) for m in doc.iter(f"{NZB}meta")]
    assert metas == [
        ("title", REAL),
        ("name", REAL),
        ("x-real-name", f"b1c2d3.nfo => {REAL}.nfo"),
        ("x-real-name", f"b1c2d3.part01.rar => {REAL}.part01.rar"),
        ("x-real-name", f"b1c2d3.part02.rar => {REAL}.part02.rar"),
    ]
    assert [f.get("subject") for f in doc.iter(f"{NZB}file")] == subjects
    assert all("b1c2d3" in s for s in subjects)


def test_a_posted_name_holding_the_arrow_is_left_out_and_the_rest_escaped():
    doc = etree.fromstring(
        render_nzb([], "Real & <Name>", {"a => b.bin": "x.mkv", "c<d>.bin": "R&D.mkv"})
    )
    metas = [(m.get("type"), m.text) for m in doc.iter(f"{NZB}meta")]
    assert metas == [
        ("title", "Real & <Name>"),
        ("name", "Real & <Name>"),
        ("x-real-name", "c<d>.bin => R&D.mkv"),
    ]


# --- hostile names: control characters, paths and the meta's arrow -----------------------


@pytest.mark.parametrize(
    "bad",
    ["..", ".", "", "../../etc/passwd", "dir/x.rar", "C:\\x.rar", "a => b.rar", "x\x1b[2J.rar",
     "x\x85.rar", "x\t.rar", "<script>.rar", "x\u202erar.exe", "x\u2028.rar", "a:b.rar"],
)  # fmt: skip
def test_a_filedesc_that_is_no_plain_file_name_maps_nothing(bad):
    report_ = validate_report(
        payload(par2_result((bad, 123_456), (f"{REAL}.nfo", 2_000)),
                archive_result(yenc=("zzz1.bin", 123_456)))
    )  # fmt: skip
    files = [sized("zzz1.bin", 123_456, 1), sized("zzz2.bin", 2_000, 2, segments=1)]
    names, _ = match_files(report_, files)
    assert names == {"zzz2.bin": f"{REAL}.nfo"}  # the other FileDesc still maps


def test_a_name_holding_a_control_character_is_dropped_not_the_report():
    # A par2 or nfo is the poster's: an honest node relays what it read. The candidate
    # is refused (and listed); the report and the next candidate stand.
    choice = chosen(
        par2_result((f"{REAL}\x1b[31m.part01.rar", VOLUME), (f"{REAL}\x1b[31m.part02.rar", VOLUME)),
        nfo_result(f"{REAL}\x07", "Clean.Show.S01E01.720p.HDTV.x264-ABC"),
    )
    assert (choice.name, choice.rule) == ("Clean.Show.S01E01.720p.HDTV.x264-ABC", "nfo")
    assert {"source": "nfo", "name": f"{REAL}\x07", "refused": "holds a control character"} in (
        choice.refused
    )
    par2_only = chosen(par2_result(("Bad\x9bName.2020.mkv", VOLUME)))
    assert par2_only.name is None and "control character" in par2_only.why


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("Some.Movie.2020.1080p/../../etc-GRP", "not a release name"),
        ("Some.Movie.2020.<script>alert(1)</script>-GRP", "not a release name"),
        ("Some.Movie.2020.1080p.\u202eBluRay-GRP", "holds the invisible character U+202E"),
        ("Some.Movie.2020.1080p.Blu\u200bRay-GRP", "holds the invisible character U+200B"),
        ("Some.Movie.2020\u2028.1080p.BluRay-GRP", "holds the invisible character U+2028"),
        ("Some Movie 2020 1080p BluRay GRP", "not a release name"),
    ],
)
def test_an_nfo_name_the_nfo_rule_would_not_find_is_refused(name, reason):
    # The agent's nfo parser finds only Words.Joined.By.Dots-GROUP; a report that
    # names anything else is not the reference agent's, and it names no release.
    choice = chosen(nfo_result(name, REAL))
    assert (choice.name, choice.rule) == (REAL, "nfo")
    assert choice.refused[0]["name"] == name
    assert reason in choice.refused[0]["refused"]


@pytest.mark.parametrize(
    ("stem", "reason"),
    [
        ("Some.Movie.2020.<script>alert(1)<", "not a plain file name"),
        ('Some.Movie: "2020" | 1080p?', "not a plain file name"),
        ("Some.Movie.2020.1080p.\u202eBluRay-GRP", "holds the invisible character U+202E"),
        ("Some.Movie.2020.1080p.\u2029BluRay-GRP", "holds the invisible character U+2029"),
    ],
)
def test_a_par2_or_archive_name_that_is_no_plain_file_name_is_refused(stem, reason):
    choice = chosen(par2_result((f"{stem}.mkv", VOLUME)), archive_result((f"{stem}.mkv", VOLUME)))
    assert choice.name is None
    assert [(r["source"], r["refused"]) for r in choice.refused] == [
        ("par2", reason),
        ("archive", reason),
    ]
    names, _ = match_files(
        validate_report(payload(par2_result((f"{stem}.mkv", VOLUME)))),
        [sized("zzz1.bin", VOLUME, 1)],
    )
    assert names == {}  # nor handed to a downloader in the NZB


def test_rule_2_a_refused_largest_base_gives_way_to_the_next_largest():
    # The biggest set is posted under a random stem inside the par2 too; the real
    # name is the next set's (a sample, an extra): it names the release, not the archive.
    choice = chosen(
        par2_result(
            ("a8f7d6e5c4b3.part01.rar", 5 * VOLUME),
            ("a8f7d6e5c4b3.part02.rar", 5 * VOLUME),
            (f"{REAL}.mkv", VOLUME),
        ),
        archive_result(("inner.file.2018.mkv", 5 * VOLUME)),
    )
    assert (choice.name, choice.rule) == (REAL, "par2")
    assert choice.refused[0] == {
        "source": "par2", "name": "a8f7d6e5c4b3", "refused": "obfuscated itself",
    }  # fmt: skip


def test_docs_api_md_s_report_example_says_the_real_sentence():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    why = chosen(par2_result(*MOVIE_SET)).why
    assert f'"why": "{why}"' in docs
