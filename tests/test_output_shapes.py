"""Every JSON answer is its output serializer's rendering of the service's result.

The serializers render what the services return byte for byte: the same keys
in the same order, nulls kept, no extra field (a dataclass's internal fields
such as RangeLease.group_id or BatchResult.advanced stay inside).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from rest_framework.renderers import JSONRenderer

from catalog.models import CatalogFile
from catalog.selectors import file_detail, file_page
from console.selectors import seed_status
from leases.serializers import LaneOfferOut, NextOut
from leases.services import GroupRef, LaneLease, LaneOffer, LaneRange, SnapshotRef
from seeding.serializers import BatchOut, LeaseOfferOut
from seeding.services import BatchResult, LeaseOffer, RangeLease
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane
from tests.support.reports import report, store
from tests.support.snapshots import window_snapshot

WINDOW = window_snapshot("alt.binaries.status")
RULES = {"version": 3, "strip": ["\\.par2$"], "min_total": None}


def rendered(data: Any) -> bytes:
    return JSONRenderer().render(data)


@pytest.mark.parametrize(
    ("serializer", "instance", "expected"),
    [
        (
            LeaseOfferOut,
            LeaseOffer(RangeLease(17, "alt.binaries.x", 2500, 5999, 3, group_id=4)),
            b'{"lease":{"id":17,"group":"alt.binaries.x","start":2500,"end":5999,"epoch":3},'
            b'"retry_after":null,"paused":null}',
        ),
        (
            LeaseOfferOut,
            LeaseOffer(None, retry_after=30, paused="The catalog is full."),
            b'{"lease":null,"retry_after":30,"paused":"The catalog is full."}',
        ),
        (BatchOut, BatchResult(next=1500, stored=2, advanced=True), b'{"next":1500,"stored":2}'),
        (
            LaneOfferOut,
            LaneOffer(LaneLease(GroupRef(4, "alt.binaries.x", 100), "history", 9, RULES, None)),
            b'{"lease":{"group":{"id":4,"name":"alt.binaries.x","priority":100},'
            b'"lane":"history","epoch":9,'
            b'"rules":{"version":3,"strip":["\\\\.par2$"],"min_total":null},"snapshot":null},'
            b'"retry_after":null,"paused":null}',
        ),
        (
            LaneOfferOut,
            LaneOffer(
                LaneLease(
                    GroupRef(4, "a.b", -5), "tail", 1, {}, SnapshotRef(123456, 48213, 1000, 9999)
                )
            ),
            b'{"lease":{"group":{"id":4,"name":"a.b","priority":-5},"lane":"tail","epoch":1,'
            b'"rules":{},"snapshot":{"next":123456,"size":48213,"first":1000,"last":9999}},'
            b'"retry_after":null,"paused":null}',
        ),
        (
            NextOut,
            {"range": LaneRange(17, 1000, 5999, 1200, 4)},
            b'{"range":{"id":17,"start":1000,"end":5999,"next":1200,"epoch":4}}',
        ),
        (NextOut, {"range": None}, b'{"range":null}'),
    ],
)
def test_a_protocol_answer_renders_the_service_result_exactly(
    serializer: type, instance: Any, expected: bytes
) -> None:
    assert rendered(serializer(instance).data) == expected


@pytest.mark.django_db
class TestOverHttp:
    def test_the_status_is_the_selector_report_byte_for_byte(self, node_client, settings, tmp_path):
        settings.SNAPSHOT_DIR = tmp_path
        group = GroupFactory(name="alt.binaries.status")
        SeedRangeFactory(group=group, start_id=1, end_id=5000)
        SeedRangeFactory(group=group, start_id=5001, end_id=9000)
        node = node_client()
        lane = lease_lane(node)["lease"]
        node.post(lane_path(lane, "next"), {"epoch": lane["epoch"]})
        upload = node.http.put(
            f"{lane_path(lane, 'snapshot')}?epoch={lane['epoch']}&next=1",
            WINDOW,
            content_type="application/gzip",
        )
        assert upload.status_code == 204, upload.content
        node_client(disabled=True)  # a node that was never seen: last_seen null

        response = node.get("/api/v1/status")

        assert response.status_code == 200
        report_now = seed_status()  # one transaction: now() is the request's
        assert report_now["lanes"] and report_now["lanes"][0]["snapshot_size"] == len(WINDOW)
        assert {n["last_seen"] is None for n in report_now["nodes"]} == {True, False}
        assert response.content == rendered(report_now)

    def test_a_file_and_a_page_of_files_are_the_selector_results_byte_for_byte(self, node_client):
        group = GroupFactory(name="alt.binaries.shapes")
        store(group, report("a.rar", [1, 2], 2, date=1_600_000_000))
        store(group, report("b.rar", [1], 3, date=1_700_000_000, index=2))
        node = node_client()
        for file_id in CatalogFile.objects.values_list("id", flat=True):
            response = node.get(f"/api/v1/files/{file_id}")
            assert response.content == rendered(file_detail(file_id))

        with override_settings(CATALOG_PAGE_SIZE=1):
            response = node.get("/api/v1/files?q=rar")
            page = file_page(q="rar")
        assert response.content == rendered(
            {
                "count": 2,
                "count_capped": False,
                "next": "http://testserver/api/v1/files?page=2&q=rar",
                "results": page.results,
            }
        )
