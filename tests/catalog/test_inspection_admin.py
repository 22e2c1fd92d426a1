"""What inspection found, in the admin and the releases API, and asking for it again
(issue 26): the release's page, the "Inspect again" action with its own permission,
`manage.py reinspect`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from catalog import inspection, release_admin
from catalog.inspection import apply_inspection, request_reinspection, validate_report
from catalog.models import Release
from catalog.services import store_files
from core.errors import Invalid, NotFound, Unavailable
from inspection import FoundFile, InspectResult
from tests.support.factories import GroupFactory
from tests.support.reports import release_files
from tests.support.staff import staff_client

pytestmark = pytest.mark.django_db

REAL = "The.Movie.Name.2020.1080p.BluRay.x264-GRP"


class Queue:
    """What the inspections app registers: here, the ids it was asked to queue."""

    def __init__(self) -> None:
        self.asked: list[list[int]] = []
        self.actors: list[str] = []

    def __call__(self, release_ids: Sequence[int], actor: str) -> int:
        self.asked.append(list(release_ids))
        self.actors.append(actor)
        return len(release_ids)


@pytest.fixture
def queue() -> Iterator[Queue]:
    installed = inspection._requeue  # the inspections app's, registered at start-up
    registered = Queue()
    inspection.register_requeue(registered)
    yield registered
    inspection.register_requeue(installed)


@pytest.fixture
def no_queue() -> Iterator[None]:
    installed = inspection._requeue
    inspection.register_requeue(None)
    yield
    inspection.register_requeue(installed)


@pytest.fixture
def release(db) -> Release:
    store_files(GroupFactory().id, None, [], release_files("a8f7d6e5c4b3"))
    found = Release.objects.get()
    nfo = InspectResult(role="nfo", format="nfo", release_names=[REAL], imdb_ids=["tt0111161"])
    archive = InspectResult(role="archive", format="rar5", passworded=True)
    archive.add_file(FoundFile(name="x9y8z7.mkv", size=3_000_000, encrypted=True))
    report = validate_report({"results": [nfo.to_json(), archive.to_json()]})
    with transaction.atomic():
        apply_inspection(found.id, report)
    found.refresh_from_db()
    return found


def test_the_release_page_shows_what_inspection_found(release):
    client = staff_client("viewer", ["catalog.view_release"])
    html = client.get(f"/admin/catalog/release/{release.id}/change/").content.decode()
    assert REAL in html and "a8f7d6e5c4b3" in html  # the name and the posted name
    assert "tt0111161" in html
    assert "Named by the nfo&#x27;s release name" in html
    assert "x9y8z7.mkv (3000000)" in html
    assert "passworded" in html
    assert "x9y8z7: obfuscated itself" not in html  # the nfo won before the archive was asked


def test_the_release_page_shows_a_tvdb_id_the_nfo_gave(db):
    store_files(GroupFactory().id, None, [], release_files("b7c6d5e4f3a2"))
    found = Release.objects.get()
    nfo = InspectResult(role="nfo", format="nfo", release_names=[REAL], tvdb_ids=["81189"])
    with transaction.atomic():
        apply_inspection(found.id, validate_report({"results": [nfo.to_json()]}))
    client = staff_client("viewer", ["catalog.view_release"])
    page = client.get(f"/admin/catalog/release/{found.id}/change/")
    assert page.status_code == 200
    assert "81189, " + REAL in page.content.decode()


def test_the_release_api_shows_what_inspection_found(release, node_client):
    body = node_client().get(f"/api/v1/releases/{release.id}").json()
    assert (body["name"], body["posted_name"]) == (REAL, "a8f7d6e5c4b3")
    assert (body["passworded"], body["encrypted"]) == (True, False)
    assert (body["imdb_id"], body["tvdb_id"]) == ("tt0111161", None)


def test_a_release_never_inspected_says_so(db):
    store_files(GroupFactory().id, None, [], release_files("Plain.Name.2020.1080p.WEB.x264-GRP"))
    client = staff_client("viewer", ["catalog.view_release"])
    page = client.get(f"/admin/catalog/release/{Release.objects.get().id}/change/")
    assert "Not inspected." in page.content.decode()


def action(client, release: Release, **extra: str):
    body = {"action": "reinspect", "_selected_action": [release.id], **extra}
    return client.post("/admin/catalog/release/", body)


def test_reinspect_asks_first_then_queues(release, queue):
    client = staff_client("inspector", ["catalog.view_release", "catalog.reinspect_release"])
    asked = action(client, release)
    assert asked.status_code == 200 and "Queue these releases" in asked.content.decode()
    assert queue.asked == []
    done = action(client, release, confirmed="yes")
    assert done.status_code == 302
    assert (queue.asked, queue.actors) == ([[release.id]], ["admin:inspector"])


def test_reinspect_needs_its_own_permission(release, queue):
    viewer = staff_client("viewer", ["catalog.view_release"])
    page = viewer.get("/admin/catalog/release/").content.decode()
    assert "reinspect" not in page  # the action is not offered
    refused = action(viewer, release, confirmed="yes")
    assert refused.status_code == 403
    assert queue.asked == []


def test_reinspect_without_an_inspection_queue_says_so(release, no_queue):
    client = staff_client("inspector", ["catalog.view_release", "catalog.reinspect_release"])
    done = action(client, release, confirmed="yes")
    follow = client.get(done["Location"]).content.decode()
    assert "No inspection queue is installed" in follow


def test_request_reinspection_names_what_it_cannot_queue(release, queue):
    with pytest.raises(NotFound, match="No release has the id 999999"):
        request_reinspection([release.id, 999_999], "test")
    with pytest.raises(Invalid, match="at least one release"):
        request_reinspection([], "test")
    assert queue.asked == []
    inspection.register_requeue(None)
    with pytest.raises(Unavailable, match="No inspection queue is installed"):
        request_reinspection([release.id], "test")


def test_the_command_queues_the_releases(release, queue):
    out = StringIO()
    call_command("reinspect", str(release.id), stdout=out)
    assert out.getvalue().strip() == "1 releases queued for inspection."
    assert (queue.asked, queue.actors) == ([[release.id]], ["manage.py reinspect"])
    with pytest.raises(CommandError, match="'x1' is no release id"):
        call_command("reinspect", "x1")
    with pytest.raises(CommandError, match="No release has the id 424242"):
        call_command("reinspect", "424242")


def test_reinspect_loads_no_more_ids_than_it_may_queue(release, queue, monkeypatch):
    # "Select all" over the whole catalog: one id past MAX_REINSPECT is read, then refused.
    for stem in ("b1c2d3e4f5a6", "c1d2e3f4a5b6"):
        store_files(GroupFactory().id, None, [], release_files(stem))
    monkeypatch.setattr(inspection, "MAX_REINSPECT", 1)
    monkeypatch.setattr(release_admin, "MAX_REINSPECT", 1)
    given: list[int] = []

    def asked(ids: list[int], actor: str) -> int:
        given.append(len(ids))
        return request_reinspection(ids, actor)

    monkeypatch.setattr(release_admin, "request_reinspection", asked)
    client = staff_client("inspector", ["catalog.view_release", "catalog.reinspect_release"])
    body = {"action": "reinspect", "select_across": "1", "index": "0", "confirmed": "yes",
            "_selected_action": [release.id]}  # fmt: skip
    done = client.post("/admin/catalog/release/", body)
    assert done.status_code == 302
    follow = client.get(done["Location"]).content.decode()
    assert "At most 1 releases can be queued at once" in follow
    assert (given, queue.asked) == ([2], [])  # 3 selected, 2 read
