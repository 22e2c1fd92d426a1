from __future__ import annotations

from django.urls import path

from . import api

urlpatterns = [
    path("status", api.StatusView.as_view(), name="status"),
]
