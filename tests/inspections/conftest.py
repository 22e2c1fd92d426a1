"""Obfuscated and named releases stored in the catalog, and inspections planned for them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from catalog.models import Release
from inspections import planning
from inspections.models import Inspection
from tests.support.factories import GroupFactory
from tests.support.fixtures import inn_server  # noqa: F401  (fixture)
from tests.support.releases import store_fragments
from tests.support.reports import report


def obfuscated_files(stem: str, date: int, *, rars: int = 3, **kw: Any) -> list[Any]:
    """An obfuscated post: rar volumes, an index par2 (small), a par2 volume, a 3-segment nfo."""
    count = rars + 3
    files = [
        report(f"{stem}.part{i:02d}.rar", index=i, count=count, date=date + i, size=700_000, **kw)
        for i in range(1, rars + 1)
    ]
    files.append(report(f"{stem}.par2", parts=[1], total=1, index=rars + 1, count=count,
                        date=date, size=4_000, **kw))  # fmt: skip
    files.append(report(f"{stem}.vol00+01.par2", index=rars + 2, count=count, date=date,
                        size=300_000, **kw))  # fmt: skip
    files.append(report(f"{stem}.nfo", parts=[1, 2, 3], total=3, index=count, count=count,
                        date=date, size=30_000, **kw))  # fmt: skip
    return files


@pytest.fixture
def group():
    return GroupFactory(name="alt.binaries.inspect")


@pytest.fixture
def store(group) -> Callable[..., Release]:
    """Store an obfuscated (or any) post; its release."""

    def make(stem: str = "a8f7d6e5c4b3", date: int = 1_700_000_000, **kw: Any) -> Release:
        store_fragments(group, obfuscated_files(stem, date, **kw))
        return Release.objects.get(name=stem)

    return make


@pytest.fixture
def planned(store) -> Callable[..., Inspection]:
    """A release stored and its inspection planned."""

    def make(stem: str = "a8f7d6e5c4b3", date: int = 1_700_000_000, **kw: Any) -> Inspection:
        release = store(stem, date, **kw)
        planning.plan_all()
        return Inspection.objects.get(release=release)

    return make


@pytest.fixture
def backdate_inspection() -> Callable[[int, int], None]:
    def move(inspection_id: int, seconds: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE inspection SET heartbeat_at = now() - make_interval(secs => %s)"
                " WHERE id = %s",
                [seconds, inspection_id],
            )

    return move
