"""Headless Chromium (Debian's, at /usr/bin/chromium) driven by Playwright, against live_server.

Screenshots go to test-artifacts/ (gitignored). Without chromium the tests
fail and say how to install it: they are part of the normal suite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.news import news, news_group  # noqa: F401  (the in-repo NNTP server)
from tests.support.screenshots import ARTIFACTS

# Playwright's sync API keeps an event loop in this thread; the ORM calls the
# tests make between browser steps are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "console-test-password"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium. "
            "Run .ci/install-chromium as root (apt-get install chromium).",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def staff(transactional_db: Any) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_superuser("operator", "op@example.invalid", PASSWORD)


@pytest.fixture
def page(browser: Any, live_server: Any, staff: Any, request: Any) -> Iterator[Any]:
    """A logged-in page; a screenshot of its last state is kept under test-artifacts/."""
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/admin/login/")
    page.fill("#id_username", staff.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
