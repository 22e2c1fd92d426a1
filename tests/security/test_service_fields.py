"""Fields whose change must go through a service are read-only on their change forms.

Disabling a node ends its leases and writes the audit entry
(`services.set_nodes_disabled`); disabling an API key writes the audit entry.
A saved change form would flip the flag and do neither, so only the list's
actions change them; a token's or key's digest is never on a form at all.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from indexer.models import AuditEntry, Node
from newznab.models import ApiKey
from seeding.models import RangeStatus
from tests.support.factories import ApiKeyFactory, NodeFactory, SeedRangeFactory
from tests.support.staff import staff_client

pytestmark = pytest.mark.django_db


def test_the_node_form_cannot_disable_a_node_so_its_leases_never_outlive_it():
    node = NodeFactory(name="seed-form")
    now = timezone.now()
    held = SeedRangeFactory(
        status=RangeStatus.LEASED, node=node, epoch=1, leased_at=now, heartbeat_at=now
    )
    client = staff_client("ops", ["indexer.view_node", "indexer.change_node"])
    url = f"/admin/indexer/node/{node.id}/change/"
    assert 'name="disabled"' not in client.get(url).content.decode()
    client.post(url, {"disabled": "on", "_save": "Save"})
    node.refresh_from_db()
    held.refresh_from_db()
    assert not node.disabled
    assert (held.status, held.node_id) == (RangeStatus.LEASED, node.id)
    assert not AuditEntry.objects.exists()


def test_the_list_action_disables_a_node_and_ends_its_leases():
    node = NodeFactory(name="seed-action")
    now = timezone.now()
    held = SeedRangeFactory(
        status=RangeStatus.LEASED, node=node, epoch=1, leased_at=now, heartbeat_at=now
    )
    client = staff_client("ops", ["indexer.view_node", "indexer.change_node"])
    chosen = {"action": "disable_nodes", "_selected_action": [node.id], "confirmed": "yes"}
    assert client.post("/admin/indexer/node/", chosen).status_code == 302
    held.refresh_from_db()
    assert Node.objects.get(id=node.id).disabled
    assert held.status == RangeStatus.QUEUED and held.node_id is None
    assert AuditEntry.objects.filter(action="nodes disabled").count() == 1


def test_the_api_key_form_cannot_disable_a_key():
    key = ApiKeyFactory(name="form-key", key_hash="c" * 64)
    client = staff_client("ops", ["newznab.view_apikey", "newznab.change_apikey"])
    url = f"/admin/newznab/apikey/{key.id}/change/"
    page = client.get(url).content.decode()
    assert 'name="disabled"' not in page and "c" * 64 not in page
    client.post(url, {"disabled": "on", "rate_limit": "5", "_save": "Save"})
    assert not ApiKey.objects.get(id=key.id).disabled
