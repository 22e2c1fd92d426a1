"""Domain errors reach each audience in its own terms.

A service raises an `core.errors` class that knows nothing of HTTP; the API
answers it with the status and code docs/api.md promises, a management command
with a CommandError, the admin with a message. The cases below make the real
services raise each domain error over real HTTP against PostgreSQL.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.urls import reverse

from core import errors as domain
from core.api.errors import DOMAIN_ERRORS, exception_handler, response_for_unhandled
from core.errors import DomainError
from indexer.models import Node
from indexer.newsserver import close_news_pool
from inspections.planning import plan_all
from leases.models import GroupLane
from leases.upload_guard import Holder, one_upload
from newznab.api import error_response as newznab_error_response
from newznab.errors import NewznabError, RateLimited
from newznab.errors import Unavailable as NewznabUnavailable
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane, next_range
from tests.support.nntpd import NNTPServer
from tests.support.nodes import NodeClient
from tests.support.releases import store_fragments
from tests.support.reports import release_files
from tests.support.small_disk import fill, small_disk
from tests.support.snapshots import padded_files, window_snapshot

pytestmark = pytest.mark.django_db


def leased_range(node: NodeClient) -> dict[str, Any]:
    SeedRangeFactory(start_id=1000, end_id=5999)
    lease = node.lease()
    assert lease is not None
    return lease


def invalid_lane(node: NodeClient) -> Any:
    # leases.services.checked_lane: the URL accepts any word, the service judges it.
    return node.post("/api/v1/groups/1/lanes/sideways/heartbeat", {"epoch": 1})


def unknown_range(node: NodeClient) -> Any:
    return node.post("/api/v1/ranges/987654321/heartbeat", {"epoch": 1})


def stale_epoch(node: NodeClient) -> Any:
    lease = leased_range(node)
    return node.post(f"/api/v1/ranges/{lease['id']}/heartbeat", {"epoch": lease["epoch"] + 1})


def oversized_snapshot(node: NodeClient) -> Any:
    with override_settings(SNAPSHOT_MAX_BYTES=10):
        return node.http.put(
            "/api/v1/groups/1/lanes/history/snapshot?epoch=1&next=1",
            b"x" * 11,
            content_type="application/gzip",
        )


def full_snapshot_disk(node: NodeClient) -> Any:
    SeedRangeFactory(start_id=1000, end_id=5999)
    lease = lease_lane(node)["lease"]
    next_range(node, lease)  # handed out: the window's files lie in its articles
    with (
        tempfile.TemporaryDirectory() as tmp,
        small_disk(Path(tmp) / "snapshots", "16k") as directory,
        override_settings(SNAPSHOT_DIR=directory, SNAPSHOT_KEEP_FREE_BYTES=0),
    ):
        fill(directory)
        return node.http.put(
            lane_path(lease, "snapshot") + f"?epoch={lease['epoch']}&next=1000",
            window_snapshot(lease["group"]["name"], padded_files(1000, 5000), level=0),
            content_type="application/gzip",
        )


def upload_in_progress(node: NodeClient) -> Any:
    SeedRangeFactory(start_id=1000, end_id=5999)
    lease = lease_lane(node)["lease"]
    lane = GroupLane.objects.get(group_id=lease["group"]["id"], lane="history")
    with tempfile.TemporaryDirectory() as tmp, override_settings(SNAPSHOT_DIR=tmp):
        with one_upload(Holder(lane.id, node.node.id, lease["epoch"])):  # another is streaming
            return node.http.put(
                lane_path(lease, "snapshot") + f"?epoch={lease['epoch']}&next=1000",
                window_snapshot(lease["group"]["name"]),
                content_type="application/gzip",
            )


def no_news_server(node: NodeClient) -> Any:
    lease = leased_range(node)
    query = f"epoch={lease['epoch']}&from={lease['start']}&to={lease['start']}"
    with override_settings(NEWS_SERVER_URL=""):
        close_news_pool()
        return node.get(f"/api/v1/ranges/{lease['id']}/overviews?{query}")


def missing_article(node: NodeClient) -> Any:
    store_fragments(GroupFactory(), release_files("a8f7d6e5c4b3"))
    plan_all()
    lease = node.post("/api/v1/inspections/lease").json()["lease"]
    message_id = lease["articles"][0]["message_ids"][0]
    query = urlencode({"epoch": lease["epoch"], "message_id": message_id})
    with NNTPServer() as news, override_settings(NEWS_SERVER_URL=f"nntp://{news.host}:{news.port}"):
        close_news_pool()  # a news server that has none of the lease's articles
        return node.get(f"/api/v1/inspections/{lease['id']}/body?{query}")


def too_many_calls(node: NodeClient) -> Any:
    with override_settings(LEASE_RATE_PER_MINUTE=1):
        node.post("/api/v1/ranges/lease")
        return node.post("/api/v1/ranges/lease")


def too_many_leases(node: NodeClient) -> Any:
    leased_range(node)
    with override_settings(LEASE_MAX_PER_NODE=1):
        return node.post("/api/v1/ranges/lease")


# (domain error, what makes a real service raise it, status, code, start of the sentence)
CASES: list[tuple[type[DomainError], Callable[[NodeClient], Any], int, str, str]] = [
    (domain.Invalid, invalid_lane, 400, "invalid", "lane: 'sideways' is not a lane"),
    (domain.NotFound, unknown_range, 404, "not_found", "Range 987654321 does not exist."),
    (
        domain.ArticleMissing,
        missing_article,
        404,
        "no_such_article",
        "The coordinator's news server has no article <a8f7d6e5c4b3",
    ),
    (domain.LeaseLost, stale_epoch, 409, "lease_lost", "Epoch 2 of range "),
    (domain.TooLarge, oversized_snapshot, 413, "too_large", "The snapshot is 11 bytes"),
    (domain.Throttled, too_many_calls, 429, "throttled", "Too many lease calls (1 per window)"),
    (
        domain.TooManyLeases,
        too_many_leases,
        429,
        "too_many_leases",
        "This node holds 1 live leases",
    ),
    (
        domain.UploadInProgress,
        upload_in_progress,
        429,
        "upload_in_progress",
        "Another upload of this lane's snapshot is still streaming",
    ),
    (domain.Unavailable, no_news_server, 503, "unavailable", "The coordinator has no news server"),
    (
        domain.StorageFull,
        full_snapshot_disk,
        507,
        "storage_full",
        "The coordinator's snapshot storage",
    ),
]


@pytest.fixture(autouse=True)
def _no_news_pool_left_behind() -> Iterator[None]:
    yield
    close_news_pool()


@pytest.mark.parametrize(
    ("error", "make", "status", "code", "sentence"),
    CASES,
    ids=[case[0].__name__ for case in CASES],
)
def test_a_domain_error_raised_in_a_service_reaches_the_node_as_its_status_and_code(
    node_client: Callable[..., NodeClient],
    error: type[DomainError],
    make: Callable[[NodeClient], Any],
    status: int,
    code: str,
    sentence: str,
) -> None:
    response = make(node_client())
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert list(body) == ["error", "detail"]
    assert body["error"] == code
    assert body["detail"].startswith(sentence)
    # The answer comes from the one table, under the class the service raised.
    assert DOMAIN_ERRORS[error] == (status, code)


def test_every_mapped_domain_error_has_a_case_over_http() -> None:
    assert set(DOMAIN_ERRORS) == {case[0] for case in CASES}


def all_subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *all_subclasses(sub)]
    return found


def test_every_domain_error_the_apps_define_maps_to_a_status() -> None:
    # Django has imported every app; subclasses such as UnknownGroups answer as their base.
    # newznab's errors answer in the spec's own form at its edge (the next test).
    subclasses = [c for c in all_subclasses(DomainError) if not issubclass(c, NewznabError)]
    assert {"NewsServerNotConfigured", "UnknownGroups"} <= {cls.__name__ for cls in subclasses}
    for cls in subclasses:
        response = exception_handler(cls("A sentence."), {})
        assert response is not None, cls
        assert response.status_code in {status for status, _code in DOMAIN_ERRORS.values()}


def test_every_newznab_error_answers_as_the_spec_error_with_its_code() -> None:
    for cls in [NewznabError, *all_subclasses(NewznabError)]:
        error = cls("A sentence.", 30) if cls is RateLimited else cls("A sentence.")
        response = newznab_error_response(error, as_json=False)
        status = {RateLimited: 429, NewznabUnavailable: 503}.get(cls, 200)
        assert response.status_code == status, cls
        assert f'code="{cls.code}"'.encode() in response.content, cls


def test_an_unmapped_domain_error_is_a_logged_500_not_a_guess() -> None:
    response = response_for_unhandled(DomainError("Nobody mapped this."))
    assert response.status_code == 500
    assert response.content == (
        b'{"error": "internal", "detail": "The coordinator failed; the error is logged."}'
    )


def test_the_cli_turns_a_domain_error_into_a_command_error_with_its_sentence() -> None:
    with pytest.raises(CommandError) as raised:
        call_command("issue_token", "")
    assert str(raised.value) == "name: a node name is 1 to 100 characters."
    assert not Node.objects.exists()


def test_the_admin_shows_a_domain_error_as_a_message(admin_client: Any) -> None:
    group = GroupFactory()
    with override_settings(NEWS_SERVER_URL=""):
        close_news_pool()
        page = admin_client.post(
            reverse("admin:indexer_group_plan"),
            {"groups": [group.id], "size": 1000, "priority": 100},
            follow=True,
        )
    assert page.status_code == 200
    shown = [str(message) for message in page.context["messages"]]
    assert any(
        text.startswith("Nothing was planned: The coordinator has no news server") for text in shown
    ), shown


@pytest.mark.parametrize(
    "error",
    [psycopg.OperationalError("the connection is closed"), psycopg.InterfaceError("gone")],
)
def test_psycopgs_own_connection_errors_are_a_503_with_retry_after(error: Exception) -> None:
    # Raised on a session of a process's own (the upload guards', the news-server
    # slots'), which Django does not wrap in its own error classes.
    response = response_for_unhandled(error)
    assert response.status_code == 503
    assert response["Retry-After"]
    assert json.loads(response.content)["error"] == "unavailable"
