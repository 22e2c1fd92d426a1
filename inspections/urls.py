from __future__ import annotations

from django.urls import path

from . import api

urlpatterns = [
    path("inspections/lease", api.InspectionLeaseView.as_view(), name="inspection-lease"),
    path("inspections/reports", api.InspectionReportsView.as_view(), name="inspection-reports"),
    path(
        "inspections/<int:inspection_id>/heartbeat",
        api.InspectionHeartbeatView.as_view(),
        name="inspection-heartbeat",
    ),
    path(
        "inspections/<int:inspection_id>/report",
        api.InspectionReportView.as_view(),
        name="inspection-report",
    ),
    path(
        "inspections/<int:inspection_id>/release",
        api.InspectionReleaseView.as_view(),
        name="inspection-release",
    ),
    path(
        "inspections/<int:inspection_id>/body",
        api.InspectionBodyView.as_view(),
        name="inspection-body",
    ),
]
