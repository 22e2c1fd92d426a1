"""The shape of the status report (`GET /api/v1/status`, docs/api.md "Status").

Renders the dict `selectors.seed_status()` builds, key for key: the report is
read by nodes and operators' scripts, so its keys and types are the contract.
"""

from __future__ import annotations

from rest_framework import serializers


class RangeTotalsOut(serializers.Serializer):
    ranges = serializers.IntegerField()
    articles = serializers.IntegerField()
    reached = serializers.IntegerField(help_text="Articles read past (the resume points).")
    headers = serializers.IntegerField()
    files = serializers.IntegerField()


class NodeStatusOut(serializers.Serializer):
    name = serializers.CharField()
    last_seen = serializers.DateTimeField(allow_null=True)
    disabled = serializers.BooleanField()
    live_leases = serializers.IntegerField(help_text="Range leases with a live heartbeat.")
    quiet_leases = serializers.IntegerField(
        help_text="Range leases past the lease TTL, not taken back yet."
    )
    headers_last_hour = serializers.IntegerField()
    headers_total = serializers.IntegerField(help_text="Headers its batches reported, all time.")
    ranges_finished_last_hour = serializers.IntegerField()
    finished_headers_last_hour = serializers.IntegerField(
        help_text="Headers of the ranges it finished in the last hour."
    )


class LaneStatusOut(serializers.Serializer):
    group = serializers.CharField()
    lane = serializers.CharField()
    holder = serializers.CharField(allow_null=True, help_text="The node holding it, if any.")
    epoch = serializers.IntegerField()
    range = serializers.IntegerField(allow_null=True, help_text="The range it is reading.")
    snapshot_next = serializers.IntegerField(allow_null=True)
    snapshot_age_seconds = serializers.IntegerField(allow_null=True)
    snapshot_size = serializers.IntegerField(allow_null=True)
    ranges_done = serializers.IntegerField()
    headers = serializers.IntegerField()
    live = serializers.BooleanField(help_text="Held, with a heartbeat within the lease TTL.")


class CatalogTotalsOut(serializers.Serializer):
    files = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="Files holding all of their segments.")
    segments = serializers.IntegerField()
    bytes = serializers.IntegerField()
    conflicts = serializers.IntegerField(help_text="Parts reported under a second message-id.")
    newest = serializers.DateTimeField(allow_null=True, help_text="The newest post date.")


class FinishedOut(serializers.Serializer):
    ranges = serializers.IntegerField()
    headers = serializers.IntegerField(help_text="The headers those ranges counted.")


class ReleaseBackfillOut(serializers.Serializer):
    to_parse = serializers.IntegerField(help_text="At most this many releases left to read.")
    to_count = serializers.IntegerField(help_text="At most this many left to count again.")


class StatusOut(serializers.Serializer):
    ranges = serializers.DictField(child=RangeTotalsOut(), help_text="Totals by range status.")
    catalog = CatalogTotalsOut(help_text="The catalog's exact totals (docs/catalog.md, Totals).")
    nodes = NodeStatusOut(many=True)
    lanes = LaneStatusOut(many=True)
    headers_last_hour = serializers.IntegerField()
    finished_last_hour = FinishedOut(help_text="Ranges finished in the last hour.")
    paused = serializers.CharField(allow_null=True, help_text="Why range leasing is paused.")
    catalog_full = serializers.CharField(allow_null=True, help_text="Why the catalog is full.")
    release_backfill = ReleaseBackfillOut(
        allow_null=True,
        help_text="After an upgrade, the releases the upkeep has left to read and count "
        "(estimates); null when done.",
    )
