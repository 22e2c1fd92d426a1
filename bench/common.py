"""Helpers several benchmarks share: their sizes' options, SQL on Django's connection,
groups to load, a logged-in staff client."""

from __future__ import annotations

import argparse
from typing import Any

LOAD_GROUPS = (
    "INSERT INTO news_group (name, active, priority, created_at)"
    " SELECT %(prefix)s || g, true, 100, now() FROM generate_series(1, %(count)s) AS g"
)


def sql(statement: str, params: Any = None) -> Any:
    """One statement on Django's connection; its rows when it returns any."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def load_groups(prefix: str, count: int) -> None:
    """`count` active groups of priority 100, named `prefix` followed by 1..count."""
    sql(LOAD_GROUPS, {"prefix": prefix, "count": count})


def size_parser(doc: str, **sizes: int) -> argparse.ArgumentParser:
    """A bench's options: the first line of its docstring as description, then one
    integer option a size (`range_size=10_000` is --range-size, 10,000 by default)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in sizes.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    return parser


def staff_client() -> Any:
    """A Django test client logged in as the bench's superuser (created on first use)."""
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    return client
