from __future__ import annotations

from django.urls import path

from . import api

# (route, view, name): the catalog API's routes, one a row.
ROUTES = (
    ("files", api.FileListView, "catalog-files"),
    ("files/<int:file_id>", api.FileDetailView, "catalog-file"),
    ("files/<int:file_id>/nzb", api.FileNzbView, "catalog-file-nzb"),
    ("files/<int:file_id>/release/nzb", api.ReleaseNzbView, "catalog-release-nzb"),
    ("releases", api.ReleaseListView, "catalog-releases"),
    ("releases/<int:release_id>", api.ReleaseDetailView, "catalog-release"),
    ("releases/<int:release_id>/nzb", api.ReleaseByIdNzbView, "catalog-release-by-id-nzb"),
)

urlpatterns = [path(route, view.as_view(), name=name) for route, view, name in ROUTES]
