"""Every admin page opens: from the index, each model's list, its add page where
there is one, and the change page of its first row, clicked through in Chromium."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.admin_actions import world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The lists the index must link to: the catalog's under /admin/catalog/ now.
EXPECTED = {
    "/admin/indexer/group/",
    "/admin/indexer/node/",
    "/admin/indexer/auditentry/",
    "/admin/catalog/catalogfile/",
    "/admin/catalog/release/",
    "/admin/catalog/rulesetversion/",
    "/admin/seeding/seedrange/",
    "/admin/leases/grouplane/",
    "/admin/newznab/apikey/",
}


def hrefs(page: Any, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "links => links.map(a => a.getAttribute('href'))")


def opens(page: Any, path: str) -> None:
    response = page.goto(path)
    assert response is not None and response.status == 200, (path, response and response.status)
    assert "Server Error" not in page.title(), path


def test_every_admin_page_opens_from_the_index(page: Any) -> None:
    world()  # one row of each model, so each list has a change page to open
    page.goto("/admin/")
    lists = sorted(set(hrefs(page, "#content-main table th a, #content-main table td a")))
    changelists = [href for href in lists if href.count("/") == 4]
    assert EXPECTED <= set(changelists)
    assert {href for href in lists if href.endswith("/add/")} <= {
        f"{href}add/" for href in changelists
    }
    opened = []
    for href in lists:
        opens(page, href)
        opened.append(href)
        if href in changelists:
            rows = hrefs(page, "#result_list tbody tr th a, #result_list tbody tr td a")
            change = next((row for row in rows if row.endswith("/change/")), None)
            if change is not None:
                opens(page, change)
                opened.append(change)
    opens(page, "/admin/dashboard/")
    assert any("/admin/catalog/catalogfile/" in href and "change" in href for href in opened)
    assert len(opened) > len(changelists)


def test_the_release_list_sorts_by_every_column_and_filters(page: Any) -> None:
    """Each sortable header of the release list, clicked both ways, and each choice of
    its kind, resolution and category filters opens a list (never an error page)."""
    world()
    opens(page, "/admin/catalog/release/")
    headers = hrefs(page, "#result_list thead th.sortable div.text a")
    assert len(headers) >= 8  # name, category, episode, size, files, completion, groups, posted
    for href in headers:
        opens(page, f"/admin/catalog/release/{href}")
        assert page.locator("#result_list tbody tr").count() == 1
        again = page.locator("#result_list thead th.sorted div.text a").first.get_attribute("href")
        opens(page, f"/admin/catalog/release/{again}")
    for title in ("kind", "resolution", "category"):
        choices = hrefs(page, f"#changelist-filter details[data-filter-title='{title}'] li a")
        assert len(choices) > 3, title
        for href in choices:
            opens(page, f"/admin/catalog/release/{href}")
