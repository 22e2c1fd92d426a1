"""Nothing a client sends produces a 500: the API fuzzed from its own OpenAPI schema.

Schemathesis generates requests for every operation in /api/v1/schema/ (valid
ones and, mostly, malformed ones) and sends them through the WSGI app with a
real node token against the test database. Every answer must be a 2xx or a
4xx/503 in the contract's error shape, never a server error, and its body must
match what the schema documents for its status (the output serializers).
"""

from __future__ import annotations

import gzip

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from coordinator.wsgi import application
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", application)


@schemathesis.serializer("application/gzip")
def gzip_body(ctx: object, value: object) -> bytes:
    """Snapshot uploads: any generated value, gzipped (or raw bytes as they come)."""
    raw = value if isinstance(value, bytes) else repr(value).encode()
    return gzip.compress(raw)


@pytest.fixture
def in_test_transaction():
    """Keep the test's connection across WSGI calls, as Django's test client does.

    Requests here do not go through django.test.Client, which disconnects
    close_old_connections; without that the end of each request would close
    the connection that holds the test's transaction.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def node_token(db, in_test_transaction, settings, tmp_path):
    settings.SNAPSHOT_DIR = tmp_path
    node = NodeFactory()
    # Something for the generated ids to hit now and then.
    SeedRangeFactory(group=GroupFactory(name="alt.binaries.fuzz"), start_id=1, end_id=100)
    return node.token


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_request_produces_a_server_error_and_answers_match_the_schema(case, node_token):
    response = case.call(headers={"Authorization": f"Bearer {node_token}"})
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error", "detail"}, body
        assert body["detail"]
