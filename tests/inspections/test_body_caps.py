"""The report and release endpoints' own body caps (docs/api.md): 413 before parsing."""

from __future__ import annotations

import pytest

from inspections.models import Inspection, InspectionStatus
from inspections.serializers import MAX_RELEASE_BYTES, MAX_REPORT_BYTES

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("action", "cap"), [("report", MAX_REPORT_BYTES), ("release", MAX_RELEASE_BYTES)]
)
def test_a_body_over_the_endpoint_s_cap_is_413_before_it_is_parsed(
    planned, node_client, action, cap
):
    planned()
    node = node_client()
    leased = node.post("/api/v1/inspections/lease").json()["lease"]
    url = f"/api/v1/inspections/{leased['id']}/{action}"
    # Not even JSON: parsing it would be a 400; the size answers first.
    body = b"{" + b" " * cap
    response = node.http.generic("POST", url, body, content_type="application/json")
    assert response.status_code == 413, response.content
    assert response.json() == {
        "error": "too_large",
        "detail": f"The body is {cap + 1} bytes; the limit is {cap} bytes.",
    }
    row = Inspection.objects.get()
    assert (row.status, row.epoch) == (InspectionStatus.LEASED, leased["epoch"])
    # At the cap, the body is read (and, not being JSON, refused as such).
    response = node.http.generic("POST", url, body[:cap], content_type="application/json")
    assert response.status_code == 400 and "not valid JSON" in response.json()["detail"]
