from __future__ import annotations

from django.urls import path

from . import api

LANE = "groups/<int:group_id>/lanes/<str:lane>"

urlpatterns = [
    path("groups/lease", api.GroupLeaseView.as_view(), name="group-lease"),
    path(f"{LANE}/next", api.LaneNextView.as_view(), name="lane-next"),
    path(f"{LANE}/heartbeat", api.LaneHeartbeatView.as_view(), name="lane-heartbeat"),
    path(f"{LANE}/release", api.LaneReleaseView.as_view(), name="lane-release"),
    path(f"{LANE}/snapshot", api.LaneSnapshotView.as_view(), name="lane-snapshot"),
]
