"""How the OpenAPI schema describes the API's authentication.

drf-spectacular knows DRF's own authenticators; this tells it that a node
token is an HTTP bearer token (without it, every view warns drf_spectacular.W001
and the schema names no security scheme).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class NodeTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "indexer.authentication.NodeTokenAuthentication"
    name = "nodeToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A node token an operator issued (sn_…): "
            "`Authorization: Bearer <token>`.",
        }
