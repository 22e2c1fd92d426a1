from __future__ import annotations

from django.urls import path

from . import api

urlpatterns = [
    path("ranges/lease", api.RangeLeaseView.as_view(), name="range-lease"),
    path("ranges/<int:range_id>/batch", api.RangeBatchView.as_view(), name="range-batch"),
    path(
        "ranges/<int:range_id>/heartbeat", api.RangeHeartbeatView.as_view(), name="range-heartbeat"
    ),
    path("ranges/<int:range_id>/finish", api.RangeFinishView.as_view(), name="range-finish"),
    path("ranges/<int:range_id>/release", api.RangeReleaseView.as_view(), name="range-release"),
    path(
        "ranges/<int:range_id>/overviews", api.RangeOverviewsView.as_view(), name="range-overviews"
    ),
]
