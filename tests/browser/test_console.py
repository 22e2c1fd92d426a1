"""The operators' console in a real browser: tokens, planning, the dashboard, lane release."""

from __future__ import annotations

import json
from typing import Any

import pytest

from indexer.models import Node
from seeding import services
from seeding.models import SeedRange
from tests.support.factories import GroupFactory, GroupLaneFactory, NodeFactory
from tests.support.screenshots import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_token_is_shown_once(page: Any) -> None:
    page.goto("/admin/indexer/node/issue/")
    page.fill("#id_name", "seed-browser-1")
    page.click("input[type=submit]")
    token = page.locator("code.issued-token").inner_text()
    assert token.startswith("sn_")
    node = Node.objects.get(name="seed-browser-1")
    shot(page, "token-issued")
    # Opening the page again (and the node's own pages) never shows it again.
    page.goto(page.url)
    assert token not in page.content()
    page.goto(f"/admin/indexer/node/{node.id}/change/")
    assert token not in page.content()
    page.reload()
    assert token not in page.content()


def test_plan_ranges_with_a_preview(page: Any, news_group: Any) -> None:
    group = news_group("alt.binaries.browser", 1, 10_000)
    page.goto("/admin/indexer/group/plan/")
    page.select_option("#id_groups", [str(group.id)])
    page.fill("#id_size", "2500")
    page.fill("#id_priority", "40")
    page.click("input[value='Preview the plan']")
    page.wait_for_selector("text=Preview (nothing is written yet)")
    assert SeedRange.objects.count() == 0
    shot(page, "plan-preview")
    page.click("input[value='Plan these ranges']")
    page.wait_for_url("**/admin/seeding/seedrange/**")
    assert "Planned 4 ranges" in page.content()
    assert SeedRange.objects.filter(group=group, priority=40).count() == 4


def coverage_of(page: Any, name: str) -> tuple[str, str]:
    svg = page.locator(f'svg[aria-label="coverage of {name}"]')
    return svg.get_attribute("data-bins"), svg.get_attribute("data-resume")


def test_the_coverage_map_changes_after_a_batch(page: Any, live_server: Any) -> None:
    group = GroupFactory(name="alt.binaries.watched")
    services.create_ranges(group, [(1, 10_000), (10_001, 20_000)])
    node = NodeFactory()
    page.goto("/admin/dashboard/")
    before = coverage_of(page, group.name)
    assert set(before[0].split(",")) == {"queued"}
    shot(page, "dashboard-before")

    api = page.context.request
    auth = {"Authorization": f"Bearer {node.token}", "Content-Type": "application/json"}
    lease = api.post(f"{live_server.url}/api/v1/ranges/lease", headers=auth).json()["lease"]
    body = {"epoch": lease["epoch"], "next": lease["start"] + 6_000, "headers": 5_900}
    answer = api.post(
        f"{live_server.url}/api/v1/ranges/{lease['id']}/batch", headers=auth, data=json.dumps(body)
    )
    assert answer.status == 200, answer.text()

    page.reload()
    after = coverage_of(page, group.name)
    assert after != before
    assert {"reached", "leased"} <= set(after[0].split(","))
    assert after[1] == str(lease["start"] + 6_000)
    assert "5,900" in page.locator("#throughput").inner_html() or "5,900" in page.content()
    shot(page, "dashboard-after")


def test_force_release_a_group_lease(page: Any) -> None:
    group = GroupFactory(name="alt.binaries.held")
    holder = NodeFactory(name="seed-holder")
    lane = GroupLaneFactory(group=group, lane="history", node=holder, epoch=3)
    page.goto("/admin/leases/grouplane/")
    page.check(f"input[name=_selected_action][value='{lane.id}']")
    page.select_option("select[name=action]", "force_release")
    page.click("button[name=index]")
    page.wait_for_selector("text=Take these lanes from their holders?")
    shot(page, "force-release-confirm")
    page.click("input[value='Yes, do it']")
    page.wait_for_selector("text=Released 1 lane(s).")
    lane.refresh_from_db()
    assert lane.node_id is None and lane.epoch == 4
