"""The audit log: operator actions leave an entry with who, what and how many."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from indexer.models import AuditEntry, Node
from leases.models import GroupLane
from seeding.models import SeedRange
from tests.support.factories import GroupFactory, GroupLaneFactory, NodeFactory, SeedRangeFactory

pytestmark = pytest.mark.django_db


def last() -> AuditEntry:
    return AuditEntry.objects.order_by("-id").first()


def act(admin_client, url, action, ids, **extra):
    data = {"action": action, "_selected_action": ids, **extra}
    asked = admin_client.post(url, data)
    assert asked.status_code == 200 and b'name="confirmed"' in asked.content  # it asks first
    assert not AuditEntry.objects.exists()  # and asking does nothing
    return admin_client.post(url, {**data, "confirmed": "yes"}, follow=True)


def test_range_actions_confirm_then_report_and_log_a_count(admin_client, admin_user):
    ranges = [SeedRangeFactory() for _ in range(3)]
    ids = [r.id for r in ranges]
    url = "/admin/seeding/seedrange/"
    done = act(admin_client, url, "mark_failed", ids)
    assert "Marked 3 range(s) failed." in done.content.decode()
    entry = last()
    assert (entry.action, entry.count, entry.user, entry.actor) == (
        "failed",
        3,
        admin_user,
        admin_user.username,
    )
    assert sorted(entry.detail["ids"]) == ids
    admin_client.post(url, {"action": "requeue", "_selected_action": ids, "confirmed": "yes"})
    assert (last().action, last().count) == ("requeued", 3)
    admin_client.post(
        url,
        {"action": "change_priority", "_selected_action": ids, "confirmed": "yes", "priority": 7},
    )
    assert (last().action, last().count, last().detail["priority"]) == ("reprioritized", 3, 7)
    assert set(SeedRange.objects.values_list("priority", flat=True)) == {7}


def test_node_actions_are_logged(admin_client):
    node = NodeFactory(name="seed-audit")
    url = "/admin/indexer/node/"
    data = {"_selected_action": [node.id], "confirmed": "yes"}
    admin_client.post(url, {"action": "disable_nodes", **data})
    assert (last().action, last().count) == ("nodes disabled", 1)
    admin_client.post(url, {"action": "enable_nodes", **data})
    assert (last().action, last().count) == ("nodes enabled", 1)
    page = admin_client.post(url, {"action": "issue_tokens", **data})
    assert "Rotated 1 token(s)." in page.content.decode()
    entry = last()
    assert (entry.action, entry.detail["node"]) == ("token rotated", "seed-audit")
    token = page.context["issued"][0][1]
    assert token not in str(entry.detail)


def test_issuing_a_token_in_the_admin_and_from_the_command_line(admin_client, admin_user):
    admin_client.post("/admin/indexer/node/issue/", {"name": "seed-new"})
    assert (last().action, last().user) == ("token issued", admin_user)
    call_command("issue_token", "seed-cli", stdout=open("/dev/null", "w"))
    assert (last().action, last().user, last().actor) == ("token issued", None, "manage.py")
    assert Node.objects.filter(name="seed-cli").exists()


def test_force_release_is_logged(admin_client):
    group = GroupFactory()
    node = NodeFactory()
    lane = GroupLaneFactory(group=group, lane="history", node=node, epoch=1)
    GroupLane.objects.filter(id=lane.id).update(heartbeat_at="2030-01-01T00:00:00Z")
    done = admin_client.post(
        "/admin/leases/grouplane/",
        {"action": "force_release", "_selected_action": [lane.id], "confirmed": "yes"},
        follow=True,
    )
    assert "Released 1 lane(s)." in done.content.decode()
    assert (last().action, last().count) == ("lease force-released", 1)


def test_publishing_rules_is_logged(admin_client):
    from catalog.rulesets import current_rules
    from catalog.services import publish_rules

    rules = current_rules().to_dict()
    rules.pop("version")
    publish_rules(rules, note="audited")
    assert (last().action, last().detail["note"]) == ("rule set published", "audited")


def test_the_audit_log_is_read_only(admin_client):
    SeedRangeFactory()
    from seeding.services import fail_ranges

    fail_ranges(SeedRange.objects.values_list("id", flat=True))
    entry = last()
    listing = admin_client.get("/admin/indexer/auditentry/")
    assert listing.status_code == 200 and "failed" in listing.content.decode()
    assert admin_client.get("/admin/indexer/auditentry/add/").status_code == 403
    assert admin_client.get(f"/admin/indexer/auditentry/{entry.id}/delete/").status_code == 403
    view = admin_client.get(f"/admin/indexer/auditentry/{entry.id}/change/")
    assert view.status_code == 200 and 'name="_save"' not in view.content.decode()
