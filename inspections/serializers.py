"""Input and output shapes of the inspection protocol (docs/api.md, "Inspection leases")."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

import inspection
from core.api.fields import WholeNumberField
from seeding.serializers import EpochIn, OfferOut, ReleaseIn
from usenet.limits import MAX_BIGINT, MAX_EPOCH, MAX_MESSAGE_ID

# A report is checked in depth by catalog.inspection.validate_report (at most one
# result and one missing article per role); these bounds only keep a request from
# carrying more than any honest report before it is read.
MAX_RESULTS = 3
MAX_MISSING = 3
# The most bytes of a report's and a release's JSON body (docs/api.md): every report
# validate_report accepts fits, even with each character JSON-escaped to 12 bytes as
# the agent sends it (11.3 MB at the bounds: tests/inspections/test_body_caps.py);
# past these the body is refused with 413 before it is parsed.
MAX_REPORT_BYTES = 12 * 1024 * 1024
MAX_RELEASE_BYTES = 64 * 1024
# The most inspections one lease call hands out (`count`; the node's cap,
# INSPECT_LEASES_PER_NODE, may leave it fewer), and the most reports one call
# carries (POST /inspections/reports), whose body cap lets each be as large as one
# sent alone.
MAX_LEASE_COUNT = inspection.MAX_LEASE_COUNT
MAX_LEASE_BYTES = 1024  # a lease call's body: {"count": N}
MAX_REPORTS = inspection.MAX_REPORTS_TOGETHER
MAX_REPORTS_BYTES = MAX_REPORTS * MAX_REPORT_BYTES

__all__ = [
    "BodyQuery",
    "InspectionLeaseIn",
    "InspectionOfferOut",
    "ReleaseIn",
    "ReportIn",
    "ReportOut",
    "ReportsIn",
    "ReportsOut",
]


class ArticleOut(serializers.Serializer):
    role = serializers.ChoiceField(choices=["par2", "nfo", "archive"])
    message_ids = serializers.ListField(child=serializers.CharField())
    bytes = serializers.IntegerField(help_text="The catalog's size of those segments.")
    name = serializers.CharField(help_text="The posted (obfuscated) file name.")


class InspectionLeaseOut(serializers.Serializer):
    id = serializers.IntegerField()
    epoch = serializers.IntegerField()
    release = serializers.IntegerField()
    group = serializers.CharField()
    articles = ArticleOut(many=True)


class InspectionLeaseIn(serializers.Serializer):
    """A lease call's body, optional: how many inspections it asks for at once."""

    count = WholeNumberField(
        min_value=1,
        max_value=MAX_LEASE_COUNT,
        required=False,
        default=1,
        help_text="Inspections to hand out at once (default 1); the node's cap may leave fewer.",
    )


class InspectionOfferOut(OfferOut):
    lease = InspectionLeaseOut(allow_null=True)
    leases = InspectionLeaseOut(
        many=True, help_text="Every inspection handed out, `lease` first (empty: none)."
    )


class ReportIn(EpochIn):
    results = serializers.ListField(
        child=serializers.DictField(), max_length=MAX_RESULTS, help_text="InspectResult.to_json()"
    )
    missing = serializers.ListField(
        child=serializers.DictField(), max_length=MAX_MISSING, required=False, default=list
    )


class InspectedReleaseOut(serializers.Serializer):
    id = serializers.IntegerField(source="release_id")
    name = serializers.CharField()
    category = serializers.IntegerField()
    renamed = serializers.BooleanField()
    passworded = serializers.BooleanField()
    why = serializers.CharField()


class ReportOut(serializers.Serializer):
    release = InspectedReleaseOut(source="*")


class ReportItemIn(ReportIn):
    id = WholeNumberField(min_value=1, max_value=MAX_BIGINT, help_text="The inspection's id.")


class ReportsIn(serializers.Serializer):
    reports = serializers.ListField(child=ReportItemIn(), min_length=1, max_length=MAX_REPORTS)

    def validate_reports(self, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each inspection once: a second report of one would answer 409 for the first's."""
        seen: set[int] = set()
        for item in reports:
            if item["id"] in seen:
                raise serializers.ValidationError(
                    f"inspection {item['id']} appears twice in one call: send each report once."
                )
            seen.add(item["id"])
        return reports


class ReportItemOut(serializers.Serializer):
    """One report's answer: the release (status 200), or its error as a call alone
    would have been answered (status 400, 404 or 409, with error and detail)."""

    id = serializers.IntegerField()
    status = serializers.IntegerField()
    release = InspectedReleaseOut(required=False)
    error = serializers.CharField(required=False)
    detail = serializers.CharField(required=False)


class ReportsOut(serializers.Serializer):
    reports = ReportItemOut(many=True, help_text="One answer per report, in the order sent.")


class BodyQuery(serializers.Serializer):
    """Query of GET /inspections/{id}/body: ?epoch=&message_id=."""

    epoch = WholeNumberField(min_value=0, max_value=MAX_EPOCH)
    message_id = serializers.CharField(max_length=MAX_MESSAGE_ID)
