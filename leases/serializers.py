"""Input and output shapes of the group-lease protocol (docs/api.md)."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import WholeNumberField
from seeding.serializers import EpochIn, OfferOut
from usenet.limits import MAX_ARTICLE, MAX_BIGINT

from .lanes import LANES


class LaneIn(serializers.Serializer):
    lane = serializers.ChoiceField(choices=LANES)


class NextIn(EpochIn):
    read = WholeNumberField(
        min_value=1,
        max_value=MAX_BIGINT,
        required=False,
        help_text=(
            "The range in work the holder has read to its end: `next` hands out the lane's "
            "following range while this one's last batch and finish are on their way."
        ),
    )


class SnapshotQueryIn(EpochIn):
    pass


class SnapshotPutQueryIn(EpochIn):
    next = WholeNumberField(
        min_value=0, max_value=MAX_ARTICLE, help_text="The first article the window has not read."
    )


class GroupOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    priority = serializers.IntegerField()


class SnapshotOut(serializers.Serializer):
    next = serializers.IntegerField()
    size = serializers.IntegerField()
    first = serializers.IntegerField(
        allow_null=True,
        help_text="The lane's first article: no segment of the snapshot is before it.",
    )
    last = serializers.IntegerField(
        allow_null=True,
        help_text="The lane's last article: no segment of the snapshot is after it.",
    )


class LaneLeaseOut(serializers.Serializer):
    group = GroupOut()
    lane = serializers.CharField()
    epoch = serializers.IntegerField()
    rules = serializers.DictField(help_text="The rule set in force (current_rules().to_dict()).")
    snapshot = SnapshotOut(allow_null=True)


class LaneOfferOut(OfferOut):
    lease = LaneLeaseOut(allow_null=True)


class LaneRangeOut(serializers.Serializer):
    """The next range of a lane, in article order, leased to the lane's holder."""

    id = serializers.IntegerField()
    start = serializers.IntegerField(help_text="The range's first article number.")
    end = serializers.IntegerField(help_text="Its last article number (inclusive).")
    next = serializers.IntegerField(help_text="The resume point: the first article not reported.")
    epoch = serializers.IntegerField(help_text="The range's own epoch, for batch and finish.")


class NextOut(serializers.Serializer):
    range = LaneRangeOut(allow_null=True, help_text="Null when the lane is caught up.")
