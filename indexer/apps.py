from __future__ import annotations

from django.apps import AppConfig


class IndexerConfig(AppConfig):
    name = "indexer"
    verbose_name = "Indexer"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            pgarrays,  # noqa: F401  (registers its dumpers before any connection opens)
        )
        from .api import schema  # noqa: F401  (the node token's OpenAPI security scheme)
