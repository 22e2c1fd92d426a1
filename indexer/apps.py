from __future__ import annotations

from django.apps import AppConfig


class IndexerConfig(AppConfig):
    name = "indexer"
    verbose_name = "Indexer"

    def ready(self) -> None:
        from . import token_schema  # noqa: F401  (the node token's OpenAPI security scheme)
