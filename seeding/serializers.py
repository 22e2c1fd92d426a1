"""Input and output shapes of the range protocol (docs/api.md).

The File inside a batch is the catalog's shape (`catalog.serializers`).
"""

from __future__ import annotations

from rest_framework import serializers

from catalog.serializers import FileListField
from core.api.fields import WholeNumberField
from usenet.limits import MAX_ARTICLE, MAX_EPOCH, MAX_HEADERS_PER_BATCH


class EpochIn(serializers.Serializer):
    epoch = WholeNumberField(min_value=0, max_value=MAX_EPOCH)


class BatchIn(EpochIn):
    next = WholeNumberField(min_value=0, max_value=MAX_ARTICLE)
    headers = WholeNumberField(min_value=0, max_value=MAX_HEADERS_PER_BATCH)
    files = FileListField()
    fragments = FileListField()


class ReleaseIn(EpochIn):
    error = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=100_000
    )
    uncounted = serializers.BooleanField(required=False, default=False)


class RangeLeaseOut(serializers.Serializer):
    id = serializers.IntegerField()
    group = serializers.CharField()
    start = serializers.IntegerField(
        help_text="The resume point: the first article not reported yet."
    )
    end = serializers.IntegerField()
    epoch = serializers.IntegerField()


class OfferOut(serializers.Serializer):
    """What a lease call answers (a range's or a lane's): a lease, or null and when to ask again."""

    # Each offer declares its own lease; a field a subclass redeclares keeps
    # its place here, so "lease" stays the first key.
    lease: serializers.Field = serializers.JSONField(allow_null=True)
    retry_after = serializers.IntegerField(
        allow_null=True, help_text="Seconds to wait before asking again; null with a lease."
    )
    paused = serializers.CharField(allow_null=True, help_text="Why leasing is paused, if it is.")


class LeaseOfferOut(OfferOut):
    lease = RangeLeaseOut(allow_null=True)


class BatchOut(serializers.Serializer):
    next = serializers.IntegerField()
    stored = serializers.IntegerField()


class OverviewsQuery(serializers.Serializer):
    """Query of GET /ranges/{id}/overviews: ?epoch=&from=&to= ("from" is a Python keyword)."""

    epoch = WholeNumberField(min_value=0, max_value=MAX_EPOCH)
    first = WholeNumberField(
        min_value=0, max_value=MAX_ARTICLE, help_text="First article wanted (query key: from)."
    )
    to = WholeNumberField(
        min_value=0, max_value=MAX_ARTICLE, help_text="Last article wanted, inclusive."
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        first = fields.pop("first")
        first.help_text = "First article wanted."
        return {"epoch": fields["epoch"], "from": first, "to": fields["to"]}
