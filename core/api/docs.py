"""A docs page for the node API, rendered on the server from the OpenAPI schema.

No JavaScript and no CDN: coordinators often run where browsers cannot reach
the internet, and the page must still work.
"""

from __future__ import annotations

import functools
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View
from drf_spectacular.generators import SchemaGenerator


def _operations(schema: dict[str, Any]) -> list[dict[str, Any]]:
    components = schema.get("components", {}).get("schemas", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict) and "$ref" in node:
            return components.get(node["$ref"].rsplit("/", 1)[-1], {})
        return node

    def fields(node: Any) -> list[dict[str, Any]]:
        node = resolve(node)
        required = set(node.get("required", []))
        out = []
        for name, prop in node.get("properties", {}).items():
            prop = resolve(prop)
            out.append(
                {
                    "name": name,
                    "type": prop.get("type", "object"),
                    "required": name in required,
                    "description": prop.get("description", ""),
                }
            )
        return out

    operations = []
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            body = (
                op.get("requestBody", {})
                .get("content", {})
                .get("application/json", {})
                .get("schema")
            )
            responses = []
            for status, response in op.get("responses", {}).items():
                content: dict[str, Any] = response.get("content", {})
                first: dict[str, Any] = next(iter(content.values()), {})
                schema_node = first.get("schema")
                responses.append(
                    {
                        "status": status,
                        "description": response.get("description", ""),
                        "fields": fields(schema_node) if schema_node else [],
                    }
                )
            operations.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary", ""),
                    "description": op.get("description", ""),
                    "parameters": op.get("parameters", []),
                    "request": fields(body) if body else [],
                    "responses": responses,
                }
            )
    return operations


@functools.cache
def docs_context() -> dict[str, Any]:
    """The page's data, built from the schema once per process: the schema only
    changes with the code, and building it takes a good part of a second."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {"info": schema.get("info", {}), "operations": _operations(schema)}


def forget_docs() -> None:
    """Build the page again on the next request (tests)."""
    docs_context.cache_clear()


class ApiDocsView(View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "api/docs.html", docs_context())
