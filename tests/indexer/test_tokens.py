"""Node tokens: issued and rotated by the service and the command, stored only as
digests; nodes are disabled, never deleted."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from core.tokens import hash_token
from indexer.models import Node
from indexer.services import issue_token
from tests.support.factories import NodeFactory
from tests.support.nodes import NodeClient

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r"^sn_[A-Za-z0-9_-]{32}$")


def test_a_token_is_stored_only_as_its_sha256_digest():
    node, token, created = issue_token("seed-1")
    assert created
    assert TOKEN.match(token)
    node.refresh_from_db()
    assert node.token_hash == hash_token(token)
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM seed_node")
        assert token not in json.dumps([list(map(str, row)) for row in cursor.fetchall()])


def test_rotating_a_token_invalidates_the_old_one_and_re_enables_the_node():
    node, old, _ = issue_token("seed-1")
    Node.objects.filter(id=node.id).update(disabled=True)
    again, new, created = issue_token("seed-1")
    assert not created and again.id == node.id and new != old
    assert not Node.objects.get(id=node.id).disabled
    node.token = old
    assert NodeClient(node).post("/api/v1/ranges/lease").status_code == 401
    node.token = new
    assert NodeClient(node).post("/api/v1/ranges/lease").status_code == 200


def test_issue_token_command_prints_a_working_token():
    out, err = StringIO(), StringIO()
    call_command("issue_token", "seed-cli", stdout=out, stderr=err)
    token = out.getvalue().strip()
    assert TOKEN.match(token)
    assert "shown once" in err.getvalue()
    node = Node.objects.get(name="seed-cli")
    assert node.token_hash == hash_token(token)


def test_nodes_are_disabled_not_deleted_and_their_page_hides_the_token_hash(admin_client):
    node = NodeFactory()
    page = admin_client.get(f"/admin/indexer/node/{node.id}/change/").content.decode()
    assert node.token_hash not in page
    assert admin_client.get(f"/admin/indexer/node/{node.id}/delete/").status_code == 403
    listing = admin_client.get("/admin/indexer/node/").content.decode()
    assert "delete_selected" not in listing
    assert Node.objects.filter(id=node.id).exists()
