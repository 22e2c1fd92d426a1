from __future__ import annotations

from django.urls import path

from . import api

urlpatterns = [
    path("files", api.FileListView.as_view(), name="catalog-files"),
    path("files/<int:file_id>", api.FileDetailView.as_view(), name="catalog-file"),
    path("files/<int:file_id>/nzb", api.FileNzbView.as_view(), name="catalog-file-nzb"),
    path(
        "files/<int:file_id>/release/nzb",
        api.ReleaseNzbView.as_view(),
        name="catalog-release-nzb",
    ),
    path("releases", api.ReleaseListView.as_view(), name="catalog-releases"),
    path("releases/<int:release_id>", api.ReleaseDetailView.as_view(), name="catalog-release"),
    path(
        "releases/<int:release_id>/nzb",
        api.ReleaseByIdNzbView.as_view(),
        name="catalog-release-by-id-nzb",
    ),
]
