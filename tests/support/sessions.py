"""A database session beside Django's, for tests that hurt Django's (terminate, lock)."""

from __future__ import annotations

from typing import Any

import psycopg
from django.db import connections


def side_session() -> psycopg.Connection[Any]:
    """A session of its own on the test database (not Django's, which the request uses)."""
    wrapper = connections.create_connection("default")
    session = wrapper.get_new_connection(wrapper.get_connection_params())
    session.autocommit = True
    return session  # type: ignore[no-any-return]
