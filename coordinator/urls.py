"""URL map: the admin, the node API under /api/v1/, its schema and docs, /metrics.

/healthz and /readyz are answered by a middleware (coordinator/health.py).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from console.views import metrics_view
from core.api.docs import ApiDocsView

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),
    path("", include("newznab.urls")),
    path(
        "api/v1/schema/",
        SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]),
        name="schema",
    ),
    path("api/v1/docs/", ApiDocsView.as_view(), name="api-docs"),
    path(
        "api/v1/docs/swagger/",
        SpectacularSwaggerView.as_view(
            url_name="schema", permission_classes=[], authentication_classes=[]
        ),
        name="api-docs-swagger",
    ),
    path("api/v1/", include("core.urls")),
    path("api/v1/", include("catalog.urls")),
    path("api/v1/", include("seeding.urls")),
    path("api/v1/", include("inspections.urls")),
    path("api/v1/", include("leases.urls")),
    path("api/v1/", include("console.urls")),
]
