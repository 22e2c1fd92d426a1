"""A batch's files in the columnar form (docs/api.md, "The columnar form"): the same
files as File objects, checked as strictly, every refusal a 400 naming the value."""

from __future__ import annotations

import random
from typing import Any

import pytest

from catalog.validation import validate_columns, validate_files
from core.errors import Invalid
from simulator.fleet import Profile, batch_body, make_files
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.reports import as_json, catalog_snapshot, report
from usenet.batch_columns import columnar

FILES = [
    as_json(report("a.part01.rar", parts=[1, 2, 3], total=3, article=1000)),
    as_json(report("b.part02.rar", parts=[2, 1], total=4, article=2000, host="other")),
    as_json(report("c.nfo", parts=[1], total=1, article=3000)),
]


def test_the_agents_columns_are_the_same_files() -> None:
    assert validate_files(columnar(FILES), "files", 10) == validate_files(FILES, "files", 10)
    assert validate_files(columnar([]), "files", 10) == []


def test_the_fleet_simulator_sends_the_agents_columns() -> None:
    files, articles = make_files("node", random.Random(1), 1, Profile(files=3, segments=4))
    body = batch_body(files, 7, 1 + articles, articles, Profile().columns)
    assert body["files"] == columnar(files[:-1])
    assert body["fragments"] == columnar(files[-1:])
    assert validate_files(body["files"], "files", 10) == validate_files(files[:-1], "files", 10)


@pytest.mark.django_db
def test_a_columnar_batch_stores_what_the_same_files_as_objects_store(node_client: Any) -> None:
    stored = []
    for form in (lambda files: files, columnar):
        group = GroupFactory()
        SeedRangeFactory(group=group, start_id=1, end_id=9999)
        node = node_client()
        lease = node.lease()
        body = {"epoch": lease["epoch"], "next": 5000, "headers": 10,
                "files": form(FILES[:2]), "fragments": form(FILES[2:])}  # fmt: skip
        answer = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
        assert answer.status_code == 200, answer.content
        assert answer.json()["stored"] == 3
        # Keys and release keys hold the group's name: the rest is compared.
        stored.append(sorted(row[3:] for row in catalog_snapshot() if row[0] == group.id))
    assert stored[0] == stored[1]


def changed(**columns: Any) -> dict[str, Any]:
    return {**columnar(FILES), **columns}


REFUSED = [
    ({**columnar(FILES), "extra": []}, "files.extra: is not a column"),
    ({k: v for k, v in columnar(FILES).items() if k != "bytes"}, "files.bytes: this column is required."),
    (changed(poster="x"), "files.poster: must be a list."),
    (changed(date=[1, 2]), "files.date: holds 2 values for 3 files"),
    (changed(segments=[3, 0, 3]), "files.segments[1]: 0 is out of range (1..100000)."),
    (changed(segments=[3, 2, 2]), "files.part: holds 6 values; the files' segment counts add up to 7"),
    (changed(part=[1, 2, 3, 2, 1, True]), "files.part[5]: must be a whole number."),
    (changed(article=[1000, 1001, 1002, 2000, -1, 3000]), "files.article[4]: -1 is out of range"),
    (changed(bytes=[1, 2, 3, 4, 5, 2**31]), "files.bytes[5]: 2147483648 is out of range"),
    (changed(message_id=["<a@b>", "<a@c>", "x", "<d@e>", "<f@g>", "<h@i>"]),
     "files.message_id[2]: 'x' is not a message-id like <part@host>."),
    (changed(message_id=["<a@b>", "<a@c>", "<\ud800@x>", "<d@e>", "<f@g>", "<h@i>"]),
     "files.message_id[2]: is not valid Unicode"),
    (changed(message_id=["<a@b>", "<a@c>", "<a\x00@x>", "<d@e>", "<f@g>", "<h@i>"]),
     "files.message_id[2]: must not contain NUL characters."),
    (changed(message_id=["<a@b>", "<a@c>", 7, "<d@e>", "<f@g>", "<h@i>"]),
     "files.message_id[2]: must be a string."),
    (changed(part=[1, 2, 3, 2, 1, 2]), "files.part[5]: 2 is out of range (1..1, the total of file 2)."),
    (changed(total=[3, 1, 1]), "files[1]: holds 2 segments, more than total (1)."),
    (changed(subject=["a", " ", "c"]), "files.subject[1]: must not be empty."),
    (changed(poster=["a", "b", "x" * 501]), "files.poster[2]: is 501 characters long"),
]  # fmt: skip


@pytest.mark.parametrize(("columns", "detail"), REFUSED)
def test_every_refusal_names_the_column_and_the_value(columns: Any, detail: str) -> None:
    with pytest.raises(Invalid) as refused:
        validate_files(columns, "files", 10)
    assert detail in str(refused.value)


def test_the_file_limit_holds_for_columns() -> None:
    with pytest.raises(Invalid) as refused:
        validate_columns(columnar(FILES), "files", 2)
    assert str(refused.value) == "files: holds 3 files; at most 2 per batch."


@pytest.mark.django_db
def test_a_refused_column_is_a_400_over_http(node_client: Any) -> None:
    SeedRangeFactory(start_id=1, end_id=9999)
    node = node_client()
    lease = node.lease()
    body = {"epoch": lease["epoch"], "next": 5000, "headers": 10,
            "files": changed(segments=[3, 0, 3])}  # fmt: skip
    answer = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("files.segments[1]: 0 is out of range")
