"""A node's report through the API, on a row planning wrote (real PostgreSQL).

Planning stores the articles as jsonb; read back through Django's connection
they arrive as text, so the report's check of the named roles must decode them
as the lease does (found by the INN2 end-to-end test: every report was a 500).
"""

from __future__ import annotations

import pytest

import inspection
from catalog.models import Release

pytestmark = pytest.mark.django_db


def test_a_report_on_a_planned_inspection_is_applied_and_ends_the_lease(planned, node_client):
    row = planned("a8f7d6e5c4b3")
    client = node_client()
    lease = client.post("/api/v1/inspections/lease").json()["lease"]
    assert lease["id"] == row.id
    result = inspection.inspect_article("par2", b"not a par2 article").to_json()
    answer = client.post(
        f"/api/v1/inspections/{row.id}/report",
        {"epoch": lease["epoch"], "results": [result], "missing": []},
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()["release"]
    assert body["id"] == row.release_id and body["renamed"] is False and body["why"]
    row.refresh_from_db()
    assert row.status == "done" and row.outcome["why"] == body["why"]
    assert Release.objects.get(pk=row.release_id).name == "a8f7d6e5c4b3"


def test_a_report_for_a_role_the_lease_did_not_name_is_refused_with_a_sentence(
    planned, node_client
):
    row = planned("a8f7d6e5c4b3", rars=0)
    client = node_client()
    lease = client.post("/api/v1/inspections/lease").json()["lease"]
    assert "archive" not in [a["role"] for a in lease["articles"]]
    result = inspection.inspect_article("archive", b"not an archive").to_json()
    answer = client.post(
        f"/api/v1/inspections/{row.id}/report",
        {"epoch": lease["epoch"], "results": [result], "missing": []},
    )
    assert answer.status_code == 400, answer.content
    assert "did not ask for" in answer.json()["detail"]
