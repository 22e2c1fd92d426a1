"""Every admin action, and one object per model for them to act on: the security
tests of the actions and the browser tests share them."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from catalog.models import CatalogFile, Release
from inspections.models import Inspection
from tests.support.factories import (
    ApiKeyFactory,
    GroupFactory,
    GroupLaneFactory,
    NodeFactory,
    SeedRangeFactory,
)
from tests.support.reports import report, store

CONFIRMED = {"confirmed": "yes"}


@dataclass(frozen=True)
class Act:
    model: str  # app_label.model_name
    action: str
    permission: str  # what the action declares: view, change, delete (or its own: reinspect)
    confirm: dict[str, str] | None = field(default_factory=lambda: dict(CONFIRMED))
    page: int = 200  # the confirmation page, for a user holding the permission
    done: int = 302  # the confirming POST (302: back to the list with a message)
    target: str = ""  # which object of the world is selected (default: the model's)
    changes: bool = True


ACTIONS = [
    Act("indexer.node", "issue_tokens", "change", done=200),  # the page showing the tokens
    Act("indexer.node", "disable_nodes", "change"),
    Act("indexer.node", "enable_nodes", "change", target="disabled_node"),
    Act("indexer.group", "plan_selected", "change", confirm=None, page=302, changes=False),
    # A group with nothing under it: deleting one with ranges needs their permissions too.
    Act("indexer.group", "delete_selected", "delete", confirm={"post": "yes"}, target="bare_group"),
    Act("seeding.seedrange", "requeue", "change"),
    Act("seeding.seedrange", "mark_failed", "change"),
    Act("seeding.seedrange", "change_priority", "change", confirm={**CONFIRMED, "priority": "7"}),
    Act("seeding.seedrange", "delete_selected", "delete", confirm={"post": "yes"}),
    Act("leases.grouplane", "force_release", "change"),
    Act("inspections.inspection", "requeue", "change"),
    Act("inspections.inspection", "mark_failed", "change"),
    Act("catalog.catalogfile", "export_nzb", "view", done=200, changes=False),
    Act("catalog.catalogfile", "delete_files", "delete"),
    # The inspections app's queue plans the release's inspection.
    Act("catalog.release", "reinspect", "reinspect"),
    Act("newznab.apikey", "rotate_keys", "change", done=200),  # the page showing the keys
    Act("newznab.apikey", "disable_keys", "change"),
    Act("newznab.apikey", "enable_keys", "change", target="disabled_key"),
    Act("auth.user", "delete_selected", "delete", confirm={"post": "yes"}),
    Act("auth.group", "delete_selected", "delete", confirm={"post": "yes"}),
]


def world() -> dict[str, int]:
    """One object per model an action touches, each in a state the action changes."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group as StaffGroup

    group = GroupFactory(name="alt.binaries.world")
    node = NodeFactory(name="world-node")
    now = timezone.now()
    leased = SeedRangeFactory(
        group=group,
        status="leased",
        node=node,
        epoch=1,
        attempts=1,
        leased_at=now,
        heartbeat_at=now,
    )
    lane = GroupLaneFactory(
        group=group, lane="history", node=node, epoch=1, leased_at=now, heartbeat_at=now
    )
    store(group, report("world.rar", [1], 1))
    inspection = Inspection.objects.create(
        release=Release.objects.get(),
        group=group,
        posted=now,
        planned_at=now,
        status="leased",
        node=node,
        epoch=1,
        attempts=1,
        leased_at=now,
        heartbeat_at=now,
    )
    return {
        "indexer.node": node.pk,
        "disabled_node": NodeFactory(name="world-off", disabled=True).pk,
        "indexer.group": group.pk,
        "bare_group": GroupFactory(name="alt.binaries.bare").pk,
        "seeding.seedrange": leased.pk,
        "leases.grouplane": lane.pk,
        "inspections.inspection": inspection.pk,
        "catalog.catalogfile": CatalogFile.objects.get().pk,
        "catalog.release": Release.objects.get().pk,
        "newznab.apikey": ApiKeyFactory(name="world-key", key_hash="a" * 64).pk,
        "disabled_key": ApiKeyFactory(name="off-key", key_hash="b" * 64, disabled=True).pk,
        "auth.user": get_user_model().objects.create_user("bystander").pk,
        "auth.group": StaffGroup.objects.create(name="bystanders").pk,
    }
