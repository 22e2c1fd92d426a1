from __future__ import annotations

from django.urls import path

from core.api.ping import PingView

urlpatterns = [
    path("ping", PingView.as_view(), name="ping"),
]
