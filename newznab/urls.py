from __future__ import annotations

from django.urls import path

from . import api

urlpatterns = [
    path("api", api.api_view, name="newznab-api"),
    path("rss", api.rss_view, name="newznab-rss"),
]
