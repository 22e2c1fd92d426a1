"""The report and release endpoints' own body caps (docs/api.md): 413 before parsing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog import inspection as catalog_inspection
from inspection import MAX_REPORTED_FILES, MAX_REPORTED_NAME, ROLES
from inspections.models import Inspection, InspectionStatus
from inspections.serializers import MAX_RELEASE_BYTES, MAX_REPORT_BYTES
from usenet.limits import MAX_EPOCH

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


WIDE = "\U0001f600"  # one character, twelve bytes in ASCII JSON ("\ud83d\ude00")


def worst_report() -> dict[str, Any]:
    """A report at every bound validate_report accepts, every character the widest
    in ASCII JSON (what the agent sends, seed_node/http.py: json.dumps' ensure_ascii)."""

    def text(most: int) -> str:
        return WIDE * most

    def result(role: str) -> dict[str, Any]:
        big = catalog_inspection.MAX_SIZE
        return {
            "role": role,
            "format": catalog_inspection.FORMATS[role][0],
            "yenc": {
                "name": text(MAX_REPORTED_NAME),
                "size": big,
                "part": big,
                "total": big,
                "begin": big,
                "end": big,
                "crc_checked": True,
            },
            "files": [
                {
                    "name": text(MAX_REPORTED_NAME),
                    "size": big,
                    "encrypted": False,
                    "packed_size": big,
                    "md5": "f" * 32,
                    "hash16k": "f" * 32,
                }
                for _ in range(MAX_REPORTED_FILES)
            ],
            "files_truncated": True,
            "imdb_ids": ["tt12345678"] * catalog_inspection.MAX_IDS,
            "tvdb_ids": [str(catalog_inspection.TVDB_MAX)] * catalog_inspection.MAX_IDS,
            "release_names": [text(MAX_REPORTED_NAME)] * catalog_inspection.MAX_RELEASE_NAMES,
            "volume": False,
            "solid": False,
            "headers_encrypted": False,
            "passworded": False,
            "archive_size": big,
            "complete": False,
            "notes": [text(catalog_inspection.MAX_TEXT)] * catalog_inspection.MAX_NOTES,
            "errors": [{"part": text(40), "error": text(catalog_inspection.MAX_TEXT)}]
            * catalog_inspection.MAX_ERRORS,
        }

    missing = [
        {
            "role": role,
            "message_id": text(catalog_inspection.MAX_MESSAGE_ID),
            "error": text(catalog_inspection.MAX_TEXT),
        }
        for role in ROLES
    ]
    return {"epoch": MAX_EPOCH, "results": [result(role) for role in ROLES], "missing": missing}


def test_the_largest_report_the_coordinator_accepts_fits_the_body_cap():
    # The agent releases a lease whose report got a 413 (counted): no report the
    # coordinator would accept may be refused for its size.
    body = worst_report()
    catalog_inspection.validate_report(body)  # accepted: at the bounds, not past them
    sent = json.dumps(body, separators=(",", ":")).encode("utf-8")
    assert sent.isascii()
    assert len(sent) <= MAX_REPORT_BYTES, f"{len(sent):,} bytes"


def test_reports_together_over_their_cap_are_413_before_they_are_parsed(node_client):
    from inspections.serializers import MAX_REPORTS, MAX_REPORTS_BYTES

    assert MAX_REPORTS_BYTES == MAX_REPORTS * MAX_REPORT_BYTES  # each as large as one alone
    body = b"{" + b" " * MAX_REPORTS_BYTES
    response = node_client().http.generic(
        "POST", "/api/v1/inspections/reports", body, content_type="application/json"
    )
    assert response.status_code == 413, response.content
    assert response.json()["error"] == "too_large"
