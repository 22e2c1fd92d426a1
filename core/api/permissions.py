"""Who may call what: nodes for the protocol, nodes or staff for reads.

A node that indexer/authentication.py admitted is a `NodeIdentity`. A staff
session reads only what its Django permissions let it see in the admin: each
read names, in `staff_permissions`, the view permissions of the admin pages
that show the same rows (docs/security.md, "Staff: permissions").
The admin shows a model's rows to a login holding its view *or* its change
permission (`ModelAdmin.has_view_permission`), so a read asks the same:
`can_view`. A node token reads every one of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rest_framework.permissions import BasePermission


@dataclass(frozen=True)
class NodeIdentity:
    """request.user for a node: the node's id and name, nothing to mutate."""

    id: int
    name: str
    is_authenticated: bool = True
    is_staff: bool = False
    is_active: bool = True

    def __str__(self) -> str:
        return self.name


def can_view(user: Any, permission: str) -> bool:
    """Whether `user` sees the rows of an admin page that asks for `permission`
    ("app.view_model"): by it, or by the model's change permission, as the admin does."""
    app_label, _, codename = permission.partition(".")
    change = f"{app_label}.change_{codename.removeprefix('view_')}"
    return bool(user.has_perm(permission) or user.has_perm(change))


def views_missing(user: Any, permissions: Iterable[str]) -> list[str]:
    """The view permissions of `permissions` that `user` holds neither as view nor as change."""
    return [permission for permission in permissions if not can_view(user, permission)]


class IsNode(BasePermission):
    message = "This call needs a node token."

    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.user, NodeIdentity)


class IsNodeOrStaff(BasePermission):
    """A node, or an active staff session that can view (`can_view`) every permission
    the view names in `staff_permissions`; a view that names none is for nodes alone."""

    message = "This call needs a node token or a staff login."

    def has_permission(self, request: Any, view: Any) -> bool:
        user = request.user
        if isinstance(user, NodeIdentity):
            return True
        if not (getattr(user, "is_active", False) and getattr(user, "is_staff", False)):
            return False
        needed = getattr(view, "staff_permissions", None)
        if not needed:
            self.message = "This call needs a node token."
            return False
        missing = views_missing(user, needed)
        if missing:
            # DRF makes a permission per request: the message is this request's alone.
            self.message = (
                f"Your login lacks the permission {', '.join(missing)} (or the matching "
                "change_ one) that this read needs (the admin asks the same to show these "
                "rows); ask an administrator for it."
            )
            return False
        return True
