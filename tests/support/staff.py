"""Staff logins for the security tests: view-only, holding one permission, superuser."""

from __future__ import annotations

from django.contrib.auth.models import Permission
from django.test import Client


def staff_client(username: str, codenames: list[str], *, superuser: bool = False) -> Client:
    """A logged-in client for a staff user holding exactly these permission codenames
    ("app_label.codename"), or everything when superuser."""
    from django.contrib.auth import get_user_model

    users = get_user_model()
    user = users.objects.create_user(username=username, password="x", is_staff=True)
    if superuser:
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
    for label in codenames:
        app_label, codename = label.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    client = Client()
    client.force_login(user)
    return client


def view_permissions() -> list[str]:
    """Every view_* permission of the coordinator's apps: "view-only staff"."""
    apps = ("indexer", "catalog", "seeding", "inspections", "leases", "newznab", "console")
    return [
        f"{p.content_type.app_label}.{p.codename}"
        for p in Permission.objects.filter(
            codename__startswith="view_", content_type__app_label__in=apps
        ).select_related("content_type")
    ]
